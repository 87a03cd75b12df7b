// What a search takes and gives: its options, a hit, a group of hits, and what every page of
// hits or of groups says besides them (`PageFacts`).

import type { SearchFilters } from "../../filters_table.ts";
import type { Kind, Role } from "../../sources/adapter.ts";
import type { Agent } from "../../agents.ts";
import type { Snippet } from "../text.ts";
import type { Forgive, Forgiven, Matched } from "../forgive.ts";

/** The orders `search` knows: best match first (answers above their questions), or by time. */
export const SEARCH_SORTS = ["relevance", "newest", "oldest"] as const;
/** The order of hits. */
export type SearchSort = typeof SEARCH_SORTS[number];

/** A search: its query, its filters, and how it is ordered, paged, timed and forgiven. */
export interface SearchOptions extends SearchFilters {
  query: string;
  /** The order of hits (default `relevance`). */
  sort?: SearchSort;
  /** Hits on the page (default 20, at most 10,000). */
  limit?: number;
  /** Ranked hits to skip before the page (default 0): the `next` of the page before. */
  offset?: number;
  /** How long the search may take before it stops with what it has (default 1200 ms). */
  budgetMs?: number;
  /** When the user asked (epoch ms; default: now): the budget counts from here. */
  startedAt?: number;
  /**
   * How the search forgives a query that does not match as typed (`forgive.ts`); default
   * `exact`. With any value given, each hit says how its words matched (`matched`).
   */
  forgive?: Forgive;
}

/** One hit, with the fields of `search --json`. */
export interface SearchHit {
  conversation: string;
  /** The conversation's title (its first prompt or summary), through the gate. */
  title: string | null;
  record: number;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  timestamp: string | null;
  kind: Kind;
  role: Role | null;
  snippet: string;
  score: number;
  /** With `forgive` given: each word of the query the hit holds, and how it matched. */
  matched?: Matched[];
}

/**
 * What a page of a search says besides what it found (its hits, or its conversations): the same
 * for hits and groups, and what the dashboard's pages (`SearchPage`, `GroupPage`) pass on.
 */
export interface PageFacts {
  /** Where each hit's matches are in its snippet (a group's: its best hit's), in their order. */
  highlights: Snippet["ranges"][];
  /** `fts`, or `literal` when the index could not answer the query (`note` says why). */
  mode: "fts" | "literal";
  /** Why the search was a literal substring scan (null for `fts`), for the user to read. */
  note: string | null;
  /** The FTS5 query actually run (after quoting punctuated words); null for a literal scan. */
  ftsQuery: string | null;
  /** The `offset` of the next page (in hits, or in conversations), or null on the last one. */
  next: number | null;
  /**
   * How many hits (conversations, for groups) the whole search has (a line longer than 64 KiB
   * counts once per matching chunk until the last page, where the count is exact), or null when
   * it was not counted (a literal scan stops at the page, and a stopped search is not counted).
   */
  total: number | null;
  /**
   * True when the budget was spent before the search was done: the hits are what it had (a
   * group's `hits` counts the matches found in time).
   */
  stopped: boolean;
  /**
   * For a stopped search, what its hits are (the best ranked, the most recently captured
   * matches unranked, or the newest of the records a literal scan read) and how to get the
   * whole answer; null when not stopped. With no hits, it says how to narrow the query.
   */
  stopNote: string | null;
  /** When the hits are not the query's as typed: what was searched instead, and why. */
  forgiven?: Forgiven;
}

/** A page of hits, every string through the gate. */
export interface SearchResult extends PageFacts {
  hits: SearchHit[];
}

/** One conversation of a grouped search: its best hit, and how many hits it has. */
export interface SearchGroup extends SearchHit {
  /** Hits in this conversation (each chunk of a line longer than 64 KiB counts). */
  hits: number;
  /**
   * With `perGroup` over 1: the conversation's best hits, best first (the first is the group's
   * own), and where each one's matches are in its snippet.
   */
  top?: { hits: SearchHit[]; highlights: Snippet["ranges"][] };
}

/** Options of a grouped search. */
export interface GroupOptions extends SearchOptions {
  /** Best hits kept per conversation (default 1: the group's own). */
  perGroup?: number;
}

/** A page of conversations, best first (or by their newest or oldest hit). */
export interface GroupResult extends PageFacts {
  groups: SearchGroup[];
}
