// `GET /api/status`: the store's status, capture on or off and its progress, drift, snapshots
// and unclosed stage markers (see `statusView`); `?check=1` adds a check of the store for damage.

import { Hono } from "hono";
import { z } from "zod";
import { parseQuery, queryFlag } from "../_input.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { statusView } from "../_status.ts";

const query = z.object({ check: queryFlag.optional() });

/** The route: `?check=1` also checks the store for damage (`check` is null without it). */
export const statusApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/status", async (c) => {
    const { check } = parseQuery(c, query);
    return c.json(await statusView(svc, { check: check === true }));
  });
