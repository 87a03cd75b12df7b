// Why a search found nothing, in one sentence every surface shows (`search`, the search screen,
// the dashboard, `logbook mcp`): a project no conversation is in (with the projects closest to
// the name), indexed words the query's words begin (`marm*`), or the filter that keeps every
// match out, with how many matches leaving it out finds: one pass over the query's matches
// without the filters, a bounded number of them, testing each against each filter, within a
// small time budget.

import type { Redactor } from "../gate/secrets.ts";
import type { SearchInput } from "../filters.ts";
import {
  fieldOf,
  FILTER_NAMES,
  type FilterName,
  FILTERS,
  type FilterSpec,
} from "../filters_table.ts";
import { closeTo } from "../edit_distance.ts";
import { formatCount } from "../format.ts";
import { basename } from "../path.ts";
import { projectRoots } from "./conversations.ts";
import type { HistoryStore } from "./db.ts";
import {
  countsLeavingOut,
  prefixSuggestion,
  SearchBudget,
  type SearchFilters,
  type SearchOptions,
} from "./search.ts";

/** A filter of a search, as the user names it (a row of `FILTERS`). */
export type { FilterName } from "../filters_table.ts";

/**
 * How a surface tells the user to leave a filter out, given its name and the value typed:
 * `drop --since 7d` on the command line, `drop since:7d` in a search box.
 */
export type Remedy = (name: FilterName, value: string) => string;

/** Leaving a filter out on the command line: `drop --since 7d`. */
export const FLAG_REMEDY: Remedy = (name, value) =>
  name === "subagents" ? "drop --no-subagents" : `drop --${name} ${quotedArg(value)}`;

/** Leaving a filter out of a search box: `drop since:7d`. */
export const INLINE_REMEDY: Remedy = (name, value) =>
  name === "subagents"
    ? "include subagent conversations"
    : `drop ${name}:${/\s/.test(value) ? `"${value}"` : value}`;

/** Why a search found nothing. */
export interface NoMatch {
  /** One sentence: why nothing matched, and what would find something. */
  text: string;
  /** A query to try instead (`marm*`), or null. */
  suggestion: string | null;
  /** The filters that alone keep out every match, with how many matches leaving one out finds. */
  blocking: LeftOut[];
  /** For a project no conversation is in: the stored projects closest to it, as shown. */
  closest: string[];
}

/** A filter that alone keeps every match out, and what leaving it out finds. */
export interface LeftOut {
  name: FilterName;
  count: number;
  /** True when the count is a lower bound: the matches read were not all there are. */
  atLeast: boolean;
  /** `12 older matches: drop --since 7d`. */
  phrase: string;
}

/** The most matches read to count what leaving each filter out finds. */
export const SCAN_MATCHES = 10_000;

/** How long explaining may take, its counts and its prefix suggestion, by default. */
export const EXPLAIN_BUDGET_MS = 300;

/**
 * Why a search with `options` (resolved from what the user typed, `input`) found nothing, the
 * search's `ftsQuery` (null for a literal scan, whose matches are not counted) in hand: a
 * project no conversation is in; else, when the words match nothing even without the filters,
 * a prefix they begin (`marm*`); else the filters that each keep every match out, each named as
 * `remedy` spells leaving it out. The counts come from one pass over at most `scan` matches;
 * everything within `budgetMs`, and what was not counted in time is left out of the answer.
 */
export function explainNoMatch(
  store: HistoryStore,
  input: SearchInput,
  options: SearchOptions,
  ftsQuery: string | null,
  redact: Redactor,
  remedy: Remedy,
  { budgetMs = EXPLAIN_BUDGET_MS, scan = SCAN_MATCHES, now }: {
    budgetMs?: number;
    scan?: number;
    now?: () => number;
  } = {},
): NoMatch {
  const none = { suggestion: null, blocking: [], closest: [] };
  const offset = options.offset ?? 0;
  if (offset > 0) return { ...none, text: `No matches after the first ${formatCount(offset)}` };
  const active = activeFilters(input, options);
  const budget = new SearchBudget(budgetMs, undefined, now);
  /** What leaving each of `filters` out finds, or null when not counted in time. */
  const leavingOut = (filters: readonly Active[]) => {
    if (ftsQuery === null) return null;
    const keys = filters.map((f) => f.keys);
    const counts = countsLeavingOut(store, ftsQuery, options, keys, scan, budget);
    if (counts === null) return null;
    const found: LeftOut[] = filters.flatMap((filter, i) => {
      const count = counts.each[i]!;
      const atLeast = !counts.complete;
      if (!count) return [];
      const n = `${atLeast ? "at least " : ""}${formatCount(count)}`;
      return [{
        name: filter.name,
        count,
        atLeast,
        phrase: `${filter.found(n, count)}: ${remedy(filter.name, filter.value)}`,
      }];
    });
    return { found, all: counts.all, complete: counts.complete };
  };
  if (options.project !== undefined) {
    const roots = projectRoots(store);
    if (!roots.includes(options.project)) {
      const closest = closestProjects(roots, input.project ?? options.project).map(redact);
      const elsewhere = leavingOut(active.filter((f) => f.name === "project"))?.found ?? [];
      return {
        ...none,
        closest,
        blocking: elsewhere,
        text: `No matches: no conversation is in project "${redact(options.project)}"${
          closest.length ? `; the closest: ${closest.map((p) => `"${p}"`).join(", ")}` : ""
        }${elsewhere.map((b) => `; ${b.phrase}`).join("")}`,
      };
    }
  }
  const query = options.query.trim();
  const suggested = () => {
    const suggestion = ftsQuery === null ? null : prefixSuggestion(store, options, budget);
    return suggestion
      ? {
        ...none,
        suggestion,
        text: `No matches. Indexed words begin with it: try "${suggestion}"`,
      }
      : null;
  };
  if (!active.length) return suggested() ?? { ...none, text: nothingToFind(store, query, options) };
  const scope = `No matches for "${query}" ${active.map((f) => f.scope(redact)).join(" ")}`;
  const counted = leavingOut(active);
  if (!counted) return { ...none, text: scope };
  // Matching nothing even without the filters, the words are the reason, not a filter.
  if (counted.all === 0) {
    return suggested() ?? { ...none, text: nothingToFind(store, query, options) };
  }
  const blocking = counted.found;
  if (blocking.length) {
    return { ...none, blocking, text: `${scope}; ${blocking.map((b) => b.phrase).join("; ")}` };
  }
  // No one filter keeps every match out: they do together.
  const n = `${counted.complete ? "" : "at least "}${formatCount(counted.all)}`;
  return { ...none, text: `${scope}; ${matches(n, counted.all)} with none of these filters` };
}

/**
 * Why words match nothing anywhere, and what to try: nothing is captured yet, or none of the
 * captured conversations holds them (in any form or near spelling, unless `exact`).
 */
function nothingToFind(store: HistoryStore, query: string, options: SearchOptions): string {
  const { n } = store.stmt("SELECT count(*) AS n FROM conversations").get() as { n: number };
  if (n === 0) return "No matches: nothing is captured yet";
  const where = `${formatCount(n)} ${n === 1 ? "conversation" : "conversations"}`;
  if (options.forgive === "exact") {
    return `No matches for "${query}" as typed in ${where}; other forms and spellings were not tried`;
  }
  const them = /\s/.test(query) ? "these words" : "it";
  return `No matches for "${query}": no word in ${where} is ${them}, begins with ${them} or is ` +
    `spelled close to ${them}; try other words`;
}

/** A command-line value as a shell takes it back: quoted when it holds more than plain marks. */
function quotedArg(value: string): string {
  return /^[\w./:@%+=,~-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `12 matches`, `1 match`, with `what` between: `12 older matches`. */
function matches(n: string, count: number, what = ""): string {
  return `${n} ${what}${count === 1 ? "match" : "matches"}`;
}

/** One filter a search has: its name, the value typed, and how to say what it does. */
interface Active {
  name: FilterName;
  value: string;
  /** What the filter keeps: `in the last 7 days`. */
  scope: (redact: Redactor) => string;
  /** What leaving it out finds (`n` its count in words): `12 older matches`. */
  found: (n: string, count: number) => string;
  /** Its fields in SearchFilters. */
  keys: (keyof SearchFilters)[];
}

/**
 * The filters `options` has (those that narrow it: `subagents: true` does not), with the values
 * typed (`input`), in the order a user reads them, each worded as its row in `FILTERS` says.
 */
function activeFilters(input: SearchInput, options: SearchOptions): Active[] {
  return FILTER_NAMES.flatMap((name) => {
    const spec: FilterSpec = FILTERS[name];
    const field = fieldOf(name);
    const resolved = options[field];
    if (
      resolved === undefined || (spec.store as (v: unknown) => string | null)(resolved) === null
    ) {
      return [];
    }
    const typed = input[name];
    const value = spec.type === "flag"
      ? ""
      : typeof typed === "string"
      ? typed
      : spec.type === "when"
      ? new Date(resolved as number).toISOString()
      : String(resolved);
    const { scope, before, after } = spec.words;
    return [{
      name,
      value,
      // A project is shown as the gate shows its root.
      scope: (redact: Redactor) =>
        scope(spec.type === "project" ? redact(String(resolved)) : value),
      found: (n: string, count: number) =>
        `${matches(n, count, before ? `${before} ` : "")}${after ? ` ${after}` : ""}`,
      keys: [field],
    }];
  });
}

/** The few stored project roots whose last component is nearest `name`'s, nearest first. */
function closestProjects(roots: readonly string[], name: string): string[] {
  const last = (path: string) => basename(path.replaceAll("\\", "/").replace(/\/+$/, ""));
  const byName = new Map<string, string[]>();
  for (const root of roots) {
    const key = last(root).toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), root]);
  }
  const near = closeTo(last(name).toLowerCase(), [...byName.keys()], { inside: true });
  return near.flatMap((key) => byName.get(key)!).slice(0, 3);
}
