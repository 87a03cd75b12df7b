// `search`: finds records across every captured conversation, ranked, with filters. Exit 0 with
// hits, 1 with none (as grep does), 2 for a usage error. A search past its time budget prints the
// hits it had, says what they are on stderr and exits 0; one that had none is a usage error (2:
// narrow the query), since "no match" would not be true. Never writes to a source.
// With `-i`, a full screen that searches as you type (loaded only then: the plain search
// starts lean).
// This is the command; `commands/search.ts` runs it, from its bundle while that is fresh
// (commands/_launch.ts).

import type { Env } from "../../lib/env.ts";
import {
  defineCommand,
  EXIT,
  invalidOption,
  type Parsed,
  run,
  shared,
  UsageError,
  wholeNumber,
} from "../_command.ts";
import { type Io, stdio, styler } from "../_terminal/io.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import {
  FILTER_OPTIONS,
  FilterError,
  filterInputOf,
  filterOptionClash,
  INLINE_FILTERS,
  MAX_SEARCH_LIMIT,
  parseSearchInput,
  resolveSearch,
  resolveTeamSearch,
  type SearchInput,
} from "../../lib/filters.ts";
import { formatCount, formatLocalTime } from "../../lib/format.ts";
import { homeDir, projectOf } from "../../lib/paths.ts";
import { openMirror } from "../../lib/store/mirror.ts";
import { READERS } from "../../lib/agents.ts";
import { leadToMatch } from "../../lib/store/text.ts";
import { explainNoMatch, FLAG_REMEDY } from "../../lib/store/no_match.ts";
import { withWordForms } from "../../lib/store/forgive.ts";
import {
  budgetMsFrom,
  type GroupResult,
  search,
  SEARCH_SORTS,
  searchGroups,
  type SearchHit,
  SearchLimitError,
  type SearchResult,
  SearchStoppedError,
} from "../../lib/store/search.ts";
import { countLine } from "../_terminal/count_line.ts";
import { markRanges } from "../_terminal/highlight.ts";
import { safeIo } from "../_terminal/safe_io.ts";
import { safeJson } from "../../lib/safe_json.ts";
import { safeText } from "../../lib/safe_text.ts";
import {
  cutStartToWidth,
  cutToWidth,
  displayWidth,
  type Span,
  terminalColumns,
  wrapSpans,
} from "../_terminal/wrap.ts";

/** The width a search result is printed when stdout is no terminal. */
const PIPED_WIDTH = 80;

export const spec = defineCommand({
  name: "search",
  summary: "find records across every captured conversation",
  arguments: "<query>",
  options: {
    interactive: {
      type: "boolean",
      short: "i",
      shortInUsage: true,
      help: "search as you type, full screen (`logbook` alone on a terminal too)",
    },
    ...FILTER_OPTIONS,
    limit: { type: "string", value: "N", help: "at most N hits (default 20)" },
    offset: {
      type: "string",
      value: "N",
      help: "skip the first N hits: the next page (the count line says where it starts)",
    },
    sort: {
      type: "string",
      value: "S",
      choices: SEARCH_SORTS,
      help: "relevance (best match first, the default), newest or oldest",
    },
    group: {
      type: "boolean",
      help: "one entry per conversation: title, project, hit count and its best snippet",
    },
    exact: {
      type: "boolean",
      help: "the words only as typed: when they find nothing, no words they begin, other forms " +
        "(rotated for rotating) or closest spellings (lanternfish for lanternfsh) instead",
    },
    mirror: {
      type: "boolean",
      help: "search this project's mirror (.logbook/) instead of the history store",
    },
    team: {
      type: "boolean",
      or: "mirror",
      help: "search the team's PostgreSQL history (see push) instead",
    },
    machine: {
      type: "string",
      value: "M",
      within: "team",
      help: "with --team: only what machine M pushed",
    },
    ...shared({
      json: "one JSON object per hit (per conversation with --group), one per line",
    }),
  },
  examples: [
    'logbook search "rotate credentials" --project . --since 7d',
    "logbook search keyring --group --sort newest",
  ],
  permissions: { read: true, write: true, env: true, net: true, run: true },
  embed: ["commands/_body/search.ts"],
});

/** Runs `search` with `args`; returns the exit status. `now` is the search budget's clock. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  now: () => number = Date.now,
): Promise<number> {
  const startedAt = now();
  return await run(spec, args, safeIo(io), async ({ values, positionals }) => {
    const clashing = filterOptionClash(values);
    if (clashing) throw new UsageError(clashing);
    if (values.interactive) return await interactive(values, positionals, io, env);
    const { input, offset } = checkedInput(values, positionals);
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    if (values.team) {
      const { searchTeam } = await import("../_team.ts");
      const options = resolveTeamSearch(input, ctx);
      return await searchTeam(
        ctx,
        {
          ...options,
          offset,
          budgetMs: budgetMsFrom(env),
          startedAt,
          forgive: values.exact ? "exact" : "fallback",
          ...(values.machine ? { machine: values.machine } : {}),
        },
        io,
        values.json === true,
      );
    }
    const here = values.mirror ? projectOf(ctx.cwd) : undefined;
    const store = here
      ? openMirror(here.root, here.key, ctx.env)
      : openStore(ctx, { mustExist: true, readOnly: true });
    try {
      let options;
      try {
        options = resolveSearch(input, ctx, store);
      } catch (err) {
        if (err instanceof FilterError && err.field !== "session") {
          throw new UsageError(`Invalid value for "--${err.field}": ${err.message}`);
        }
        throw err;
      }
      options.offset = offset;
      options.budgetMs = budgetMsFrom(env);
      options.startedAt = startedAt;
      options.forgive = values.exact ? "exact" : "fallback";
      const page = await stopsAsUsage(() =>
        withWordForms(() =>
          values.group
            ? searchGroups(store, READERS, redactorFor(ctx), options, now)
            : search(store, READERS, redactorFor(ctx), options, now)
        )
      );
      const hits = printPage(page, offset, io, env, values);
      if (!hits.length) {
        const why = explainNoMatch(
          store,
          input,
          options,
          page.ftsQuery,
          redactorFor(ctx),
          FLAG_REMEDY,
        );
        io.err(`${why.text}\n`);
      }
      return hits.length ? EXIT.ok : EXIT.failure;
    } finally {
      store.close();
    }
  });
}

/**
 * The search a command line asks for, checked: its query and filters, and the offset. Throws
 * UsageError for a value a filter or option does not take, a missing query, and options that
 * cannot go together.
 */
function checkedInput(
  values: Parsed<typeof spec.options>["values"],
  positionals: string[],
): { input: SearchInput; offset: number } {
  const parsed = parseSearchInput({
    q: positionals.join(" "),
    ...filterInputOf(values),
    limit: wholeNumber(values.limit, "limit", { max: MAX_SEARCH_LIMIT }),
    sort: values.sort,
  });
  const offset = wholeNumber(values.offset, "offset", { min: 0 }) ?? 0;
  if (!parsed.success) {
    const issue = parsed.error;
    const { field, message } = issue;
    if (field !== "q") {
      throw invalidOption(field, (values as Record<string, unknown>)[field], issue);
    }
    const missing = !positionals.join(" ").trim();
    throw new UsageError(`${missing ? "Missing query" : "Invalid query"}: ${message}`);
  }
  if (values.machine !== undefined && !values.team) {
    throw new UsageError('Option "--machine" needs "--team"');
  }
  const clash = values.mirror
    ? "mirror"
    : values.session !== undefined
    ? "session"
    : values.group
    ? "group"
    : values.sort !== undefined
    ? "sort"
    : null;
  if (values.team && clash) {
    throw new UsageError(`Option "--team" cannot be used with "--${clash}"`);
  }
  return { input: parsed.data, offset };
}

/**
 * Prints a page of hits (or of conversations, with `--group`): its notes on stderr, then the
 * hits as text or, with `--json`, one JSON object a line. Returns the hits printed.
 */
function printPage(
  page: SearchResult | GroupResult,
  offset: number,
  io: Io,
  env: Env,
  values: { json?: boolean | undefined; group?: boolean | undefined },
): (SearchHit & { hits?: number })[] {
  const hits: (SearchHit & { hits?: number })[] = "groups" in page ? page.groups : page.hits;
  const note = page.note ??
    (page.mode === "literal"
      ? "the query is not valid FTS5 syntax; used a literal substring scan"
      : null);
  if (note) io.err(`note: ${note}\n`);
  if (page.forgiven) io.err(`note: ${page.forgiven.note} (--exact for none)\n`);
  if (page.stopNote) io.err(`note: ${page.stopNote}\n`);
  if (values.json) {
    for (const hit of hits) io.out(safeJson(hit) + "\n");
  } else {
    const layout = { io, home: homeDir(env), width: widthOf(io, env) };
    hits.forEach((hit, i) => io.out(renderHit(hit, page.highlights[i] ?? [], layout)));
    if (hits.length) {
      io.out(countLine(hits.length, offset, page, values.group ? "conversation" : "hit"));
    }
  }
  return hits;
}

/**
 * `search -i`: the full-screen search, its box holding the words and the filters given (as
 * `agent:codex`). Options that shape printed output have no place on the screen.
 */
async function interactive(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  io: Io,
  env: Env,
): Promise<number> {
  const printed = [
    "json",
    "group",
    "exact",
    "team",
    "mirror",
    "machine",
    "limit",
    "offset",
    "sort",
  ];
  for (const name of printed) {
    if (values[name] !== undefined) {
      throw new UsageError(`Options "-i, --interactive" and "--${name}" cannot be used together`);
    }
  }
  if (!io.outIsTerminal || !Deno.stdin.isTerminal()) {
    throw new UsageError('Option "-i, --interactive" needs a terminal (stdin and stdout)');
  }
  const given = filterInputOf(values);
  const filters = INLINE_FILTERS.flatMap((name) => {
    const value = given[name];
    if (value === undefined) return [];
    return [`${name}:${/\s/.test(value) ? `"${value.replaceAll('"', "")}"` : value}`];
  });
  const box = [...filters, ...positionals].join(" ");
  const { subagents } = given;
  const { interactiveSearch } = await import("../_terminal/search_screen.ts");
  return await interactiveSearch({
    env,
    io,
    box: box ? `${box} ` : "",
    ...(subagents !== undefined ? { subagents } : {}),
  });
}

/**
 * Runs a search; a query over a bound, or one out of time before it found anything, is a usage
 * error (change the query): "no match" would not be true.
 */
async function stopsAsUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SearchLimitError || err instanceof SearchStoppedError) {
      throw new UsageError(err.message);
    }
    throw err;
  }
}

/** The columns a result may use: the terminal's width (40 at least), or 80 when not a terminal. */
function widthOf(io: Io, env: Env): number {
  return io.outIsTerminal ? Math.max(40, terminalColumns(env)) : PIPED_WIDTH;
}

interface Layout {
  io: Io;
  home: string | undefined;
  width: number;
}

/**
 * One hit in at most `width` columns: the local date and time, the title and the project; then
 * the conversation id alone on its line, whole (the line can be copied into `show`, `resume` or
 * `fork`); then the record (for `show --around`), its kind and the snippet, wrapped. A grouped
 * hit says its hit count and keeps the snippet to one line.
 */
function renderHit(
  hit: SearchHit & { hits?: number },
  ranges: [number, number][],
  { io, home, width }: Layout,
): string {
  const s = styler(io.color);
  let project = hit.project ?? hit.cwd ?? "";
  if (home && (project === home || project.startsWith(home + "/"))) {
    project = "~" + project.slice(home.length);
  }
  // Every part that came from a transcript is filtered before it is measured or styled.
  const when = formatLocalTime(hit.timestamp);
  const title = safeText((hit.title ?? "(untitled)").replace(/\s+/g, " ").trim());
  const where = safeText(project);
  const room = width - displayWidth(when) - 2;
  // The title says which conversation it is: the project, cut from its start, gets what the
  // title leaves, and at least a third of the line.
  const whereShare = Math.min(
    displayWidth(where),
    Math.max(Math.floor(room / 3), room - 2 - displayWidth(title)),
  );
  const titleRoom = where ? room - whereShare - 2 : room;
  const shownTitle = cutToWidth(title, titleRoom);
  const whereRoom = room - displayWidth(shownTitle) - 2;
  const head = `${s.dim(when)}  ${s.bold(shownTitle)}${
    where && whereRoom > 1 ? `  ${s.dim(cutStartToWidth(where, whereRoom))}` : ""
  }`;

  const what = hit.kind === "message" && hit.role
    ? hit.role
    : hit.role
    ? `${hit.kind}/${hit.role}`
    : hit.kind;
  const count = hit.hits === undefined
    ? ""
    : `${formatCount(hit.hits)} hit${hit.hits === 1 ? "" : "s"}, best `;
  const label = `${count}#${hit.record} ${safeText(what)}: `;
  const spans: Span[] = [{ text: label, mark: false, dim: true }];
  const grouped = hit.hits !== undefined;
  // A group shows one line of its snippet: the line begins near the match, so it shows it.
  const shown = grouped
    ? leadToMatch({ text: hit.snippet, ranges }, Math.floor((width - 4 - displayWidth(label)) / 4))
    : { text: hit.snippet, ranges };
  markRanges(shown.text, shown.ranges, (text) => {
    spans.push({ text: safeText(text), mark: true });
    return "";
  }, (text) => {
    spans.push({ text: safeText(text), mark: false });
    return "";
  });
  let lines = wrapSpans(spans, width - (grouped ? 4 : 2));
  if (grouped && lines.length > 1) lines = [[...lines[0]!, { text: " …", mark: false }]];
  const snippet = lines
    .map((line) =>
      "  " +
      line.map((p) => p.mark ? s.highlight(p.text) : p.dim ? s.dim(p.text) : p.text).join("")
    )
    .join("\n");
  return `${head}\n${s.cyan(safeText(hit.conversation))}\n${snippet}\n\n`;
}
