// The history store's schema: the record flags and the ordered list of named migrations that
// build `history.db`. The storage model, for a newcomer:
//
// records. Every byte capture reads from a transcript is kept, exactly as read, in `records.raw`:
// one row per line (or per database row of a row source such as OpenCode's), keyed by (source,
// generation, offset). A line longer than the chunk size (64 KiB) spans several rows, `seq` 0, 1,
// …, at the offsets of its chunks, and its text is the first row's, whole. A chunk of 8 KiB or
// more is stored zstd-compressed when that saves an eighth (FLAG_ZSTD, its captured length in
// `length`); reading always gives back the exact bytes. Beside the bytes, each row holds what was
// derived from them: its conversation, time, kind, role, the ids of its message and part, and its
// flags (below). Raw is never rewritten; everything else can be derived again from it (`reindex
// --rebuild`).
//
// sources and generations. `sources` has one row per captured file or table: where it is, how
// far it was read (`cursor`, moved in the same transaction as the records it covers), and what
// identifies it (device and inode, size, mtime, a hash of its head, or a fingerprint for a
// database). When a file is replaced or rewritten rather than appended to, capture starts a new
// generation and keeps the old one's records; `generations` says when and why. `gone` marks a
// source that disappeared upstream (its records stay). `derivation` names the versions of its
// adapter and of the shared steps that derived its rows (`lib/capture/derivation.ts`).
//
// conversations. Derived: one row per conversation (`<agent>:<native id>`), with its project,
// cwd, title, first and last times and counts, updated as records arrive; `conversation_shares`
// holds what each source told it, so a source derived again (its adapter changed, see
// `sources.derivation`) replaces its share and the row is summed again. `record_keys` lets a
// newer revision of a keyed record (an OpenCode part) find the one it replaces; the older one
// is kept raw and leaves the index (FLAG_SUPERSEDED), and `record_changes` notes it for the
// project mirrors that copied it as it was. `drift` counts what capture could not
// understand, per agent version. `tombstones` names what `forget` removed, so capture does not
// bring it back, nor anything under it (a forgotten session's subagents, `tombstones.ts`).
//
// fts. The text index is FTS5 and contentless: it holds the index of each record's text (after
// the gate redacted it), not the text. A search finds record ids in it, then derives the text
// of the few records it shows again from their raw bytes, through the source's adapter and the
// gate, so the text is never stored a second time.
//
// meta. Small JSON values by key: `totals` (record count and raw bytes up to a record id, so
// status needs no scan), `progress` (the running capture's), `last_run`, `last_rebuild`, and
// `latched_failure`, the latch that stops capture after a failed migration or rebuild until
// `reindex --retry`.
//
// migrations. The schema below is applied step by step: each migration runs once, in its own
// transaction, in list order, and its name is kept in the `migrations` table. A change that
// must rewrite a large table (from 0008 on) only marks it here; the copy runs in bounded,
// resumable, verified batches (`batched_migration.ts`) while readers keep the old table.

/**
 * The memory FTS5 holds a connection's new terms in before it writes them as a segment (its
 * `hashsize`, migration 0017): above a batch's text, so that a batch writes one segment.
 */
export const FTS_HASH_BYTES = 2 * 1024 * 1024;

// Record flags (`records.flags`), one bit each.

/** The record's text is in the index (`fts`). */
export const FLAG_INDEXED = 1;
/**
 * A chunk of a line longer than `Limits.maxLine`, which capture streamed instead of parsing: the
 * line's text is in pieces, each indexed at the chunk it starts at (flagged FLAG_INDEXED) and
 * read back from the line's chunks (`_streamed_text.ts`).
 */
export const FLAG_STREAMED = 2;
/** Kept raw, not understood: an unknown type or an unparsable line (format drift). */
export const FLAG_DRIFT = 4;
/** An older revision of a keyed record: kept raw, out of the index. */
export const FLAG_SUPERSEDED = 8;
/** The chunk is stored zstd-compressed (`length` holds its captured length). */
export const FLAG_ZSTD = 16;
/**
 * One of the records of a conversation, from different sources, that show one thing (the same
 * message id): a tool's output preview, out of the index, and the file with the whole output.
 * `show` places them together, where the first is (`lib/store/conversations.ts`).
 */
export const FLAG_JOINED = 32;
/**
 * What the agent put into the conversation that nobody there wrote (`isInjected`: its rules, its
 * AGENTS.md, the environment): still found, ranked below what was said.
 */
export const FLAG_INJECTED = 64;

/** The index of what a search ranks and filters each record by (migration 0018). */
export const RANKING_INDEX = "records_ranking";
/** The index of what a search's filters read of each conversation (migration 0019). */
export const FILTERING_INDEX = "conversations_filtering";

/** One named schema step. `sql` runs inside a transaction unless `outsideTransaction` is set. */
export interface Migration {
  name: string;
  sql: string;
  outsideTransaction?: boolean;
  /**
   * Readers can do without this step: it only marks work a later capture does in batches, and
   * until that work is done readers use the tables as they were, or it adds a derived column
   * that readers take as empty until then. A store opened for reading is not written to apply it.
   */
  readersWait?: boolean;
}

/** A step of time the usage sums are kept by: its column and its length in ms. */
export interface SumStep {
  column: string;
  ms: number;
}
export const QUARTER: SumStep = { column: "quarter", ms: 900_000 };
export const HOUR: SumStep = { column: "hour", ms: 3_600_000 };

/**
 * Raw tables (`sources`, `records.raw`, `generations`) are kept forever; derived data
 * (`conversations`, `drift`, `fts`, and the derived columns of `records`) can be dropped and
 * rebuilt from raw by `reindex --rebuild`.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    // auto_vacuum takes effect only when set before the first table exists (a VACUUM could
    // change it later, but VACUUM needs ATTACH, which Deno's sandboxed SQLite forbids). The
    // store runs this before anything else on a new database. It lets `forget` give space back.
    name: "0001_incremental_vacuum",
    sql: "PRAGMA auto_vacuum = INCREMENTAL;",
    outsideTransaction: true,
  },
  {
    name: "0002_history_store",
    sql: `
      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      -- One row per captured file (or database table): where it is, how far it was read.
      CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        locator TEXT NOT NULL UNIQUE,
        format TEXT NOT NULL,
        generation INTEGER NOT NULL DEFAULT 1,
        cursor INTEGER NOT NULL DEFAULT 0,
        cursor_key TEXT,
        dev INTEGER,
        ino INTEGER,
        size INTEGER,
        mtime_ms INTEGER,
        head_hash TEXT,
        state TEXT,
        gone INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        first_seen INTEGER NOT NULL,
        last_read INTEGER
      ) STRICT;

      -- Why and when each generation of a source began; old generations keep their records.
      CREATE TABLE generations (
        source_id INTEGER NOT NULL REFERENCES sources(id),
        generation INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (source_id, generation)
      ) STRICT, WITHOUT ROWID;

      -- Raw chunks, exactly as read, keyed by (source, generation, offset). A line longer than
      -- the chunk size spans several rows (seq 0, 1, …). Everything after raw is derived.
      CREATE TABLE records (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources(id),
        generation INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        raw BLOB NOT NULL,
        conversation_id INTEGER,
        ts INTEGER,
        kind TEXT NOT NULL DEFAULT 'meta',
        role TEXT,
        message_id TEXT,
        part_id TEXT,
        flags INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE UNIQUE INDEX records_identity ON records (source_id, generation, offset);
      CREATE INDEX records_conversation ON records (conversation_id, id);

      -- Derived: one row per conversation, rebuilt from records.
      CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        agent TEXT NOT NULL,
        native_id TEXT NOT NULL,
        source_id INTEGER,
        project_root TEXT,
        project_key TEXT,
        cwd TEXT,
        branch TEXT,
        title TEXT,
        title_rank INTEGER NOT NULL DEFAULT 0,
        first_ts INTEGER,
        last_ts INTEGER,
        message_count INTEGER NOT NULL DEFAULT 0,
        record_count INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        parent_key TEXT,
        subagent INTEGER NOT NULL DEFAULT 0,
        archived INTEGER,
        agent_version TEXT,
        gone INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX conversations_project ON conversations (project_root, last_ts);
      CREATE INDEX conversations_parent ON conversations (parent_key);

      -- Derived: format drift per source generation and agent version.
      CREATE TABLE drift (
        source_id INTEGER NOT NULL,
        generation INTEGER NOT NULL,
        agent TEXT NOT NULL,
        version TEXT NOT NULL,
        category TEXT NOT NULL,
        detail TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (source_id, generation, version, category, detail)
      ) STRICT, WITHOUT ROWID;

      -- Derived: the text index. Contentless, so the text is not stored a second time: snippets
      -- are derived again from the raw bytes of the few records a search returns.
      CREATE VIRTUAL TABLE fts USING fts5(
        text,
        content = '',
        contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2'
      );
    `,
  },
  {
    // Row sources (another program's database): a fingerprint of its files instead of a
    // head hash, and keys so a record can find an earlier one (an OpenCode part its message)
    // and a newer revision can take an older one out of the index.
    name: "0003_row_sources_and_keys",
    sql: `
      ALTER TABLE sources ADD COLUMN fingerprint TEXT;

      -- Derived: the newest record stored under each key of a source.
      CREATE TABLE record_keys (
        source_id INTEGER NOT NULL,
        key TEXT NOT NULL,
        record_id INTEGER NOT NULL,
        PRIMARY KEY (source_id, key)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    // What `forget` removed: a later capture does not bring these conversations back while
    // their sources still exist. Not derived: a rebuild keeps them.
    name: "0004_tombstones",
    sql: `
      CREATE TABLE tombstones (
        key TEXT PRIMARY KEY,
        forgotten_at INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    // Capture writes the index in many small transactions: merging segments less eagerly (16
    // at a level instead of 4) makes capture about a fifth faster, for a few more segments
    // per query (search stays well under its budget).
    name: "0005_fts_merge_settings",
    sql: `
      INSERT INTO fts (fts, rank) VALUES ('automerge', 16);
    `,
  },
  {
    // Large chunks are stored zstd-compressed (flag 16): their captured length is kept here
    // (null for a chunk stored as it is, whose length is length(raw)).
    name: "0006_compressed_chunks",
    sql: "ALTER TABLE records ADD COLUMN length INTEGER;",
  },
  {
    // The raw bytes move to the last column: SQLite reads a row's columns in order, so every
    // column after a large blob meant walking its overflow pages. Searching, paging and
    // status read the derived columns of thousands of rows and never need the bytes.
    name: "0007_raw_last",
    sql: `
      CREATE TABLE records_next (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources(id),
        generation INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        conversation_id INTEGER,
        ts INTEGER,
        kind TEXT NOT NULL DEFAULT 'meta',
        role TEXT,
        message_id TEXT,
        part_id TEXT,
        flags INTEGER NOT NULL DEFAULT 0,
        length INTEGER,
        raw BLOB NOT NULL
      ) STRICT;
      INSERT INTO records_next (id, source_id, generation, offset, seq, conversation_id, ts, kind,
        role, message_id, part_id, flags, length, raw)
      SELECT id, source_id, generation, offset, seq, conversation_id, ts, kind, role,
        message_id, part_id, flags, length, raw
      FROM records;
      DROP TABLE records;
      ALTER TABLE records_next RENAME TO records;
      CREATE UNIQUE INDEX records_identity ON records (source_id, generation, offset);
      CREATE INDEX records_conversation ON records (conversation_id, id);
    `,
  },
  {
    // CJK runs are indexed as overlapping bigrams (`cjk.ts`), so a word inside a Chinese or
    // Japanese sentence is found. The index is derived text: a store that already indexed
    // records is marked for a new index, which the next capture run builds beside the old one
    // in bounded batches, verifies and switches in (`batched_migration.ts`, `cjk_index.ts`);
    // until then searches use the old index (and CJK queries the literal scan). A store without
    // indexed records has nothing to redo. `migration_batches` holds each batch's hashes.
    name: "0008_cjk_bigrams",
    readersWait: true,
    sql: `
      CREATE TABLE migration_batches (
        migration TEXT NOT NULL,
        batch INTEGER NOT NULL,
        first_id INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        source_hash BLOB NOT NULL,
        target_hash BLOB NOT NULL,
        PRIMARY KEY (migration, batch)
      ) STRICT, WITHOUT ROWID;
      INSERT INTO meta (key, value)
      SELECT 'index_upgrade', '{"reason":"cjk_bigrams"}'
      WHERE EXISTS (SELECT 1 FROM records WHERE (flags & ${FLAG_INDEXED}) != 0);
    `,
  },
  {
    // A subagent's type beside its title (Claude Code's `.meta.json` `agentType`: `Explore`).
    // Derived like the rest of the row: conversations captured before have none until a rebuild,
    // and a reader of a store without the column sees none.
    name: "0009_conversation_agent_type",
    readersWait: true,
    sql: "ALTER TABLE conversations ADD COLUMN agent_type TEXT;",
  },
  {
    // Records whose derived columns changed after they were written (a newer revision of an
    // OpenCode part, or the record a copy completes, took them out of the index), in the order
    // they changed. Project mirrors copy a record once and read this to bring their copies up
    // to date; it is trimmed to what they still need. Derived: a rebuild empties it.
    // AUTOINCREMENT: a trim often empties the table, and a seq given out again would sit at or
    // below a mirror's cursor, so the mirror would never read that change.
    name: "0010_record_changes",
    readersWait: true,
    sql: `
      CREATE TABLE record_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        record_id INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    // FLAG_INJECTED for the Codex records captured before capture marked them: this only leaves
    // the work in meta, and the next capture does it in batches, telling each message from its
    // text as capture does (lib/capture/injected_backfill.ts). Readers rank as before until then
    // (search names developer and system roles itself). A store without Codex has nothing to do.
    name: "0011_injected_flag",
    readersWait: true,
    sql: `
      INSERT INTO meta (key, value)
      SELECT 'injected_backfill', '{"after":0}'
      WHERE EXISTS (SELECT 1 FROM conversations WHERE agent = 'codex');
    `,
  },
  {
    // A tombstone covers what is under its conversation too (`tombstones.ts`): a forgotten
    // session's subagents and helper files, even those that appear later. Builds before this one
    // honoured only a tombstone's own key, so a store with tombstones may hold such children,
    // captured after their session was forgotten: this leaves the work in meta, and the next
    // capture forgets them (`forgetCovered` in forget.ts). Readers need not wait.
    name: "0012_tombstones_cover_children",
    readersWait: true,
    sql: `
      INSERT INTO meta (key, value)
      SELECT 'tombstone_sweep', '{}'
      WHERE EXISTS (SELECT 1 FROM tombstones);
    `,
  },
  {
    // Which derivation made each source's derived rows (`sources.derivation`: the shared version
    // and its adapter's, `lib/capture/derive.ts`), and each source's share of every conversation
    // row (`conversation_shares`), so that a source derived again replaces its own share alone.
    // A source without a derivation was captured by a build before this one: the next capture
    // derives it again in batches (`lib/capture/rederive.ts`), filling in its shares, while
    // readers keep the rows as they were. `conversations_to_sum` holds the conversations whose
    // rows are summed again from their shares once no source is left to derive again.
    name: "0013_derivations",
    readersWait: true,
    sql: `
      ALTER TABLE sources ADD COLUMN derivation TEXT;

      -- Derived: what the records of one source tell one conversation, summed as the
      -- conversation row is (lib/capture/conversation_rows.ts).
      CREATE TABLE conversation_shares (
        conversation_id INTEGER NOT NULL,
        source_id INTEGER NOT NULL,
        agent TEXT NOT NULL,
        native_id TEXT NOT NULL,
        project_root TEXT,
        project_key TEXT,
        cwd TEXT,
        branch TEXT,
        title TEXT,
        title_rank INTEGER NOT NULL DEFAULT 0,
        first_ts INTEGER,
        last_ts INTEGER,
        message_count INTEGER NOT NULL DEFAULT 0,
        record_count INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        parent_key TEXT,
        subagent INTEGER NOT NULL DEFAULT 0,
        archived INTEGER,
        agent_version TEXT,
        agent_type TEXT,
        PRIMARY KEY (conversation_id, source_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX conversation_shares_source ON conversation_shares (source_id);

      CREATE TABLE conversations_to_sum (id INTEGER PRIMARY KEY) STRICT;
    `,
  },
  {
    // Derived: the tokens and cost of each model call a record reports (`Derived.usage`), one
    // row per call, so `usage` totals a year of history from the store, never the transcripts.
    // A call several records repeat (one per content block of a Claude Code reply) is stored
    // once: the first record keeps it, or the newest where a revision replaces it (an OpenCode
    // message). Forgotten records take their rows with them. Stores from before are filled by
    // deriving their sources again (the adapters that record usage raised their derivation).
    name: "0014_usage",
    sql: `
      CREATE TABLE usage (
        record_id INTEGER PRIMARY KEY,
        conversation_id INTEGER,
        agent TEXT NOT NULL,
        call TEXT,
        ts INTEGER,
        model TEXT,
        input INTEGER NOT NULL,
        output INTEGER NOT NULL,
        cache_write INTEGER NOT NULL,
        cache_read INTEGER NOT NULL,
        cost REAL
      ) STRICT;
      CREATE UNIQUE INDEX usage_call ON usage (agent, call);
      CREATE INDEX usage_ts ON usage (ts);
      CREATE TRIGGER usage_of_deleted_records AFTER DELETE ON records BEGIN
        DELETE FROM usage WHERE record_id = old.id;
      END;
    `,
  },
  {
    // Derived: the `usage` table summed per quarter hour (a call's time in whole 15-minute steps
    // from the epoch) by agent, model and tier, again per conversation, and per hour, so a report
    // over a year of history reads thousands of sums instead of every call. A quarter hour lies in
    // one local day in every time zone (offsets and their changes are whole quarter hours), an
    // hour in one local day of most zones (not India's or Nepal's), and each in one five-hour
    // block. `tier` keeps apart what is priced differently: 2 a call whose cost the
    // agent recorded (`cost` sums those), 1 one whose input, cache included, is over 200,000
    // tokens (long-context prices, lib/usage/prices.ts), 0 the rest. Calls without a time are
    // not summed (reports read them from `usage`). Triggers keep the sums: a call added is
    // added; a call removed or changed sums its group again from `usage`, so no float is ever
    // subtracted. A store that held calls already is summed by the next capture in batches
    // (lib/usage/quarters_fill.ts): `usage_quarters_fill` holds the last call summed, the
    // triggers count only calls up to it, and reports read `usage` until the row is gone.
    name: "0015_usage_quarters",
    readersWait: true,
    sql: `
      CREATE TABLE usage_quarters_fill (after INTEGER NOT NULL) STRICT;
      INSERT INTO usage_quarters_fill (after) SELECT 0 WHERE EXISTS (SELECT 1 FROM usage);
      ${usageSums("usage_quarters", [], QUARTER)}
      ${usageSums("usage_conversation_quarters", ["conversation_id"], QUARTER)}
      ${usageSums("usage_hours", [], HOUR)}
    `,
  },
  {
    // The sums' triggers that sum a group again read its calls by their time: those of 0015 let
    // SQLite read every call of the agent instead, per call removed (forgetting a conversation
    // of 2,253 records took 3.6 s at 1 GB in them). Made anew as 0015 now makes them.
    name: "0016_usage_resum_by_time",
    sql: `
      ${usageSums("usage_quarters", [], QUARTER, "resum")}
      ${usageSums("usage_conversation_quarters", ["conversation_id"], QUARTER, "resum")}
      ${usageSums("usage_hours", [], HOUR, "resum")}
    `,
  },
  {
    // FTS5 writes the terms it holds as a new segment when they pass its hash size (1 MiB by
    // default) as well as at each commit: a batch's 512 KiB of text passed it, so most batches
    // wrote two segments, and merging twice as many cost a fifth of the index's time (the
    // store's FTS5 inserts of the 200 MB bench corpus: 4.4 to 4.5 s, 3.6 to 4.0 with 2 MiB).
    // That much more memory is held by each connection writing the index.
    name: "0017_fts_hash_size",
    sql: `
      INSERT INTO fts (fts, rank) VALUES ('hashsize', ${FTS_HASH_BYTES});
    `,
  },
  {
    // A search ranks and filters a word's matches by their records' kind, role, flags, time and
    // conversation: read from the records' own rows, a page of the store for each match (a
    // common word's 53,806 matches at 10 GB spent 0.3 s of their 0.43 there). This index holds
    // those columns in record order, about a hundred records to a page (1.2% of the store), and
    // search reads it where the store has it (`lib/store/search/_sql.ts`). One statement reads
    // every record once to build it (at 10 GB: about 16 s with the store read from the disk, 6.6
    // s from the page cache); readers do without it until a capture has built it. SQLite sorts
    // the entries as it builds, in temporary files here: in memory (temp_store = MEMORY) the
    // sort held the whole index, and the `reindex` that built it at 10 GB peaked at 476 MB
    // (241 MB with the files). The entries hold no text: ids, kinds, roles, flags and times.
    // SQLite changes where it sorts only outside a transaction, so the step is a statement of
    // its own, which commits whole or not at all, and may run again.
    name: "0018_ranking_index",
    readersWait: true,
    outsideTransaction: true,
    sql: `
      PRAGMA temp_store = FILE;
      CREATE INDEX IF NOT EXISTS ${RANKING_INDEX}
        ON records (id, kind, role, flags, conversation_id, ts);
      PRAGMA temp_store = MEMORY;
    `,
  },
  {
    // A search filtered on conversations (project, agent, subagents) looks each match's
    // conversation up, and so does the rule on typed prompts: in the table, each lookup reads a
    // row of titles, paths and sums, a few to a page. This index holds what the filters and the
    // rule read, by id, many more to a page (`lib/store/search/_sql.ts` reads it where the store
    // has it). At 10 GB (124,031 conversations), under a project, the statement that ranks a
    // word in 3,491 records took 51 ms and takes 43 with it, one in 53,806 records 317 and 277;
    // built in 7 s with the table read from the disk.
    name: "0019_conversation_filters",
    readersWait: true,
    sql: `
      CREATE INDEX IF NOT EXISTS ${FILTERING_INDEX}
        ON conversations (id, project_root, agent, subagent, message_count);
    `,
  },
];

/** SQL for the step (`ms` long) of a `usage` row's time (floored, also before the epoch). */
export function stepOf(row: string, ms: number): string {
  return `(${row}.ts / ${ms} - (${row}.ts % ${ms} < 0))`;
}

/** SQL for a `usage` row's tier (see migration 0015). */
export function tierOf(row: string): string {
  return `(CASE WHEN ${row}.cost IS NOT NULL THEN 2
    WHEN ${row}.input + ${row}.cache_write + ${row}.cache_read > 200000 THEN 1 ELSE 0 END)`;
}

/**
 * A table of `usage` summed per step of time, agent, model, tier and `keys`, with its index and
 * the triggers that keep it (migration 0015). Keys may be NULL, so groups are matched with IS.
 * With `only: "resum"`, the two triggers that sum a group again, made anew (migration 0016).
 */
function usageSums(
  table: string,
  keys: string[],
  step: SumStep,
  only?: "resum",
): string {
  const quarterOf = (row: string) => stepOf(row, step.ms);
  const group = (row: string) =>
    [
      `${step.column} = ${quarterOf(row)}`,
      ...[...keys, "agent", "model"].map((k) => `${k} IS ${row}.${k}`),
      `tier = ${tierOf(row)}`,
    ].join(" AND ");
  const keyColumns = [step.column, ...keys, "agent", "model", "tier"].join(", ");
  const keyValues = (row: string) =>
    [quarterOf(row), ...[...keys, "agent", "model"].map((k) => `${row}.${k}`), tierOf(row)]
      .join(", ");
  // The group of `row` summed again from `usage`: only calls the fill has reached count. Its
  // calls are found by their time (`usage_ts`, a quarter hour or an hour of calls): the unary `+`
  // keeps SQLite, which has no statistics to weigh them by, from taking `usage_call` for the
  // agent instead, which reads every call of the agent (15 ms a call removed at 1 GB, minutes
  // for one conversation at 10 GB; migration 0016).
  const sumAgain = (row: string) => `
    DELETE FROM ${table} WHERE ${group(row)};
    INSERT INTO ${table} (${keyColumns}, calls, input, output, cache_write, cache_read, cost,
      first_ts, last_ts)
    SELECT ${keyValues(row)}, count(*), sum(u.input), sum(u.output), sum(u.cache_write),
      sum(u.cache_read), total(u.cost), min(u.ts), max(u.ts)
    FROM usage u
    WHERE u.ts >= ${quarterOf(row)} * ${step.ms}
      AND u.ts < ${quarterOf(row)} * ${step.ms} + ${step.ms}
      AND ${[...keys, "agent", "model"].map((k) => `+u.${k} IS ${row}.${k}`).join(" AND ")}
      AND ${tierOf("u")} = ${tierOf(row)}
      AND u.record_id <= coalesce((SELECT after FROM usage_quarters_fill), 9223372036854775807)
    HAVING count(*) > 0;`;
  const resum = `
    CREATE TRIGGER ${table}_remove AFTER DELETE ON usage
    WHEN EXISTS (SELECT 1 FROM ${table} WHERE ${group("old")})
    BEGIN ${sumAgain("old")}
    END;
    CREATE TRIGGER ${table}_change AFTER UPDATE ON usage
    BEGIN ${sumAgain("old")} ${sumAgain("new")}
    END;`;
  if (only === "resum") {
    return `
    DROP TRIGGER IF EXISTS ${table}_remove;
    DROP TRIGGER IF EXISTS ${table}_change;
    ${resum}`;
  }
  return `
    CREATE TABLE ${table} (
      ${step.column} INTEGER NOT NULL,
      ${keys.map((k) => `${k} INTEGER,`).join("\n")}
      agent TEXT NOT NULL,
      model TEXT,
      tier INTEGER NOT NULL,
      calls INTEGER NOT NULL,
      input INTEGER NOT NULL,
      output INTEGER NOT NULL,
      cache_write INTEGER NOT NULL,
      cache_read INTEGER NOT NULL,
      cost REAL NOT NULL,
      -- The times of its first and last calls.
      first_ts INTEGER NOT NULL,
      last_ts INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX ${table}_key ON ${table} (${keyColumns});
    CREATE TRIGGER ${table}_add AFTER INSERT ON usage
    WHEN new.ts IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM usage_quarters_fill WHERE new.record_id > after)
    BEGIN
      INSERT INTO ${table} (${keyColumns}, calls, input, output, cache_write, cache_read, cost,
        first_ts, last_ts)
      SELECT ${keyValues("new")}, 0, 0, 0, 0, 0, 0, new.ts, new.ts
      WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ${group("new")});
      UPDATE ${table} SET calls = calls + 1, input = input + new.input,
        output = output + new.output, cache_write = cache_write + new.cache_write,
        cache_read = cache_read + new.cache_read, cost = cost + coalesce(new.cost, 0),
        first_ts = min(first_ts, new.ts), last_ts = max(last_ts, new.ts)
      WHERE ${group("new")};
    END;
    ${resum}`;
}
