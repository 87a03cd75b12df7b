// Whether capture is switched on, and what the last capture run left for `status`: what status,
// the dashboard and the watcher ask without loading the capture engine and every adapter.

import { loadConfig } from "../config.ts";
import type { Context } from "../context.ts";
import { isOff } from "../env.ts";
import type { CaptureSummary } from "./summary.ts";

/** The result of the last capture run, kept in the store for `status` (see `recordRun`). */
export interface LastRun {
  at: number;
  /**
   * The command that ran it: `reindex`, `reindex --watch`, `start`, `dashboard`, `mirror`
   * (absent from a run an older logbook recorded).
   */
  by?: string;
  ok: boolean;
  summary?: CaptureSummary;
  error?: string;
}

/** Why capture is switched off, or null when it is on (`LOGBOOK_INGEST`, then config). */
export function captureOffReason(ctx: Context): string | null {
  const env = ctx.env.get("LOGBOOK_INGEST");
  if (env !== undefined && isOff(env)) return `LOGBOOK_INGEST=${env}`;
  if (!ctx.config.history.ingest) return 'config "history.ingest" is false';
  return null;
}

/**
 * Why capture is off right now, reading the config file again (so an edit takes effect without
 * a restart); a config being edited may be briefly invalid, and then the loaded one decides.
 */
export function captureOffNow(ctx: Context): string | null {
  try {
    const config = loadConfig({ env: ctx.env, configDir: ctx.configDir }).config;
    return captureOffReason({ ...ctx, config });
  } catch {
    return captureOffReason(ctx);
  }
}
