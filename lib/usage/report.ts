// Usage reports from the store's `usage` table (one row per model call, filled by capture): tokens
// and cost per day, week, month, session or project, in a time zone, with the usual filters. The
// store answers; the transcripts are never read again.

import type { HistoryStore } from "../store/db.ts";
import { PriceBook, type Tokens } from "./prices.ts";

/** How a report groups calls. */
export type Period = "daily" | "weekly" | "monthly" | "session" | "project";
export const PERIODS: readonly Period[] = ["daily", "weekly", "monthly", "session", "project"];

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
  /** One line per model inside each period. */
  breakdown?: boolean;
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
  /** With `breakdown`: one per model, most expensive first. */
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
}

interface CallRow {
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
    `SELECT u.ts, u.model, u.input, u.output, u.cache_write, u.cache_read, u.cost,
       coalesce(p.key, c.key) AS session, coalesce(p.title, c.title) AS title,
       c.project_root AS project
     FROM usage u LEFT JOIN conversations c ON c.id = u.conversation_id
     LEFT JOIN conversations p ON p.key = c.parent_key
     ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY u.ts, u.record_id`,
  ).all(...args) as unknown as CallRow[];
  const keyOf = grouping(query);
  const groups = new Map<string, { line: UsageLine; byModel: Map<string, UsageTotals> }>();
  const totals = emptyTotals();
  const unpriced = new Map<string, number>();
  for (const row of rows) {
    const key = keyOf(row);
    let group = groups.get(key);
    if (!group) {
      const label = query.period === "session" ? row.title : null;
      group = { line: { key, label, models: [], ...emptyTotals() }, byModel: new Map() };
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
    let perModel = group.byModel.get(model);
    if (!perModel) group.byModel.set(model, perModel = emptyTotals());
    for (const into of [group.line, perModel, totals]) add(into, tokens, cost);
  }
  const lines = [...groups.values()].map(({ line, byModel }) => {
    line.models = [...byModel.keys()].sort();
    if (query.breakdown) {
      line.breakdown = [...byModel.entries()]
        .map(([model, t]) => ({ model, ...t }))
        .sort((a, b) => (b.cost ?? -1) - (a.cost ?? -1) || b.total - a.total);
    }
    return line;
  });
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
