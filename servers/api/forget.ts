// `POST /api/forget`: removes conversations from the store for good, as `forget` does, from a
// JSON body `{"ids"?, "project"?, "before"?, "dryRun"?}`.

import { Hono } from "hono";
import { z } from "zod";
import { projectOfUserPath } from "../../lib/paths.ts";
import { forget, type ForgetCriteria } from "../../lib/store/forget.ts";
import { parseWhen } from "../../lib/when.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { ApiError, badRequest } from "../_errors.ts";
import { conversationId, parseBody } from "../_input.ts";
import { redactDeep } from "../_redact.ts";

/** What to forget; criteria combine (every one given must hold). */
export const forgetBody = z.strictObject({
  ids: z.array(conversationId).min(1, "give at least one id").max(1000).optional(),
  /** A project directory (its canonical root is what conversations are matched by). */
  project: z.string().min(1).max(4096).optional(),
  /** ISO date or time, or 30d, 2w, …: conversations whose last record is older. */
  before: z.string().min(1).max(100).optional(),
  dryRun: z.boolean().optional(),
});

/** The route. */
export const forgetApi: Route = (svc) =>
  new Hono<AppEnv>().post("/api/forget", async (c) => {
    const body = await parseBody(c, forgetBody);
    const criteria: ForgetCriteria = {};
    if (body.ids) criteria.ids = body.ids;
    if (body.project !== undefined) {
      criteria.project = projectOfUserPath(body.project, svc.ctx.env).root;
    }
    if (body.before !== undefined) {
      try {
        criteria.before = parseWhen(body.before, svc.now());
      } catch (err) {
        throw badRequest("before", `Invalid value for "before": ${(err as Error).message}`);
      }
    }
    if (!criteria.ids && criteria.project === undefined && criteria.before === undefined) {
      throw badRequest("ids", 'Say what to forget: "ids", "project" or "before"');
    }
    if (svc.capture.running) {
      // Its batch transactions would keep this one waiting, and the server is one thread.
      throw new ApiError(409, "conflict", "A capture is running: forget once it has finished");
    }
    const result = withStore(
      svc,
      "forget",
      (store) =>
        forget(store, criteria, {
          dryRun: body.dryRun === true,
          now: svc.now(),
          redact: svc.redact,
          // Their words leave the text index after the answer (a minute at ten gigabytes).
          scrub: "later",
          // A scrub running in another process (`forget --finish`) waits while this one works.
          place: svc.ctx.paths,
        }),
    );
    if (!result.indexScrubbed) svc.scrub.start();
    return c.json(redactDeep(result, svc.redact));
  });
