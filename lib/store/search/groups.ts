// Grouped search (`searchGroups`): one result per conversation, its best hits and how many it
// has, paged by conversation, from the index or from the literal scan.

import { mapStrings, type Redactor } from "../../gate/secrets.ts";
import type { SearchFilters } from "../../filters_table.ts";
import type { TextReader } from "../../sources/adapter.ts";
import { HistoryStore } from "../db.ts";
import type { Snippet } from "../text.ts";
import { cjkQuery } from "../cjk.ts";
import { type LevelPage, runLevels, type Tier } from "../forgive.ts";
import { fallbackReserveMs, SearchBudget } from "../_search_budget.ts";
import {
  answerWithin,
  asIndexed,
  foundInTime,
  hitBuilder,
  nothingFound,
  type PageScope,
  soundRead,
  throughGate,
  tierQueries,
} from "./_read.ts";
import {
  budgeted,
  type Candidate,
  CANDIDATE_COLUMNS,
  filterSql,
  matchesUnder,
  recentCandidates,
  SCORE,
  sortedRows,
  stoppable,
  TIER_SCORE,
  tiersUnder,
} from "./_sql.ts";
import { literalSearch } from "./literal.ts";
import type { GroupOptions, GroupResult, SearchGroup, SearchHit, SearchSort } from "./types.ts";

/** The most hits a literal scan reads to group them (it has no index to count with). */
const LITERAL_GROUP_SCAN = 10_000;

/** How many of the most recently captured matches a grouped search stopped in time groups. */
const RECENT_GROUP_SCAN = 2000;

/**
 * Searches like `search`, one result per conversation: its best hit (best ranked, whatever the
 * sort), how many hits it has, and the page of conversations after `offset` (in conversations),
 * ordered by best hit, newest hit or oldest hit. Past its budget, the conversations of the
 * matches found in time, as `search` gives them (newest captured first when not ranked).
 */
export function searchGroups(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: GroupOptions,
  now?: () => number,
): GroupResult {
  return soundRead(
    store,
    () => foundInTime(groupsWithin(store, adapters, redact, asIndexed(options), now), "groups"),
  );
}

function groupsWithin(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  options: GroupOptions,
  now?: () => number,
): GroupResult {
  const perGroup = Math.max(1, Math.min(options.perGroup ?? 1, 50));
  // The same query forms as `search`, so grouping finds what the hits list finds.
  return answerWithin(store, adapters, redact, options, now, {
    counted: "conversations",
    indexed: (scope) => {
      const found = runLevels(
        scope.forgiveness,
        options.query,
        (tiers) => groupPage(scope, tiers, perGroup, redact),
        (searched) => nothingFound(store, cjkQuery(searched)),
      );
      return found.forgiven ? { ...found, forgiven: mapStrings(found.forgiven, redact) } : found;
    },
    literal: ({ store, deriver, budget, offset, limit }, matcher, note) => {
      const scan = { offset: 0, limit: LITERAL_GROUP_SCAN };
      const found = literalSearch(store, deriver, options, matcher, scan, budget);
      return groupFound(
        found.hits.map((hit, i) => ({
          conversation: hit.conversation,
          row: hit,
          built: { hit, ranges: found.highlights[i] ?? [] },
        })),
        { offset, limit, perGroup, complete: !found.stopped && found.next === null },
        null,
        budget,
        { mode: "literal", order: "scanned", redact, stopped: found.stopped, note, ftsQuery: null },
      );
    },
  });
}

/**
 * The page of conversations of `tiers` (as `ftsPage` ranks them), each group's hits through the
 * gate.
 */
function groupPage(
  scope: PageScope,
  tiers: readonly Tier[],
  perGroup: number,
  redact: Redactor,
): LevelPage<GroupResult> {
  const { store, options, budget, offset, limit } = scope;
  const widest = tiers.at(-1)!;
  const candidateQuery = cjkQuery(widest.query);
  const relevance = (options.sort ?? "relevance") === "relevance";
  const matching = relevance && tiers.length > 1 ? tierQueries(tiers) : candidateQuery;
  const build = hitBuilder(scope, widest.level);
  const reserve = fallbackReserveMs(budget.ms);
  budget.endBefore(reserve);
  const rows = stoppable(
    budget,
    () => ftsGroups(store, matching, options, { offset, limit: limit + 1, perGroup }),
  );
  // Past the last page, whether there was a first one.
  const found = rows === null || rows.length > 0 ||
    (offset > 0 && stoppable(budget, () => matchesAny(store, candidateQuery, options)) !== false);
  if (rows === null) {
    budget.endBefore(reserve / 2);
    const recent = recentCandidates(store, candidateQuery, options, RECENT_GROUP_SCAN, budget);
    budget.endBefore(0);
    const result = groupFound(
      recent.map((row) => ({ conversation: row.key, row, built: null })),
      { offset, limit, perGroup, complete: false },
      build,
      budget,
      { mode: "fts", order: "recent", redact, note: null, ftsQuery: candidateQuery },
    );
    return { found, best: 0, result };
  }
  budget.endBefore(0);
  // Rows come group by group, best hit first.
  const byGroup: GroupRow[][] = [];
  for (const row of rows) {
    if (row.rank === 1) byGroup.push([]);
    byGroup.at(-1)?.push(row);
  }
  const page = byGroup.slice(0, limit);
  const built: { hit: SearchHit; ranges: Snippet["ranges"] }[][] = [];
  for (const group of page) {
    if (budget.spent()) break;
    built.push(group.map((row) => {
      const b = build(row);
      return { hit: throughGate(b.hit, redact), ranges: b.ranges };
    }));
  }
  const stopped = built.length < page.length;
  // Found only wider than typed, the widest tier found is what the page searched.
  const best = rows[0]?.tier ? rows.reduce((most, row) => Math.max(most, row.tier ?? 0), 0) : 0;
  return {
    found,
    best: tiers[best]!.level,
    result: {
      groups: built.map((group, i) => ({
        ...group[0]!.hit,
        score: page[i]![0]!.best,
        hits: page[i]![0]!.hits,
        ...(perGroup > 1
          ? { top: { hits: group.map((b) => b.hit), highlights: group.map((b) => b.ranges) } }
          : {}),
      })),
      highlights: built.map((group) => group[0]!.ranges),
      mode: "fts",
      note: null,
      ftsQuery: candidateQuery,
      next: byGroup.length > limit && !stopped ? offset + limit : null,
      total: rows[0]?.total ?? (offset === 0 ? 0 : null),
      stopped,
      stopNote: stopped ? budget.note(built.length, "ranked", "conversation") : null,
    },
  };
}

/** Whether `query` matches any record under `filters`. */
function matchesAny(store: HistoryStore, query: string, filters: SearchFilters): boolean {
  const filter = filterSql(filters);
  const sql = `SELECT 1 ${matchesUnder(store, filter)} LIMIT 1`;
  return budgeted(store, sql, (statement) => statement.get(query, ...filter.params) !== undefined);
}

/**
 * Groups matches (in the order given: each conversation's first is its shown hit) into the page
 * of conversations after `page.offset`, building the shown hits (up to `page.perGroup` of each,
 * in that order) with `build` while the budget lasts. `complete` says that every match was found
 * (then the count of conversations is known).
 */
function groupFound<R>(
  found: {
    conversation: string;
    row: R;
    built: { hit: SearchHit; ranges: Snippet["ranges"] } | null;
  }[],
  page: { offset: number; limit: number; perGroup: number; complete: boolean },
  build: ((row: R) => { hit: SearchHit; ranges: Snippet["ranges"] }) | null,
  budget: SearchBudget,
  how: {
    mode: "fts" | "literal";
    order: "recent" | "scanned";
    redact: Redactor;
    stopped?: boolean;
    note: string | null;
    ftsQuery: string | null;
  },
): GroupResult {
  const byConversation = new Map<string, { items: (typeof found)[number][]; hits: number }>();
  for (const item of found) {
    const seen = byConversation.get(item.conversation);
    if (seen) {
      seen.hits++;
      if (seen.items.length < page.perGroup) seen.items.push(item);
    } else byConversation.set(item.conversation, { items: [item], hits: 1 });
  }
  const all = [...byConversation.values()];
  const shown = all.slice(page.offset, page.offset + page.limit);
  const groups: SearchGroup[] = [];
  const highlights: Snippet["ranges"][] = [];
  let stopped = how.stopped ?? how.order === "recent";
  for (const { items, hits } of shown) {
    const top: { hit: SearchHit; ranges: Snippet["ranges"] }[] = [];
    for (const item of items) {
      let built = item.built;
      if (!built) {
        if (budget.spent() || !build) break;
        built = build(item.row);
      }
      top.push({ hit: throughGate(built.hit, how.redact), ranges: built.ranges });
    }
    if (!top.length) {
      stopped = true;
      break;
    }
    groups.push({
      ...top[0]!.hit,
      hits,
      ...(page.perGroup > 1
        ? { top: { hits: top.map((t) => t.hit), highlights: top.map((t) => t.ranges) } }
        : {}),
    });
    highlights.push(top[0]!.ranges);
  }
  return {
    groups,
    highlights,
    mode: how.mode,
    note: how.note,
    ftsQuery: how.ftsQuery,
    next: all.length > page.offset + page.limit && groups.length === shown.length
      ? page.offset + page.limit
      : null,
    total: page.complete && !stopped ? all.length : null,
    stopped,
    stopNote: stopped ? budget.note(groups.length, how.order, "conversation") : null,
  };
}

/** Each group sort as an ORDER BY over the grouped conversations. */
const GROUP_ORDER: Record<SearchSort, string> = {
  relevance: "g.best, g.conversation_id DESC",
  newest: "g.newest IS NULL, g.newest DESC, g.conversation_id DESC",
  oldest: "g.oldest IS NULL, g.oldest, g.conversation_id",
};

/** One of a group's best hits (`rank` 1 is the best), with its group's figures. */
type GroupRow = Candidate & { hits: number; total: number; best: number; rank: number };

/**
 * The page of conversations with a hit, each with its hit count and its `perGroup` best-ranked
 * records, best first, group by group.
 */
function ftsGroups(
  store: HistoryStore,
  query: string | string[],
  filters: SearchFilters & { sort?: SearchSort },
  page: { offset: number; limit: number; perGroup: number },
): GroupRow[] {
  const filter = filterSql(filters);
  // Queries of tiers (`tierQueries`): a conversation ranks by its best tier, then its best
  // score there; its hits likewise.
  const tiered = typeof query !== "string";
  const order = tiered
    ? `g.tier, ${GROUP_ORDER.relevance}`
    : GROUP_ORDER[filters.sort ?? "relevance"];
  const sql = `
    WITH matched AS MATERIALIZED (
      SELECT r.id, r.conversation_id, r.ts, ${
    tiered
      ? `m.tier, ${TIER_SCORE} AS score ${tiersUnder(store, query.length, filter)}`
      : `${SCORE} AS score
      ${matchesUnder(store, filter)}`
  }
    ),
    g AS (
      SELECT conversation_id, count(*) AS hits, ${
    tiered
      ? `min(tier) AS tier, min(tier * ${TIER_STEP} + score) - min(tier) * ${TIER_STEP} AS best`
      : "min(score) AS best"
  }, max(ts) AS newest, min(ts) AS oldest
      FROM matched GROUP BY conversation_id
    ),
    paged AS (
      SELECT g.*, count(*) OVER () AS total FROM g
      ORDER BY ${order}
      LIMIT ? OFFSET ?
    ),
    ranked AS (
      SELECT m.id, m.conversation_id, m.score,
             row_number() OVER (PARTITION BY m.conversation_id ORDER BY ${
    tiered ? "m.tier, " : ""
  }m.score, m.id DESC) AS rank
      FROM matched m WHERE m.conversation_id IN (SELECT conversation_id FROM paged)
    )
    SELECT ${CANDIDATE_COLUMNS}, k.score, k.rank, p.best, p.hits, p.total${tiered ? ", p.tier" : ""}
    FROM paged p
    JOIN ranked k ON k.conversation_id = p.conversation_id AND k.rank <= ?
    JOIN records r ON r.id = k.id
    JOIN conversations c ON c.id = p.conversation_id
    ORDER BY ${order.replaceAll("g.", "p.")}, k.rank`;
  return budgeted(
    store,
    sql,
    (statement) =>
      sortedRows(
        statement,
        ...(tiered ? query : [query]),
        ...filter.params,
        page.limit,
        page.offset,
        page.perGroup,
      ),
  ) as unknown as GroupRow[];
}

/** Far more than any score: a tier's scores, so offset, sort after every score of the tier before. */
const TIER_STEP = 1e9;
