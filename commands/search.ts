#!/usr/bin/env -S deno run -R -W -E
// `search`: finds records across every captured conversation, ranked, with filters. Exit 0 with
// hits, 1 with none (as grep does), 2 for a usage error. Never writes to a source.

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError, wholeNumber } from "./_command.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { loadContext, openStore, redactorFor } from "../lib/context.ts";
import {
  describeIssue,
  FilterError,
  MAX_SEARCH_LIMIT,
  resolveSearch,
  searchInput,
} from "../lib/filters.ts";
import { homeDir } from "../lib/paths.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import {
  budgetMsFrom,
  search,
  type SearchHit,
  SearchLimitError,
  SearchStoppedError,
} from "../lib/store/search.ts";
import { markRanges } from "./_terminal/highlight.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "search",
  summary: "find records across every captured conversation",
  usage: "logbook search <query> [--project DIR|--all-projects] [--agent A] [--session ID] " +
    "[--kind K] [--role R] [--since WHEN] [--until WHEN] [--subagents|--no-subagents] " +
    "[--limit N] [--json]",
  options: {
    ...shared("project"),
    "all-projects": { type: "boolean" },
    agent: { type: "string" },
    session: { type: "string" },
    kind: { type: "string" },
    role: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    subagents: { type: "boolean" },
    "no-subagents": { type: "boolean" },
    limit: { type: "string" },
    ...shared("json"),
  },
  optionHelp: [
    ["--project DIR", "only this directory's project (`.` for the one you are in)"],
    ["--all-projects", "every project (the default)"],
    ["--agent A", "only claude, codex, opencode or logbook"],
    ["--session ID", "only this conversation (full id, native id or unique prefix)"],
    ["--kind K", "message, tool_call, tool_result, reasoning, summary, event or meta"],
    ["--role R", "user, assistant, system or developer"],
    ["--since WHEN", "at or after WHEN: ISO date/time, 30m, 12h, 7d, 2w, today, yesterday"],
    ["--until WHEN", "before WHEN (same forms)"],
    ["--no-subagents", "leave out subagent conversations (--subagents keeps them, the default)"],
    ["--limit N", "at most N hits (default 20)"],
    ["--json", "one JSON object per hit, one per line"],
  ],
  examples: ['logbook search "rotate credentials" --project . --since 7d'],
});

/** Runs `search` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  const startedAt = Date.now();
  return await run(spec, args, safeIo(io), ({ values, positionals }) => {
    if (values.project !== undefined && values["all-projects"]) {
      throw new UsageError('Options "--project" and "--all-projects" cannot be used together');
    }
    if (values.subagents && values["no-subagents"]) {
      throw new UsageError('Options "--subagents" and "--no-subagents" cannot be used together');
    }
    const parsed = searchInput.safeParse({
      q: positionals.join(" "),
      project: values.project,
      agent: values.agent,
      session: values.session,
      kind: values.kind,
      role: values.role,
      since: values.since,
      until: values.until,
      subagents: values["no-subagents"] ? false : values.subagents ? true : undefined,
      limit: wholeNumber(values.limit, "limit", { max: MAX_SEARCH_LIMIT }),
    });
    if (!parsed.success) {
      const { field, message } = describeIssue(parsed.error);
      if (field !== "q") throw new UsageError(`Invalid value for "--${field}": ${message}`);
      const missing = !positionals.join(" ").trim();
      throw new UsageError(`${missing ? "Missing query" : "Invalid query"}: ${message}`);
    }
    const ctx = loadContext({ env, onStall: io.err });
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      let options;
      try {
        options = resolveSearch(parsed.data, ctx, store);
      } catch (err) {
        if (err instanceof FilterError && err.field !== "session") {
          throw new UsageError(`Invalid value for "--${err.field}": ${err.message}`);
        }
        throw err;
      }
      options.budgetMs = budgetMsFrom(env);
      options.startedAt = startedAt;
      let result;
      try {
        result = search(store, ADAPTERS, redactorFor(ctx), options);
      } catch (err) {
        // Both say what to change in the query, as a usage error does.
        if (err instanceof SearchLimitError || err instanceof SearchStoppedError) {
          throw new UsageError(err.message);
        }
        throw err;
      }
      if (result.note) io.err(`note: ${result.note}\n`);
      if (values.json) {
        for (const hit of result.hits) io.out(safeJson(hit) + "\n");
      } else {
        const home = homeDir(env);
        result.hits.forEach((hit, i) =>
          io.out(renderHit(hit, result.highlights[i] ?? [], io, home))
        );
        if (!result.hits.length) io.err("No matches\n");
      }
      return result.hits.length ? EXIT.ok : EXIT.failure;
    } finally {
      store.close();
    }
  });
}

function renderHit(hit: SearchHit, ranges: [number, number][], io: Io, home?: string): string {
  const s = styler(io.color);
  const when = hit.timestamp ? hit.timestamp.slice(0, 16).replace("T", " ") : "-";
  let project = hit.project ?? hit.cwd ?? "-";
  if (home && project.startsWith(home + "/")) project = "~" + project.slice(home.length);
  const what = hit.role ? `${hit.kind}/${hit.role}` : hit.kind;
  // Every part that came from a transcript is filtered before it is styled.
  const header = `${s.dim(safeText(when))}  ${safeText(hit.agent)}  ${safeText(project)}  ${
    s.cyan(safeText(hit.conversation))
  }  ${s.dim(safeText(`${what} #${hit.record}`))}`;
  const snippet = markRanges(hit.snippet, ranges, (text) => s.highlight(safeText(text)), safeText);
  return `${header}\n  ${snippet}\n\n`;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
