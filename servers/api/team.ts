// `GET /api/team/search`: the dashboard's "team" scope, the search of `search --team` over the
// team database of `logbook push`, with the same filters plus `machine`; every hit says which
// machine it came from. The dashboard may connect only to loopback (`--allow-net=127.0.0.1`): a
// team database elsewhere needs that host added to the dashboard's permissions (README).

import { Hono } from "hono";
import { z } from "zod";
import type { Sql } from "postgres";
import { resolveTeamSearch, searchInput } from "../../lib/filters.ts";
import { connectTeam, teamError } from "../../lib/team/db.ts";
import { teamSearch } from "../../lib/team/search.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { ApiError, badRequest } from "../_errors.ts";
import { parseQuery, queryInt } from "../_input.ts";

const teamQuery = searchInput.extend({
  limit: queryInt(1, 1000).optional(),
  offset: queryInt(0, 5000).optional(),
  machine: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected a machine name").optional(),
});

/** The route; the connection is opened on the first team search and kept (idle ones close). */
export const teamApi: Route = (svc) => {
  let sql: Promise<Sql> | undefined;
  return new Hono<AppEnv>().get("/api/team/search", async (c) => {
    const url = svc.ctx.config.team?.url;
    if (!url) {
      throw new ApiError(
        404,
        "not_found",
        'No team database is configured: add "team": {"url": "postgres://…"} to the config, or ' +
          "set LOGBOOK_TEAM_URL",
      );
    }
    const { offset = 0, machine, session, ...input } = parseQuery(c, teamQuery, ["q"]);
    if (session !== undefined) throw badRequest("session", 'A team search takes no "session"');
    const options = resolveTeamSearch(input, svc.ctx);
    sql ??= connectTeam(url, { idleSeconds: 60 });
    try {
      const result = await teamSearch(await sql, svc.redact, {
        ...options,
        offset,
        ...(machine ? { machine } : {}),
      });
      return c.json({ hits: result.hits, mode: result.mode, offset });
    } catch (err) {
      sql = undefined;
      throw new ApiError(503, "unavailable", teamError(err, url).message);
    }
  });
};
