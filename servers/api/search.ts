// `GET /api/search`: the search of `search --json`, with the same filters, validated by the same
// schema, as `{"hits": [...]}`; paged by `limit` and `offset` (pass `next` as `offset`). It
// forgives as `search` does (`forgive`: `fallback` by default, `typing` as a person types,
// `exact`), answering `forgiven` and each hit's `matched`. A search
// past its budget answers with the hits it had (`stopped`, `stopNote` says what they are); one
// that had none is a 400 naming `q`, as `search` exits 2: the query needs narrowing.

import { Hono } from "hono";
import { z } from "zod";
import { busyTimeoutMs, gateOptionsFor } from "../../lib/context.ts";
import { FilterError, resolveSearch } from "../../lib/filters.ts";
import { searchInput } from "../../lib/filters_schema.ts";
import { FILTER_NAMES, FILTERS, type FlagFilter } from "../../lib/filters_table.ts";
import { explainNoMatch, INLINE_REMEDY, type NoMatch } from "../../lib/store/no_match.ts";
import {
  type Forgiven,
  type GroupResult,
  type PageFacts,
  type SearchOptions,
  type SearchResult,
} from "../../lib/store/search.ts";
import type { SearchJob } from "../../lib/store/search_workers.ts";
import { type AppEnv, type Route, type Services, usingStore } from "../_deps.ts";
import { fromFilter, searchQueryError } from "../_errors.ts";
import { parseQuery, queryFlag, queryInt } from "../_input.ts";

/** Hits per page when `limit` is not given (as `search`). */
export const DEFAULT_LIMIT = 20;
/** The deepest a search can be paged. */
export const MAX_OFFSET = 5000;

/** The filters that are flags, as a query string gives them (`1`, `true`, `0`, `false`). */
const queryFlags = Object.fromEntries(
  FILTER_NAMES.filter((name) => FILTERS[name].type === "flag").map((name) => [
    name,
    queryFlag.optional(),
  ]),
) as Record<FlagFilter, z.ZodOptional<typeof queryFlag>>;

/** The query string of a search: `searchInput` with query-string flags, and `offset`. */
export const searchQuery = searchInput.extend({
  ...queryFlags,
  limit: queryInt(1, 1000).optional(),
  offset: queryInt(0, MAX_OFFSET).optional(),
});
/** A validated search query string. */
export type SearchQuery = z.infer<typeof searchQuery>;

/** What the dashboard passes on of a page of a search (`PageFacts`), of hits and of groups alike. */
type Passed = Pick<PageFacts, "mode" | "ftsQuery" | "note" | "next" | "stopped" | "stopNote">;

/** What every page the dashboard answers says besides what it found. */
interface ApiPage extends Passed {
  /** Hits (or conversations) skipped before this page, and on a page. */
  offset: number;
  limit: number;
  /** On a first page without hits: why nothing matched (`explainNoMatch`); else null. */
  noMatch: NoMatch | null;
  /**
   * When the words as typed matched nothing and the search forgave them (`forgive`, `fallback`
   * by default): what it searched instead, and the sentence that says so; else null.
   */
  forgiven: Forgiven | null;
}

/** One page of hits, with where each hit's matches are in its snippet. */
export interface SearchPage extends ApiPage, Pick<SearchResult, "hits" | "highlights"> {}

/** A page of conversations with hits, each with its best few, and how many have a hit. */
export interface GroupPage extends ApiPage, Pick<GroupResult, "groups" | "total"> {}

/**
 * Runs a validated search through `search()` on a search worker, which pages it and passes its
 * hits through the gate, within the search budget counted from `startedAt` (when the request
 * arrived).
 */
export async function searchPage(
  svc: Services,
  query: SearchQuery,
  startedAt = Date.now(),
): Promise<SearchPage> {
  const { offset = 0, ...input } = query;
  const limit = input.limit ?? DEFAULT_LIMIT;
  const job = searchJob(svc, { ...input, limit }, offset, startedAt);
  const result = await svc.op.stage(
    "dashboard.search",
    () => svc.searches.run(job).catch(rethrowAsQuery),
  );
  const { mode, ftsQuery, note, next, stopped, stopNote }: Passed = result;
  return {
    noMatch: result.hits.length ? null : whyNoMatch(svc, input, job.options, result),
    hits: result.hits,
    highlights: result.highlights,
    ...{ mode, ftsQuery, note, offset, limit, next, stopped, stopNote },
    forgiven: result.forgiven ?? null,
  };
}

/**
 * Runs a validated search grouped by conversation (`searchGroups` on a search worker): a page of
 * `limit` conversations after `offset`, each with its `perGroup` best hits.
 */
export async function searchGroupPage(
  svc: Services,
  query: SearchQuery,
  perGroup: number,
  startedAt = Date.now(),
): Promise<GroupPage> {
  const { offset = 0, ...input } = query;
  const limit = input.limit ?? DEFAULT_LIMIT;
  const job = searchJob(svc, { ...input, limit }, offset, startedAt);
  const result = await svc.op.stage(
    "dashboard.search",
    () => svc.searches.run({ ...job, perGroup }).catch(rethrowAsQuery),
  );
  const { mode, ftsQuery, note, next, stopped, stopNote }: Passed = result;
  return {
    noMatch: result.groups.length ? null : whyNoMatch(svc, input, job.options, result),
    groups: result.groups,
    ...{ mode, ftsQuery, note, offset, limit, next, total: result.total, stopped, stopNote },
    forgiven: result.forgiven ?? null,
  };
}

/** The job of a validated search (filters resolved against the store). */
function searchJob(
  svc: Services,
  input: Omit<SearchQuery, "offset">,
  offset: number,
  startedAt: number,
): Omit<SearchJob, "perGroup"> {
  const options = usingStore(svc, (store) => {
    try {
      return resolveSearch(input, svc.ctx, store);
    } catch (err) {
      throw err instanceof FilterError ? fromFilter(err) : err;
    }
  });
  options.offset = offset;
  options.budgetMs = svc.searchBudgetMs;
  options.startedAt = startedAt;
  options.forgive ??= "fallback";
  const busy = busyTimeoutMs(svc.ctx.env);
  return {
    path: svc.ctx.paths.historyDb,
    root: svc.ctx.paths.root,
    ...(busy === undefined ? {} : { busyTimeoutMs: busy }),
    gate: gateOptionsFor(svc.ctx),
    options,
  };
}

/**
 * Why a search that found nothing found nothing, on its first page (a later page is only past the
 * last hit), as the search screen says it: its filters named as typed in the box.
 */
function whyNoMatch(
  svc: Services,
  input: Omit<SearchQuery, "offset">,
  options: SearchOptions,
  result: { ftsQuery: string | null; stopped: boolean },
): NoMatch | null {
  if ((options.offset ?? 0) > 0 || result.stopped) return null;
  return usingStore(
    svc,
    (store) => explainNoMatch(store, input, options, result.ftsQuery, svc.redact, INLINE_REMEDY),
  );
}

/** Rethrows `err`; a search stopped by its bounds or its budget as the 400 it is. */
function rethrowAsQuery(err: unknown): never {
  throw searchQueryError(err) ?? err;
}

/** The route. */
export const searchApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/search", async (c) => {
    const startedAt = Date.now();
    const query = parseQuery(c, searchQuery, ["q"]);
    return c.json(await searchPage(svc, query, startedAt));
  });
