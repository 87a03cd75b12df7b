// Usage reports from the store's `usage` table (one row per model call, filled by capture): tokens
// and cost per day, week, month, session or project, in a time zone, with the usual filters. The
// store answers; the transcripts are never read again. SQLite sums the calls per period, agent,
// model and tier, mostly from the sums it keeps per quarter hour (migration 0015), and a few
// hundred sums are priced here: per model and tier, which prices a call exactly as alone.

import type { HistoryStore } from "../store/db.ts";
import { HOUR, QUARTER, tierOf } from "../store/schema.ts";
import { PriceBook, type Tokens } from "./prices.ts";
import { quartersFillPending } from "./quarters_fill.ts";
import { dateOfDay, dayOfDate, floorDiv, localDaySql, wholeSteps, zoneSteps } from "./_zone.ts";

/** How a report groups calls. */
export type Period = "daily" | "weekly" | "monthly" | "session" | "project" | "blocks";
export const PERIODS: readonly Period[] = [
  "daily",
  "weekly",
  "monthly",
  "session",
  "project",
  "blocks",
];

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** How long a billing block lasts: Claude's usage windows are five hours from their first hour. */
export const BLOCK_MS = 5 * HOUR_MS;

/** Which calls a report counts, and how. */
export interface UsageQuery {
  period: Period;
  /** An IANA time zone for dates (`Europe/Berlin`). */
  timeZone: string;
  agent?: string;
  /** A project root, as the store records it. */
  project?: string;
  model?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** One line per model (or per agent, `by`) inside each period. */
  breakdown?: boolean;
  /** What the breakdown is by (default the model). */
  by?: "model" | "agent";
  /** Only calls on this local day (`2026-11-30`) in `timeZone`. */
  day?: string;
  /** The time now (epoch ms), for the block still running (`blocks`). */
  now?: number;
}

/** Tokens and cost of a group of calls. */
export interface UsageTotals extends Tokens {
  total: number;
  /** USD of the calls that have a cost (recorded, or priced); null when none has one. */
  cost: number | null;
  calls: number;
  /** Calls that could not be priced. */
  unpriced: number;
}

/** One line of a report: a period (a day, a session…) and what its calls used. */
export interface UsageLine extends UsageTotals {
  /** `2026-11-30`, `2026-W48` (its Monday's date), `2026-11`, a conversation id or a project. */
  key: string;
  /** A session's title or a project's root, to show beside the key. */
  label?: string | null;
  models: string[];
  /** With `breakdown`: one per model (or agent), most expensive first. */
  breakdown?: (UsageTotals & { model: string })[];
}

/** A whole report. */
export interface UsageReport {
  period: Period;
  timeZone: string;
  lines: UsageLine[];
  totals: UsageTotals;
  /** Models with calls that could not be priced, with how many. */
  unpriced: { model: string; calls: number }[];
  /** With `blocks`: the block still running now, its time left and its pace. */
  active?: ActiveBlock | null;
}

/** The five-hour block still running: how long it has left and how fast it is spent. */
export interface ActiveBlock {
  key: string;
  /** Epoch ms when it ends. */
  endsAt: number;
  minutesLeft: number;
  /** Tokens a minute and USD an hour since its first call (null: no priced call). */
  tokensPerMinute: number;
  costPerHour: number | null;
  /** Its cost at this pace when it ends. */
  projectedCost: number | null;
}

/** One group of calls as the store sums them: a period's (or session's…) calls of one kind. */
interface GroupRow {
  /** The local day, the UTC hour (blocks), the session or the project; null: none. */
  grp: number | string | null;
  /** A session's title, from its first call. */
  label: string | null;
  /** The times of the group's first and last calls (last only for blocks). */
  first: number | null;
  last: number | null;
  agent: string;
  model: string | null;
  tier: number;
  calls: number;
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
  /** The costs the agent recorded (tier 2). */
  cost: number;
}

/** The tier of calls whose cost the agent recorded (migration 0015). */
const RECORDED = 2;

/** The report `query` asks for, priced with `prices`. */
export function usageReport(
  store: HistoryStore,
  query: UsageQuery,
  prices: PriceBook = new PriceBook(),
): UsageReport {
  const rows = groupRows(store, query);
  const groups = new Map<string, Group>();
  const totals = emptyTotals();
  const unpriced = new Map<string, { calls: number; first: number }>();
  const blocks = new Map<string, { start: number; first: number; last: number }>();
  const keyOf = query.period === "blocks" ? blockKeys(query.timeZone, blocks) : grouping(query);
  if (query.period === "blocks") {
    rows.sort((a, b) => (a.grp as number ?? -Infinity) - (b.grp as number ?? -Infinity));
  }
  for (const row of rows) {
    const key = keyOf(row);
    const first = row.first ?? -Infinity;
    let group = groups.get(key);
    if (!group) {
      group = {
        line: { key, label: null, models: [], ...emptyTotals() },
        parts: new Map(),
        models: new Set(),
        first,
        labelAt: Infinity,
      };
      groups.set(key, group);
    }
    group.first = Math.min(group.first, first);
    if (query.period === "session" && first < group.labelAt) {
      group.labelAt = first;
      group.line.label = row.label;
    }
    const model = row.model ?? "unknown";
    const tokens = {
      input: row.input,
      output: row.output,
      cacheWrite: row.cache_write,
      cacheRead: row.cache_read,
    };
    const cost = row.tier === RECORDED ? row.cost : prices.cost(row.model, tokens, row.tier === 1);
    if (cost === null) {
      const seen = unpriced.get(model) ?? { calls: 0, first };
      unpriced.set(model, { calls: seen.calls + row.calls, first: Math.min(seen.first, first) });
    }
    group.models.add(model);
    const name = query.by === "agent" ? row.agent : model;
    let part = group.parts.get(name);
    if (!part) group.parts.set(name, part = { ...emptyTotals(), model: name, first });
    part.first = Math.min(part.first, first);
    for (const into of [group.line, part, totals]) add(into, tokens, cost, row.calls);
  }
  // Groups in the order of their first calls, as they come in time.
  const ordered = [...groups.values()].sort((a, b) => a.first - b.first);
  const lines = ordered.map(({ line, parts, models }) => {
    line.models = [...models].sort();
    if (query.breakdown) {
      line.breakdown = [...parts.values()]
        .sort((a, b) => a.first - b.first)
        .sort((a, b) => (b.cost ?? -1) - (a.cost ?? -1) || b.total - a.total)
        .map(({ first: _, ...part }) => part);
    }
    return line;
  });
  const active = query.period === "blocks"
    ? activeBlock(lines, blocks, query.now ?? Date.now())
    : null;
  if (query.period === "session" || query.period === "project") {
    lines.sort((a, b) => (b.cost ?? -1) - (a.cost ?? -1) || b.total - a.total);
  } else lines.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    period: query.period,
    timeZone: query.timeZone,
    lines,
    totals,
    unpriced: [...unpriced.entries()]
      .sort((a, b) => b[1].calls - a[1].calls || a[1].first - b[1].first)
      .map(([model, { calls }]) => ({ model, calls })),
    ...(query.period === "blocks" ? { active } : {}),
  };
}

/** A line being summed, with its parts and the time of its first call. */
interface Group {
  line: UsageLine;
  parts: Map<string, UsageTotals & { model: string; first: number }>;
  models: Set<string>;
  first: number;
  /** The time of the call the label is from. */
  labelAt: number;
}

/**
 * The store's calls `query` counts, summed in SQL per group of the period, agent, model and
 * tier: from the sums of whole quarter hours (migration 0015) where the store has them and the
 * zone's days are made of whole quarter hours, and from the calls themselves for the rest (the
 * quarter hours `since` and `until` cut, calls without a time, a store not summed yet).
 */
function groupRows(store: HistoryStore, query: UsageQuery): GroupRow[] {
  const bySession = query.period === "session" || query.period === "project" ||
    !!query.project;
  // Two subqueries: each reads one end of the index, where one min() and max() would scan it.
  const span = store.stmt(
    "SELECT (SELECT min(ts) FROM usage) AS lo, (SELECT max(ts) FROM usage) AS hi",
  ).get() as {
    lo: number | null;
    hi: number | null;
  };
  const steps = zoneSteps(query.timeZone, (span.lo ?? 0) - DAY_MS, (span.hi ?? 0) + DAY_MS);
  // The span asked for; a day is found by its local day number within a wider span.
  let lo = query.since ?? -Infinity;
  let hi = query.until ?? Infinity;
  const day = query.day === undefined ? null : dayOfDate(query.day);
  if (day !== null) {
    lo = Math.max(lo, day * DAY_MS - 14 * HOUR_MS);
    hi = Math.min(hi, (day + 1) * DAY_MS + 14 * HOUR_MS);
  }
  const bounded = Number.isFinite(lo) || Number.isFinite(hi);
  // The sums by the hour where an hour lies in one local day (and always for blocks, which start
  // on whole hours), by the quarter hour where a quarter does; none in a zone too odd for both.
  const step =
    !bySession && (wholeSteps(steps, HOUR.ms) || (query.period === "blocks" && day === null))
      ? HOUR
      : QUARTER;
  const table = bySession
    ? "usage_conversation_quarters"
    : step === HOUR
    ? "usage_hours"
    : "usage_quarters";
  // Whole steps inside [lo, hi) come from the sums, the rest from the calls.
  const qLo = Number.isFinite(lo) ? Math.ceil(lo / step.ms) : -Infinity;
  const qHi = Number.isFinite(hi) ? Math.floor(hi / step.ms) : Infinity;
  const summed = wholeSteps(steps, QUARTER.ms) && qLo < qHi && sumsReady(store);
  // Each source: what it reads (its rows as `s`) and which of them, with its arguments.
  const sources: { from: string; where: string[]; args: number[] }[] = [];
  const calls = (where: string[], ...args: number[]) =>
    sources.push({
      from: `(SELECT u.ts AS x, u.ts AS first_ts, u.ts AS last_ts, u.conversation_id, u.agent,
        u.model, ${tierOf("u")} AS tier, 1 AS calls, u.input, u.output, u.cache_write,
        u.cache_read, coalesce(u.cost, 0) AS cost FROM usage u WHERE ${where.join(" AND ")})`,
      where: [],
      args,
    });
  if (summed) {
    const range = [
      ...(Number.isFinite(qLo) ? [`${step.column} >= ${qLo}`] : []),
      ...(Number.isFinite(qHi) ? [`${step.column} < ${qHi}`] : []),
    ];
    sources.push({
      from: `(SELECT ${step.column} * ${step.ms} AS x, * FROM ${table}
        ${range.length ? `WHERE ${range.join(" AND ")}` : ""})`,
      where: [],
      args: [],
    });
    if (Number.isFinite(lo)) calls(["u.ts >= ?", "u.ts < ?"], lo, qLo * step.ms);
    if (Number.isFinite(hi)) calls(["u.ts >= ?", "u.ts < ?"], qHi * step.ms, hi);
  } else if (bounded) {
    const where = [];
    if (Number.isFinite(lo)) where.push("u.ts >= ?");
    if (Number.isFinite(hi)) where.push("u.ts < ?");
    calls(where, ...[lo, hi].filter(Number.isFinite));
  } else calls(["u.ts IS NOT NULL"]);
  if (!bounded) calls(["u.ts IS NULL"]);
  const where: string[] = [];
  const args: string[] = [];
  const filter = (sql: string, value: string | undefined) => {
    if (value === undefined || value === "") return;
    where.push(sql);
    args.push(value);
  };
  filter("s.agent = ?", query.agent);
  filter("s.model = ?", query.model);
  filter("c.project_root = ?", query.project);
  const localDay = localDaySql("s.x", steps);
  if (day !== null) where.push(`${localDay} = ${day}`);
  // A subagent's calls count in the session that ran it.
  const grp = query.period === "session"
    ? "coalesce(p.key, c.key)"
    : query.period === "project"
    ? "c.project_root"
    : query.period === "blocks"
    ? floorDiv("s.x", HOUR_MS)
    : localDay;
  return sources.flatMap((source) => {
    const all = [...source.where, ...where];
    const sql = `SELECT ${grp} AS grp,
        ${query.period === "session" ? "coalesce(p.title, c.title)" : "NULL"} AS label,
        min(s.first_ts) AS first, ${query.period === "blocks" ? "max(s.last_ts)" : "NULL"} AS last,
        s.agent, s.model, s.tier, sum(s.calls) AS calls, sum(s.input) AS input,
        sum(s.output) AS output, sum(s.cache_write) AS cache_write,
        sum(s.cache_read) AS cache_read, total(s.cost) AS cost
      FROM ${source.from} s
      ${
      bySession
        ? `LEFT JOIN conversations c ON c.id = s.conversation_id
           LEFT JOIN conversations p ON p.key = c.parent_key`
        : ""
    }
      ${all.length ? `WHERE ${all.join(" AND ")}` : ""}
      GROUP BY 1, s.agent, s.model, s.tier`;
    return store.db.prepare(sql).all(...source.args, ...args) as unknown as GroupRow[];
  });
}

/** True when the store keeps the sums of migration 0015 and has summed every call. */
function sumsReady(store: HistoryStore): boolean {
  // A store opened for reading may lack the migration (readers need not wait for it).
  const kept = store.stmt("SELECT 1 FROM sqlite_schema WHERE name = 'usage_quarters_fill'").get();
  return kept !== undefined && !quartersFillPending(store);
}

/**
 * Groups rows, in time order, into five-hour blocks as Claude bills them: a block starts at the
 * hour of the first call after the last block ended and lasts five hours. Its key is its start,
 * local (`2026-11-30 04:00`).
 */
function blockKeys(
  timeZone: string,
  blocks: Map<string, { start: number; first: number; last: number }>,
): (row: GroupRow) => string {
  // `2026-11-30 04:00`: the local date and time to the minute.
  const format = (at: number) =>
    Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(timeZone).toPlainDateTime()
      .toString({ smallestUnit: "minute" }).replace("T", " ");
  let current: { key: string; start: number; first: number; last: number } | null = null;
  return (row) => {
    if (row.grp === null) return "unknown";
    // Rows of one hour lie in one block: blocks start and end on whole hours.
    const hour = (row.grp as number) * HOUR_MS;
    if (!current || hour >= current.start + BLOCK_MS) {
      current = { key: format(hour), start: hour, first: row.first!, last: row.last! };
      blocks.set(current.key, current);
    }
    current.first = Math.min(current.first, row.first!);
    current.last = Math.max(current.last, row.last!);
    return current.key;
  };
}

/** The block still running at `now`, if the last one is. */
function activeBlock(
  lines: readonly UsageLine[],
  blocks: Map<string, { start: number; first: number; last: number }>,
  now: number,
): ActiveBlock | null {
  const line = lines.at(-1);
  const block = line && blocks.get(line.key);
  if (!line || !block || now >= block.start + BLOCK_MS) return null;
  const minutes = Math.max(1, (Math.max(now, block.last) - block.first) / 60_000);
  const costPerHour = line.cost === null ? null : line.cost / (minutes / 60);
  const endsAt = block.start + BLOCK_MS;
  return {
    key: line.key,
    endsAt,
    minutesLeft: Math.ceil((endsAt - now) / 60_000),
    tokensPerMinute: line.total / minutes,
    costPerHour,
    projectedCost: costPerHour === null
      ? null
      : line.cost! + costPerHour * (endsAt - now) / 3_600_000,
  };
}

function emptyTotals(): UsageTotals {
  return {
    input: 0,
    output: 0,
    cacheWrite: 0,
    cacheRead: 0,
    total: 0,
    cost: null,
    calls: 0,
    unpriced: 0,
  };
}

function add(into: UsageTotals, tokens: Tokens, cost: number | null, calls: number): void {
  into.input += tokens.input;
  into.output += tokens.output;
  into.cacheWrite += tokens.cacheWrite;
  into.cacheRead += tokens.cacheRead;
  into.total += tokens.input + tokens.output + tokens.cacheWrite + tokens.cacheRead;
  into.calls += calls;
  if (cost === null) into.unpriced += calls;
  else into.cost = (into.cost ?? 0) + cost;
}

/** What a row is grouped by in `query`'s period. */
function grouping(query: UsageQuery): (row: GroupRow) => string {
  if (query.period === "session") return (row) => (row.grp as string | null) ?? "(no conversation)";
  if (query.period === "project") return (row) => (row.grp as string | null) ?? "(no project)";
  const dates = new Map<number, string>();
  const date = (row: GroupRow) => {
    if (row.grp === null) return "unknown";
    const day = row.grp as number;
    let known = dates.get(day);
    if (known === undefined) dates.set(day, known = dateOfDay(day));
    return known;
  };
  if (query.period === "monthly") return (row) => date(row).slice(0, 7);
  if (query.period === "weekly") return (row) => mondayOf(date(row));
  return date;
}

/** The Monday that starts the ISO week of a `YYYY-MM-DD` date. */
function mondayOf(date: string): string {
  if (date === "unknown") return date;
  const at = new Date(`${date}T00:00:00Z`);
  const back = (at.getUTCDay() + 6) % 7;
  return new Date(at.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}
/**
 * True for a time zone this runtime knows. Temporal, not Intl: Intl's first use loads locale data
 * (about 50 ms of a report), Temporal's only the zone.
 */
export function isTimeZone(name: string): boolean {
  try {
    new Temporal.ZonedDateTime(0n, name);
    return true;
  } catch {
    return false;
  }
}

/** This machine's time zone. */
export function localTimeZone(): string {
  return Temporal.Now.timeZoneId();
}
