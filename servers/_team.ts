// The dashboard's way to the team database of `logbook push`: one connection per app, opened on
// the first team search (idle ones close), and the search of `search --team` through it.

import type { Sql } from "postgres";
import { resolveTeamSearch, type SearchInput } from "../lib/filters.ts";
import { connectTeam, teamError } from "../lib/team/db.ts";
import { teamSearch, type TeamSearchResult } from "../lib/team/search.ts";
import type { Services } from "./_deps.ts";
import { ApiError, searchQueryError } from "./_errors.ts";

const connections = new WeakMap<Services, Promise<Sql>>();

/** Whether a team database is configured. */
export function teamConfigured(svc: Services): boolean {
  return Boolean(svc.ctx.config.team?.url);
}

/** A team search with the filters of `search` plus `machine`; errors are API errors. */
export async function searchTeamFor(
  svc: Services,
  input: SearchInput,
  options: { offset?: number; machine?: string; startedAt?: number } = {},
): Promise<TeamSearchResult> {
  const url = svc.ctx.config.team?.url;
  if (!url) {
    throw new ApiError(
      404,
      "not_found",
      'No team database is configured: add "team": {"url": "postgres://…"} to the config, or ' +
        "set LOGBOOK_TEAM_URL",
    );
  }
  const resolved = resolveTeamSearch(input, svc.ctx);
  let sql = connections.get(svc);
  if (!sql) {
    sql = connectTeam(url, { idleSeconds: 60 });
    connections.set(svc, sql);
  }
  try {
    return await teamSearch(await sql, svc.redact, {
      ...resolved,
      forgive: resolved.forgive ?? "fallback",
      ...(options.offset ? { offset: options.offset } : {}),
      ...(options.machine ? { machine: options.machine } : {}),
      budgetMs: svc.searchBudgetMs,
      startedAt: options.startedAt ?? Date.now(),
    });
  } catch (err) {
    // As a local search: a query over a bound, or out of time, is the query to change.
    const bad = searchQueryError(err);
    if (bad) throw bad;
    connections.delete(svc);
    sql.then((broken) => broken.end({ timeout: 1 })).catch(() => {});
    throw new ApiError(503, "unavailable", teamError(err, url).message);
  }
}
