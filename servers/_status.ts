// What the status page and `GET /api/status` show: logbook's status (lib/status.ts) plus the
// capture this dashboard started, through the gate.

import { gatherStatus, QuickChecks, type Status } from "../lib/status.ts";
import { OpenSteps } from "../lib/stage_markers_read.ts";
import type { DataPaths } from "../lib/paths.ts";
import type { RunView } from "./_capture.ts";
import type { Services } from "./_deps.ts";
import { redactDeep } from "./_redact.ts";

export { type ProgressView, progressView } from "../lib/status.ts";

/** The quick check of the store, looked at again only once its files change (every refresh asks). */
let checks: QuickChecks | null = null;
const quickChecks = (paths: DataPaths) =>
  checks?.root === paths.root ? checks : checks = new QuickChecks(paths);
/**
 * The open steps of the stage markers' log, read on from where the last refresh stopped. Kept in
 * memory only: every refresh logs a step, and saving them to `run/` each time (as `status` does)
 * would add a file written and synced to every refresh.
 */
let steps: OpenSteps | null = null;
const openSteps = (path: string) => steps?.path === path ? steps : steps = new OpenSteps(path);

/** The dashboard's status: the whole status, and the last capture started here. */
export type StatusView = Status & { capture: Status["capture"] & { run: RunView | null } };

/**
 * Gathers the status (the store part as stage `dashboard.status`); with `check`, the store is
 * also checked for damage, in a worker (it reads every page: seconds on a large store, which is
 * why it runs only when asked, not on every refresh of the page).
 */
export async function statusView(
  svc: Services,
  options: { check?: boolean } = {},
): Promise<StatusView> {
  const status = await gatherStatus(svc.ctx, {
    check: options.check === true,
    open: () => svc.openStore({ mustExist: true }),
    wrap: (fn) => svc.op.stageSync("dashboard.status", fn),
    running: svc.capture.running,
    quickChecks: quickChecks(svc.ctx.paths),
    openSteps,
    now: svc.now(),
  });
  const view: StatusView = { ...status, capture: { ...status.capture, run: svc.capture.current } };
  return redactDeep(view, svc.redact);
}
