// Searching and paging the team database: PostgreSQL's own full-text search (`websearch` syntax
// over the 'simple' configuration, ranked with ts_rank), and `pg_trgm`'s substring match where
// words cannot find the text (CJK runs and symbols, which the 'simple' parser keeps whole or
// drops). Every hit says which machine it came from.

import type { Sql } from "postgres";
import type { Redactor } from "../gate.ts";

export interface TeamSearchOptions {
  query: string;
  machine?: string;
  /** Canonical project root. */
  project?: string;
  agent?: string;
  kind?: string;
  role?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  limit?: number;
  offset?: number;
}

/** One hit of `search --team`: the fields of `search --json`, and the machine. */
export interface TeamHit {
  machine: string;
  conversation: string;
  record: number;
  title: string | null;
  agent: string;
  project: string | null;
  cwd: string | null;
  timestamp: string | null;
  kind: string;
  role: string | null;
  snippet: string;
  score: number;
}

export interface TeamSearchResult {
  hits: TeamHit[];
  /** `fts`, or `substring` when the query has no word the index holds (CJK, symbols). */
  mode: "fts" | "substring";
}

const SNIPPET_CHARS = 160;

/** Searches the team database; every string of a hit passes `redact` (this user's labels too). */
export async function teamSearch(
  sql: Sql,
  redact: Redactor,
  options: TeamSearchOptions,
): Promise<TeamSearchResult> {
  const query = options.query.trim();
  if (!query) throw new RangeError("The search query is empty");
  const limit = Math.max(1, Math.min(options.limit ?? 20, 1000));
  const offset = Math.max(0, options.offset ?? 0);
  const filters = sql`
    ${options.machine ? sql`AND r.machine = ${options.machine}` : sql``}
    ${options.project ? sql`AND c.project = ${options.project}` : sql``}
    ${options.agent ? sql`AND c.agent = ${options.agent}` : sql``}
    ${options.kind ? sql`AND r.kind = ${options.kind}` : sql``}
    ${options.role ? sql`AND r.role = ${options.role}` : sql``}
    ${options.since !== undefined ? sql`AND r.ts >= ${new Date(options.since)}` : sql``}
    ${options.until !== undefined ? sql`AND r.ts < ${new Date(options.until)}` : sql``}`;
  const [parsed] = await sql<{ words: number }[]>`
    SELECT numnode(websearch_to_tsquery('simple', ${query})) AS words`;
  const words = parsed?.words ?? 0;
  let mode: TeamSearchResult["mode"] = "fts";
  let rows: Row[] = [];
  if (words > 0) {
    rows = await sql<Row[]>`
      SELECT r.machine, r.record_id, r.conversation_key, r.ts, r.kind, r.role, r.text,
        c.title, c.agent, c.project, c.cwd, ts_rank(r.tsv, q) AS score
      FROM logbook_records r
        JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key,
        websearch_to_tsquery('simple', ${query}) q
      WHERE r.tsv @@ q ${filters}
      ORDER BY score DESC, r.ts DESC NULLS LAST, r.record_id DESC
      LIMIT ${limit} OFFSET ${offset}`;
  }
  if (words === 0 || (rows.length === 0 && offset === 0 && /[^\p{ASCII}]/u.test(query))) {
    mode = "substring";
    const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    rows = await sql<Row[]>`
      SELECT r.machine, r.record_id, r.conversation_key, r.ts, r.kind, r.role, r.text,
        c.title, c.agent, c.project, c.cwd, 0::real AS score
      FROM logbook_records r
        JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
      WHERE r.text ILIKE ${pattern} ${filters}
      ORDER BY r.ts DESC NULLS LAST, r.record_id DESC
      LIMIT ${limit} OFFSET ${offset}`;
  }
  const terms = query.toLowerCase().split(/[\s"()*]+/).filter((t) =>
    t && !/^(or|and|not)$/.test(t)
  );
  return {
    mode,
    hits: rows.map((row) => ({
      machine: row.machine,
      conversation: redact(row.conversation_key),
      record: Number(row.record_id),
      title: row.title === null ? null : redact(row.title),
      agent: row.agent,
      project: row.project === null ? null : redact(row.project),
      cwd: row.cwd === null ? null : redact(row.cwd),
      timestamp: row.ts === null ? null : new Date(row.ts).toISOString(),
      kind: row.kind,
      role: row.role,
      snippet: redact(snippet(row.text, mode === "substring" ? [query.toLowerCase()] : terms)),
      score: Number(row.score),
    })),
  };
}

interface Row {
  machine: string;
  record_id: number;
  conversation_key: string;
  ts: Date | null;
  kind: string;
  role: string | null;
  text: string;
  title: string | null;
  agent: string;
  project: string | null;
  cwd: string | null;
  score: number;
}

/** About `SNIPPET_CHARS` of `text` around the first of `terms`, on one line. */
export function snippet(text: string, terms: string[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  const at = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ??
    0;
  const start = Math.max(0, at - SNIPPET_CHARS / 3);
  const cut = flat.slice(start, start + SNIPPET_CHARS);
  return `${start > 0 ? "…" : ""}${cut}${start + SNIPPET_CHARS < flat.length ? "…" : ""}`;
}

/** One record of a pushed conversation, as `show --team --json` prints it. */
export interface TeamRecord {
  id: number;
  timestamp: string | null;
  kind: string;
  role: string | null;
  text: string;
}

/** The machines that pushed a conversation with this id (to tell which one is meant). */
export async function teamMachinesOf(sql: Sql, key: string): Promise<string[]> {
  const rows = await sql<{ machine: string }[]>`
    SELECT machine FROM logbook_conversations WHERE key = ${key} ORDER BY machine`;
  return rows.map((r) => r.machine);
}

/** A page of a pushed conversation after record `after`; `next` is null on the last page. */
export async function teamPage(
  sql: Sql,
  redact: Redactor,
  machine: string,
  key: string,
  options: { after?: number; limit?: number } = {},
): Promise<{ title: string | null; records: TeamRecord[]; next: number | null } | null> {
  const [conversation] = await sql<{ title: string | null }[]>`
    SELECT title FROM logbook_conversations WHERE machine = ${machine} AND key = ${key}`;
  if (!conversation) return null;
  const limit = Math.max(1, options.limit ?? 100);
  const rows = await sql<
    { record_id: number; ts: Date | null; kind: string; role: string | null; text: string }[]
  >`
    SELECT record_id, ts, kind, role, text FROM logbook_records
    WHERE machine = ${machine} AND conversation_key = ${key} AND record_id > ${options.after ?? 0}
    ORDER BY record_id LIMIT ${limit + 1}`;
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    title: conversation.title === null ? null : redact(conversation.title),
    records: page.map((r) => ({
      id: Number(r.record_id),
      timestamp: r.ts === null ? null : new Date(r.ts).toISOString(),
      kind: r.kind,
      role: r.role,
      text: redact(r.text),
    })),
    next: more ? Number(page.at(-1)!.record_id) : null,
  };
}
