// The team side of `search --team` and `show --team`: the team database from the config (or
// LOGBOOK_TEAM_URL), searched or paged, each hit marked with its machine. Every string that came
// from a transcript passes the terminal filter; `--json` stays exact.

import type { Context } from "../lib/context.ts";
import { redactorFor } from "../lib/context.ts";
import { formatCount } from "../lib/format.ts";
import { join } from "../lib/path.ts";
import { connectTeam, safeUrl, teamError } from "../lib/team/db.ts";
import { findTeamConversation, type TeamHit, teamPage, teamSearch } from "../lib/team/search.ts";
import { connectQuick } from "../lib/team/wire.ts";
import { ConversationNotFoundError } from "../lib/store/conversations.ts";
import { SearchLimitError, type SearchOptions, SearchStoppedError } from "../lib/store/search.ts";
import { EXIT, UsageError } from "./_command.ts";
import { countLine } from "./_terminal/count_line.ts";
import { type Io, styler } from "./_terminal/io.ts";
import { safeJson } from "../lib/safe_json.ts";
import { safeText } from "../lib/safe_text.ts";

/** The team database's URL, or an error saying where to set it. */
export function teamUrl(ctx: Context): string {
  const url = ctx.config.team?.url;
  if (url) return url;
  throw new Error(
    `No team database is configured: add {"team": {"url": "postgres://user@host/db", ` +
      `"projects": ["~/src/app"], "machine": "laptop"}} to ${
        join(ctx.configDir, "config.json")
      }, or set LOGBOOK_TEAM_URL`,
  );
}

/** `search --team`: the same filters as a local search, plus `machine`, within the same budget. */
export async function searchTeam(
  ctx: Context,
  options: SearchOptions & { machine?: string },
  io: Io,
  json: boolean,
): Promise<number> {
  const url = teamUrl(ctx);
  const offset = options.offset ?? 0;
  // The small client where it can go (a person waits for this start), else the driver.
  let sql;
  try {
    sql = await connectQuick(url) ?? await connectTeam(url);
  } catch (err) {
    throw teamError(err, url);
  }
  try {
    let result;
    try {
      result = await teamSearch(sql, redactorFor(ctx), { ...options, offset });
    } catch (err) {
      // As a local search: a query over a bound, or out of time, is the query to change.
      if (err instanceof SearchLimitError || err instanceof SearchStoppedError) {
        throw new UsageError(err.message);
      }
      throw teamError(err, url);
    }
    if (result.note) io.err(`note: ${result.note}\n`);
    if (result.forgiven) io.err(`note: ${result.forgiven.note} (--exact for none)\n`);
    if (json) { for (const hit of result.hits) io.out(safeJson(hit) + "\n"); }
    else {
      for (const hit of result.hits) io.out(renderTeamHit(hit, io));
      if (result.hits.length) {
        io.out(
          countLine(
            result.hits.length,
            offset,
            { next: result.next, total: null },
            "hit",
            " in the team database",
          ),
        );
      } else {
        io.err(
          offset > 0
            ? `No matches after the first ${formatCount(offset)} in the team database ${
              safeUrl(url)
            }\n`
            : result.suggestion
            ? `No matches in the team database ${safeUrl(url)}; indexed words begin with it: ` +
              `try "${result.suggestion}"\n`
            : `No matches in the team database ${safeUrl(url)}\n`,
        );
      }
    }
    return result.hits.length ? EXIT.ok : EXIT.failure;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function renderTeamHit(hit: TeamHit, io: Io): string {
  const s = styler(io.color);
  const when = hit.timestamp ? hit.timestamp.slice(0, 16).replace("T", " ") : "-";
  const what = hit.role ? `${hit.kind}/${hit.role}` : hit.kind;
  const header = `${s.dim(when)}  ${s.yellow(safeText(hit.machine))}  ${safeText(hit.agent)}  ${
    safeText(hit.project ?? hit.cwd ?? "-")
  }  ${s.cyan(safeText(hit.conversation))}  ${s.dim(safeText(`${what} #${hit.record}`))}`;
  const title = hit.title
    ? `  ${s.bold(safeText(hit.title.replace(/\s+/g, " ").slice(0, 76)))}\n`
    : "";
  return `${header}\n${title}  ${safeText(hit.snippet)}\n\n`;
}

/** `show --team <id>`: a page of a pushed conversation. */
export async function showTeam(
  ctx: Context,
  id: string,
  options: { machine?: string; after?: number; limit?: number; json: boolean },
  io: Io,
): Promise<number> {
  const url = teamUrl(ctx);
  const sql = await connectTeam(url);
  try {
    try {
      // A short id, as every local command takes (`claude:f332cca8`), names the one it begins.
      const { key, machines } = await findTeamConversation(sql, id, options.machine);
      if (machines.length > 1) {
        throw new ConversationNotFoundError(
          `Conversation "${key}" was pushed from ${machines.length} machines (${
            machines.join(", ")
          }): name one with --machine`,
        );
      }
      const machine = machines[0]!;
      const redact = redactorFor(ctx);
      // Shown as a search hit shows it: through the gate.
      const shown = redact(key);
      const page = await teamPage(sql, redact, machine, key, {
        ...(options.after !== undefined ? { after: options.after } : {}),
        ...(options.limit ? { limit: options.limit } : {}),
      });
      if (!page) {
        io.err(`error: No conversation "${safeText(shown)}" in the team database\n`);
        return EXIT.failure;
      }
      if (options.json) {
        io.out(safeJson({ machine, conversation: shown, ...page }) + "\n");
        return EXIT.ok;
      }
      const s = styler(io.color);
      if (options.after === undefined) {
        io.out(
          `${s.bold(safeText(page.title ?? shown))}\n${
            s.dim(safeText(`${shown}  from ${machine}`))
          }\n\n`,
        );
      }
      for (const record of page.records) {
        if (record.kind === "meta" || !record.text.trim()) continue;
        const who = record.kind === "message" ? (record.role ?? "message") : record.kind;
        io.out(
          `${s.dim(record.timestamp?.slice(11, 16) ?? "     ")} ${s.bold(safeText(who))}\n${
            safeText(record.text.trim(), { multiline: true })
          }\n\n`,
        );
      }
      if (page.next !== null) {
        io.err(
          `more: logbook show --team ${
            safeText(shown)
          } --machine ${machine} --after ${page.next}\n`,
        );
      }
      return EXIT.ok;
    } catch (err) {
      if (err instanceof ConversationNotFoundError || err instanceof RangeError) throw err;
      throw teamError(err, url);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
