// `POST /api/reindex`: starts a capture in the server process and answers at once, 202 with the
// run (its id and state) and the progress so far; `GET /api/status` follows it.

import { Hono } from "hono";
import { z } from "zod";
import { captureOffReason } from "../../lib/capture/switch.ts";
import type { RunView } from "../_capture.ts";
import type { AppEnv, Route, Services } from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseBody } from "../_input.ts";
import { redactDeep } from "../_redact.ts";

/** The body: `{"rebuild"?: boolean, "retry"?: boolean}` (both off by default). */
export const reindexBody = z.strictObject({
  rebuild: z.boolean().optional(),
  retry: z.boolean().optional(),
});

/**
 * Starts a capture unless one started here is still going (that one is returned). Throws a 409
 * when capture is switched off.
 */
export function startReindex(
  svc: Services,
  options: z.infer<typeof reindexBody> = {},
): { run: RunView; started: boolean } {
  const off = captureOffReason(svc.ctx);
  if (off) {
    throw new ApiError(409, "conflict", svc.redact(`Capture is switched off (${off})`));
  }
  return svc.op.stageSync("dashboard.reindex", () =>
    svc.capture.start({
      ...(options.rebuild ? { rebuild: true } : {}),
      ...(options.retry ? { retry: true } : {}),
    }));
}

/** The route. */
export const reindexApi: Route = (svc) =>
  new Hono<AppEnv>().post("/api/reindex", async (c) => {
    const body = await parseBody(c, reindexBody);
    const { run, started } = startReindex(svc, body);
    c.header("Location", "/api/status");
    return c.json(redactDeep({ started, run }, svc.redact), 202);
  });
