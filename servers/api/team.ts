// `GET /api/team/search`: the dashboard's "team" scope, the search of `search --team` over the
// team database of `logbook push`, with the same filters plus `machine`; every hit says which
// machine it came from. The dashboard may connect only to loopback (`--allow-net=127.0.0.1`): a
// team database elsewhere needs that host added to the dashboard's permissions (docs/team.md).

import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv, Route } from "../_deps.ts";
import { badRequest } from "../_errors.ts";
import { parseQuery } from "../_input.ts";
import { searchTeamFor } from "../_team.ts";
import { searchQuery } from "./search.ts";

/** The query string of a team search: `searchInput`, `offset` and `machine`. */
export const teamQuery = searchQuery.extend({
  machine: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected a machine name").optional(),
});

/** The route. */
export const teamApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/team/search", async (c) => {
    const startedAt = Date.now();
    const { offset = 0, machine, session, ...input } = parseQuery(c, teamQuery, ["q"]);
    if (session !== undefined) throw badRequest("session", 'A team search takes no "session"');
    const result = await searchTeamFor(svc, input, {
      offset,
      startedAt,
      ...(machine ? { machine } : {}),
    });
    return c.json({
      hits: result.hits,
      mode: result.mode,
      note: result.note,
      suggestion: result.suggestion,
      forgiven: result.forgiven ?? null,
      offset,
      next: result.next,
    });
  });
