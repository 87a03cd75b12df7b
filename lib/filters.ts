// The search filters as users give them (flags on the command line, query parameters in the
// dashboard, arguments of the MCP tool), checked and resolved into what the store searches by.
// Which filters there are, and what each takes, is the filters' table (`filters_table.ts`).

import { type Context, redactorFor } from "./context.ts";
import { holdsRedaction } from "./gate/secrets.ts";
import { isWindowsPath, projectOfUserPath, resolveFromUser } from "./paths.ts";
import { canStat } from "./present.ts";
import {
  fieldOf,
  FILTER_NAMES,
  type FilterName,
  FILTERS,
  type FilterSpec,
  type FilterValues,
  INLINE_FILTERS,
} from "./filters_table.ts";
import { HistoryStore } from "./store/db.ts";
import {
  findConversation,
  MAX_ID_CHARS,
  projectsEndingWith,
  projectShownAs,
} from "./store/conversations.ts";
import {
  type Forgive,
  FORGIVE_MODES,
  SEARCH_SORTS,
  type SearchOptions,
  type SearchSort,
} from "./store/search.ts";
import { parseWhen } from "./when.ts";
import { oneOf } from "./format.ts";

export { oneOf };

/** The most hits one search returns. */
export const MAX_SEARCH_LIMIT = 1000;

/** The longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 4096;

export { FILTER_OPTIONS, FILTERS, INLINE_FILTERS } from "./filters_table.ts";
export type { FilterName } from "./filters_table.ts";

/** One of `INLINE_FILTERS`. */
export type InlineFilter = typeof INLINE_FILTERS[number];

const INLINE_PATTERN = new RegExp(`(^|\\s)(${INLINE_FILTERS.join("|")}):("[^"]*"|\\S+)`, "g");

/**
 * The words of a search box with its `name:value` filters taken out (a quoted value may hold
 * spaces; a later filter of the same name wins).
 *
 * @example
 * splitInline("agent:codex retry since:7d"); // { text: "retry", inline: { agent: "codex", since: "7d" } }
 */
export function splitInline(q: string): { text: string; inline: Record<string, string> } {
  const inline: Record<string, string> = {};
  const text = q.replace(INLINE_PATTERN, (_m, lead: string, name: string, value: string) => {
    inline[name] = value.startsWith('"') ? value.slice(1, -1) : value;
    return lead;
  }).replace(/\s+/g, " ").trim();
  return { text, inline };
}

/** A search request as a user writes it, checked by `parseSearchInput`: the query, its filters. */
export interface SearchInput extends FilterValues {
  q: string;
  limit?: number | undefined;
  sort?: SearchSort | undefined;
  /** How a query that finds nothing as typed is forgiven (`lib/store/forgive.ts`). */
  forgive?: Forgive | undefined;
}

/** A filter value that cannot be resolved (an unknown session, an unreadable date). */
export class FilterError extends Error {
  override name = "FilterError";
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

/** The first problem in a search input: the field, a plain message and, when known, what it takes. */
export interface InputIssue {
  field: string;
  /** A plain phrase: `expected claude, codex, opencode or logbook`. */
  message: string;
  /** What the field takes, when the problem is the value's form: `a whole number from 1 to 1000`. */
  expected?: string;
}

/** Resolves a search of the team database: the filters of `resolveSearch` but a session. */
export function resolveTeamSearch(input: SearchInput, ctx: Context): SearchOptions {
  return resolveSearch(input, ctx, null);
}

/**
 * Checks a search request field by field, each filter by its type in the filters' table (without
 * a schema library: the command's start-up cannot afford one; the dashboard's zod form,
 * `lib/filters_schema.ts`, is made from the same table). The query comes back trimmed.
 */
export function parseSearchInput(
  raw: { [K in keyof SearchInput]?: unknown },
): { success: true; data: SearchInput } | { success: false; error: InputIssue } {
  const fail = (field: string, message: string, expected?: string) =>
    ({
      success: false,
      error: expected === undefined ? { field, message } : { field, message, expected },
    }) as const;
  const expect = (field: string, expected: string) => fail(field, `expected ${expected}`, expected);
  if (typeof raw.q !== "string") return fail("q", "expected a string");
  const q = raw.q.trim();
  if (!q) return fail("q", "the query is empty");
  if (q.length > MAX_QUERY_CHARS) {
    return fail("q", `the query is over ${MAX_QUERY_CHARS} characters`);
  }
  const data: SearchInput = { q };
  const set = data as unknown as Record<string, unknown>;
  for (const name of FILTER_NAMES) {
    const spec: FilterSpec = FILTERS[name];
    const value = raw[name];
    if (value === undefined) continue;
    if (spec.type === "flag") {
      if (typeof value !== "boolean") return expect(name, "a boolean");
    } else if (spec.type === "choice") {
      if (!spec.values!.includes(value as string)) return expect(name, oneOf(spec.values!));
    } else {
      if (typeof value !== "string") return expect(name, "a string");
      if (!value) return expect(name, "a value, not nothing");
      if (spec.type === "id" && value.length > MAX_ID_CHARS) {
        return expect(name, `at most ${MAX_ID_CHARS} characters`);
      }
    }
    set[name] = value;
  }
  const choices = [
    ["sort", SEARCH_SORTS],
    ["forgive", FORGIVE_MODES],
  ] as const;
  for (const [field, allowed] of choices) {
    const value = raw[field];
    if (value === undefined) continue;
    if (!(allowed as readonly unknown[]).includes(value)) return expect(field, oneOf(allowed));
    set[field] = value;
  }
  if (raw.limit !== undefined) {
    const limit = Number(raw.limit);
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      return expect("limit", `a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
    }
    data.limit = limit;
  }
  return { success: true, data };
}

/**
 * The project root a user names: a directory (relative to where the user stands; `.` is this
 * project) turned into its project identity, or a root as the gate shows it (its path holds a
 * `[REDACTED:…]` marker, as in a dashboard link or a copied `show` header), which is the stored
 * root it stands for (`projectShownAs`). Without a store, or when no stored root is shown so, a
 * shown root is kept as written: it names nothing on disk, and the team database keeps its
 * projects as shown. A relative path that is not there (`cleekely`, `src/cleekely`) names the
 * one stored project whose path ends so (`/home/dev/src/cleekely`); when several do, throws
 * FilterError naming them; when none does, it is that path, where no conversation is (never the
 * project of the directory around it).
 */
export function projectOfNamed(
  value: string,
  ctx: Context,
  store: HistoryStore | null,
): string {
  if (holdsRedaction(value)) {
    return (store && projectShownAs(store, value, redactorFor(ctx))) ?? value;
  }
  if (store && /^(?![~./\\])/.test(value) && !isWindowsPath(value)) {
    const path = resolveFromUser(value, ctx.env);
    if (!canStat(path)) {
      const [only, ...more] = projectsEndingWith(store, value);
      if (only !== undefined && !more.length) return only;
      if (only !== undefined) {
        const redact = redactorFor(ctx);
        const names = [only, ...more].slice(0, 5).map((root) => `"${redact(root)}"`).join(", ");
        throw new FilterError(
          "project",
          `Project "${value}" is ambiguous: it ends the paths of ${names}${
            more.length > 4 ? " and more" : ""
          }; give more of the path`,
        );
      }
      return path;
    }
  }
  return projectOfUserPath(value, ctx.env).root;
}

/** The value a filter resolves to; throws FilterError naming it for one that names nothing. */
function resolveFilter(
  name: FilterName,
  value: string | boolean,
  ctx: Context,
  store: HistoryStore | null,
): unknown {
  const spec: FilterSpec = FILTERS[name];
  switch (spec.type) {
    case "project":
      return projectOfNamed(value as string, ctx, store);
    case "id":
      if (!store) throw new FilterError(name, "a session is looked up in the history store only");
      try {
        return findConversation(store, value as string).id;
      } catch (err) {
        throw new FilterError(name, (err as Error).message);
      }
    case "when":
      try {
        return parseWhen(value as string, ctx.now());
      } catch (err) {
        throw new FilterError(name, (err as Error).message);
      }
    default:
      return value;
  }
}

/**
 * The filters given on `search`'s command line (its options parsed), as a search input takes
 * them: `--no-subagents` as `subagents: false`, `--subagents` as `true`.
 */
export function filterInputOf(values: Record<string, unknown>): FilterValues {
  const input: Record<string, unknown> = {};
  for (const name of FILTER_NAMES) {
    const spec: FilterSpec = FILTERS[name];
    const value = spec.type === "flag"
      ? values[`no-${name}`] ? false : values[name] ? true : undefined
      : values[name];
    if (value !== undefined) input[name] = value;
  }
  return input as FilterValues;
}

/**
 * The usage mistakes of `search`'s filter options: a flag given with its `no-` form, a filter
 * with its `without`. A sentence, or null.
 */
export function filterOptionClash(values: Record<string, unknown>): string | null {
  for (const name of FILTER_NAMES) {
    const spec: FilterSpec = FILTERS[name];
    const other = spec.type === "flag" ? `no-${name}` : spec.without;
    if (other !== undefined && values[name] !== undefined && values[other]) {
      return `Options "--${name}" and "--${other}" cannot be used together`;
    }
  }
  return null;
}

/**
 * Resolves a validated search input: `project` is a project the user names
 * (`projectOfNamed`), `session` a conversation id or unique prefix, `since`/`until` ISO or
 * relative times.
 */
export function resolveSearch(
  input: SearchInput,
  ctx: Context,
  store: HistoryStore | null,
): SearchOptions {
  const options: SearchOptions = { query: input.q };
  if (input.limit !== undefined) options.limit = input.limit;
  if (input.sort !== undefined) options.sort = input.sort;
  if (input.forgive !== undefined) options.forgive = input.forgive;
  const set = options as unknown as Record<string, unknown>;
  for (const name of FILTER_NAMES) {
    const value = input[name];
    if (value === undefined) continue;
    set[fieldOf(name)] = resolveFilter(name, value, ctx, store);
  }
  return options;
}
