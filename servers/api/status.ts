// `GET /api/status`: the store's status, capture on or off and its progress, drift, snapshots
// and unclosed stage markers (see `statusView`).

import { Hono } from "hono";
import type { AppEnv, Route } from "../_deps.ts";
import { statusView } from "../_status.ts";

/** The route. */
export const statusApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/status", async (c) => c.json(await statusView(svc)));
