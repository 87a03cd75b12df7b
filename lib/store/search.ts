// Full-text search over the history store: FTS5 with bm25 ranking that prefers answers to the
// questions that asked for them, every filter of `search`, snippets derived from raw bytes, and
// a literal substring scan when the index cannot answer the query (not FTS5 syntax, only
// symbols, or CJK the index does not hold: see `cjk.ts` for CJK words). Paged here, and every hit
// through the gate here, so the CLI, the dashboard and the search workers use it as it is.
// Every search is bounded: its query by `_search_bounds.ts`, its time by `_search_budget.ts`.
//
// This file is the search's front door: each job is a file of `search/`: `ranked.ts` (ranked
// FTS search), `literal.ts` (the literal scan and its query parser), `groups.ts` (one result per
// conversation), `suggest.ts` (a prefix to try when nothing matched), `counts.ts` (counting
// matches), `types.ts` (what a search takes and gives), and the SQL (`_sql.ts`) and steps
// (`_read.ts`) they share.
//
// A search past its budget returns what it has, and says so (`stopped`, `stopNote`). What it has
// depends on where it was: bm25 ranks only once every match is scored (SQLite keeps the best in
// a sorter that gives out no row before the scan ends, and a stopped statement drops it), so a
// ranking stopped midway has nothing to give. The ranking therefore leaves a fifth of the budget
// (at most 200 ms) for a fallback that needs no ranking: FTS5 walks its matches newest record
// first, as fast as they come, so the page is the most recently captured matches, unranked and
// labelled so. A ranking that finished but whose hits were not all read in time gives the best
// ones it read, in order; a literal scan gives the matches of the records it read.
//
// A search that meets a damaged store says so (StoreDamagedError, `damage.ts`): what is damaged
// and how to recover, never "no match". An index search that found nothing also has the text
// index looked at quickly, as a misplaced page of its term index hides matches without an error.

export {
  checkBounds,
  MAX_NEAR_DISTANCE,
  MAX_PREFIXES,
  MAX_TERMS,
  MIN_PREFIX_CHARS,
  SearchLimitError,
  SearchStatementError,
} from "./_search_bounds.ts";
export { type Forgive, FORGIVE_MODES, type Forgiven, type Matched } from "./forgive.ts";
export {
  budgetMsFrom,
  DEFAULT_BUDGET_MS,
  SearchBudget,
  SearchStoppedError,
} from "./_search_budget.ts";
export type { SearchFilters } from "../filters_table.ts";
export {
  type GroupOptions,
  type GroupResult,
  type PageFacts,
  SEARCH_SORTS,
  type SearchGroup,
  type SearchHit,
  type SearchOptions,
  type SearchResult,
  type SearchSort,
} from "./search/types.ts";
export { ANSWER_BOOST, INJECTED_WEIGHT, search } from "./search/ranked.ts";
export { searchGroups } from "./search/groups.ts";
export { prefixCandidates, prefixSuggestion, withPrefixes } from "./search/suggest.ts";
export {
  countMatches,
  countsLeavingOut,
  type LeftOutCounts,
  type MatchCounts,
} from "./search/counts.ts";
