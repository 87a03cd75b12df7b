// Usage reports from the store's `usage` table (one row per model call, filled by capture): tokens
// and cost per day, week, month, session or project, in a time zone, with the usual filters. The
// store answers; the transcripts are never read again.

import type { HistoryStore } from "../store/db.ts";
import { PriceBook, type Tokens } from "./prices.ts";

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

/** How long a billing block lasts: Claude's usage windows are five hours from their first hour. */
export const BLOCK_MS = 5 * 3_600_000;

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

interface CallRow {
  agent: string;
  ts: number | null;
  model: string | null;
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
  cost: number | null;
  session: string | null;
  title: string | null;
  project: string | null;
}

/** The report `query` asks for, priced with `prices`. */
export function usageReport(
  store: HistoryStore,
  query: UsageQuery,
  prices: PriceBook = new PriceBook(),
): UsageReport {
  const where: string[] = [];
  const args: (string | number)[] = [];
  const filter = (sql: string, value: string | number | undefined) => {
    if (value === undefined || value === "") return;
    where.push(sql);
    args.push(value);
  };
  filter("u.agent = ?", query.agent);
  filter("c.project_root = ?", query.project);
  filter("u.model = ?", query.model);
  filter("u.ts >= ?", query.since);
  filter("u.ts < ?", query.until);
  // A subagent's calls count in the session that ran it.
  const rows = store.stmt(
    `SELECT u.agent, u.ts, u.model, u.input, u.output, u.cache_write, u.cache_read, u.cost,
       coalesce(p.key, c.key) AS session, coalesce(p.title, c.title) AS title,
       c.project_root AS project
     FROM usage u LEFT JOIN conversations c ON c.id = u.conversation_id
     LEFT JOIN conversations p ON p.key = c.parent_key
     ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY u.ts, u.record_id`,
  ).all(...args) as unknown as CallRow[];
  const blocks = new Map<string, { start: number; first: number; last: number }>();
  const keyOf = query.period === "blocks" ? blockKeys(query.timeZone, blocks) : grouping(query);
  const groups = new Map<
    string,
    { line: UsageLine; byModel: Map<string, UsageTotals>; models: Set<string> }
  >();
  const totals = emptyTotals();
  const unpriced = new Map<string, number>();
  const dayOf = dayIn(query.timeZone);
  for (const row of rows) {
    if (query.day !== undefined && dayOf(row.ts) !== query.day) continue;
    const key = keyOf(row);
    let group = groups.get(key);
    if (!group) {
      const label = query.period === "session" ? row.title : null;
      group = {
        line: { key, label, models: [], ...emptyTotals() },
        byModel: new Map(),
        models: new Set(),
      };
      groups.set(key, group);
    }
    const model = row.model ?? "unknown";
    const tokens = {
      input: row.input,
      output: row.output,
      cacheWrite: row.cache_write,
      cacheRead: row.cache_read,
    };
    const cost = row.cost ?? prices.cost(row.model, tokens);
    if (cost === null) unpriced.set(model, (unpriced.get(model) ?? 0) + 1);
    group.models.add(model);
    const part = query.by === "agent" ? row.agent : model;
    let perModel = group.byModel.get(part);
    if (!perModel) group.byModel.set(part, perModel = emptyTotals());
    for (const into of [group.line, perModel, totals]) add(into, tokens, cost);
  }
  const lines = [...groups.values()].map(({ line, byModel, models }) => {
    line.models = [...models].sort();
    if (query.breakdown) {
      line.breakdown = [...byModel.entries()]
        .map(([model, t]) => ({ model, ...t }))
        .sort((a, b) => (b.cost ?? -1) - (a.cost ?? -1) || b.total - a.total);
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
    unpriced: [...unpriced.entries()].map(([model, calls]) => ({ model, calls }))
      .sort((a, b) => b.calls - a.calls),
    ...(query.period === "blocks" ? { active } : {}),
  };
}

/**
 * Groups calls, in time order, into five-hour blocks as Claude bills them: a block starts at the
 * hour of the first call after the last block ended and lasts five hours. Its key is its start,
 * local (`2026-11-30 04:00`).
 */
function blockKeys(
  timeZone: string,
  blocks: Map<string, { start: number; first: number; last: number }>,
): (row: CallRow) => string {
  const format = new Intl.DateTimeFormat("sv-SE", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  });
  let current: { key: string; start: number; first: number; last: number } | null = null;
  return (row) => {
    if (row.ts === null) return "unknown";
    if (!current || row.ts >= current.start + BLOCK_MS) {
      const start = Math.floor(row.ts / 3_600_000) * 3_600_000;
      current = { key: format.format(start), start, first: row.ts, last: row.ts };
      blocks.set(current.key, current);
    }
    current.last = row.ts;
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

function add(into: UsageTotals, tokens: Tokens, cost: number | null): void {
  into.input += tokens.input;
  into.output += tokens.output;
  into.cacheWrite += tokens.cacheWrite;
  into.cacheRead += tokens.cacheRead;
  into.total += tokens.input + tokens.output + tokens.cacheWrite + tokens.cacheRead;
  into.calls++;
  if (cost === null) into.unpriced++;
  else into.cost = (into.cost ?? 0) + cost;
}

/** What a call is grouped by in `query`'s period. */
function grouping(query: UsageQuery): (row: CallRow) => string {
  if (query.period === "session") return (row) => row.session ?? "(no conversation)";
  if (query.period === "project") return (row) => row.project ?? "(no project)";
  const day = dayIn(query.timeZone);
  if (query.period === "monthly") return (row) => day(row.ts).slice(0, 7);
  if (query.period === "weekly") return (row) => mondayOf(day(row.ts));
  return (row) => day(row.ts);
}

/** The local date (`YYYY-MM-DD`) of an epoch ms in `timeZone`; `unknown` without a time. */
function dayIn(timeZone: string): (ts: number | null) => string {
  const format = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  });
  const memo = new Map<number, string>();
  return (ts) => {
    if (ts === null) return "unknown";
    // Calls of one quarter hour share their date in every zone (offsets are whole quarters).
    const hour = Math.floor(ts / 900_000);
    let date = memo.get(hour);
    if (date === undefined) memo.set(hour, date = format.format(ts));
    return date;
  };
}

/** The Monday that starts the ISO week of a `YYYY-MM-DD` date. */
function mondayOf(date: string): string {
  if (date === "unknown") return date;
  const at = new Date(`${date}T00:00:00Z`);
  const back = (at.getUTCDay() + 6) % 7;
  return new Date(at.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}

/** True for a time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
