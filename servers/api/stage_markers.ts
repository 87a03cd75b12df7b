// `GET /api/stage-markers?unclosed=1&tail=N`: the last markers, or the steps that started and
// never finished, as `stage-markers --json` prints them (in one object).

import { Hono } from "hono";
import { z } from "zod";
import { stageMarkersLocation } from "../../lib/stage_markers.ts";
import { readMarkers, unclosed } from "../../lib/stage_markers_read.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { parseQuery, queryFlag, queryInt } from "../_input.ts";

const query = z.object({
  unclosed: queryFlag.optional(),
  tail: queryInt(1, 10_000).optional(),
});

/** Markers shown when `tail` is not given (as the command). */
const DEFAULT_TAIL = 20;

/** The route. */
export const stageMarkersApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/stage-markers", async (c) => {
    const { unclosed: open, tail } = parseQuery(c, query);
    const { path } = stageMarkersLocation(svc.ctx.env);
    if (open) {
      const steps = await unclosed(path, { now: svc.now() });
      return c.json({ unclosed: tail === undefined ? steps : steps.slice(-tail) });
    }
    return c.json({ markers: await readMarkers(path, { tail: tail ?? DEFAULT_TAIL }) });
  });
