// The shared team database on PostgreSQL: connecting (the `postgres` driver, loaded only by the
// commands that reach a team), and the schema, built by named migrations recorded in
// `logbook_migrations` so every machine finds the same tables. Conversations are keyed by machine
// and conversation id, records by machine and a stable uid (see push.ts); each record's redacted
// text is indexed with PostgreSQL's own full-text search (a `tsvector` with a GIN index), and its
// words that hold CJK with `pg_trgm` (words cannot find CJK inside a sentence). Two group roles with least privilege:
// `logbook_push` may add and remove what its machines send, and row-level security keeps each
// push login to the machines it owns (`logbook_machines.login`); `logbook_read` may only read.
// Migrating needs the owner: a push login only reads whether the schema is up to date.

import type { Sql } from "postgres";
import { messageOf } from "../format.ts";
import { INVISIBLE_CLASS } from "../invisible.ts";

/**
 * The code points CJK letters lie in (`MAYBE_CJK` of `lib/store/cjk.ts`, and the astral Han
 * planes), as a PostgreSQL class: a word with one of them goes to `cjk`.
 */
const CJK_RANGES =
  "[\\u1100-\\u11ff\\u2e80-\\u9fff\\ua960-\\ua97f\\uac00-\\ufaff\\uff00-\\uffef\\U00020000-\\U0003ffff]";

/** The invisible characters (`INVISIBLE_CLASS` of lib/invisible.ts) as a PostgreSQL class. */
const INVISIBLE_RANGES = `[${
  INVISIBLE_CLASS.replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => `\\U${hex.padStart(8, "0")}`)
}]`;

/** One named schema step, run once, in its own transaction, in order. */
interface TeamMigration {
  name: string;
  sql: string;
}

export const TEAM_MIGRATIONS: readonly TeamMigration[] = [
  {
    name: "0001_team_history",
    sql: `
      CREATE EXTENSION IF NOT EXISTS pg_trgm;

      -- One row per machine that pushes, with how far its forgets were sent.
      CREATE TABLE logbook_machines (
        machine text PRIMARY KEY,
        tombstone_cursor bigint NOT NULL DEFAULT 0,
        first_push timestamptz NOT NULL DEFAULT now(),
        last_push timestamptz NOT NULL DEFAULT now()
      );

      -- How far each machine's records of each allowed project were sent (a record id of that
      -- machine's store): moved in the transaction that sends the records, so a push killed at
      -- any point resumes after the last batch that arrived and sends nothing twice.
      CREATE TABLE logbook_cursors (
        machine text NOT NULL REFERENCES logbook_machines (machine),
        project text NOT NULL,
        record_cursor bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (machine, project)
      );

      CREATE TABLE logbook_conversations (
        machine text NOT NULL REFERENCES logbook_machines (machine),
        key text NOT NULL,
        agent text NOT NULL,
        project text,
        cwd text,
        branch text,
        title text,
        first_ts timestamptz,
        last_ts timestamptz,
        messages integer NOT NULL DEFAULT 0,
        parent_key text,
        subagent boolean NOT NULL DEFAULT false,
        PRIMARY KEY (machine, key)
      );
      CREATE INDEX logbook_conversations_project ON logbook_conversations (project, last_ts);

      -- One row per record sent: its redacted text, and its raw bytes only where the machine's
      -- config says "raw": true. record_id is the id in the machine's own store.
      CREATE TABLE logbook_records (
        machine text NOT NULL,
        record_id bigint NOT NULL,
        conversation_key text NOT NULL,
        ts timestamptz,
        kind text NOT NULL,
        role text,
        text text NOT NULL,
        raw bytea,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
        PRIMARY KEY (machine, record_id),
        FOREIGN KEY (machine, conversation_key)
          REFERENCES logbook_conversations (machine, key) ON DELETE CASCADE
      );
      CREATE INDEX logbook_records_conversation
        ON logbook_records (machine, conversation_key, record_id);
      CREATE INDEX logbook_records_tsv ON logbook_records USING gin (tsv);
      CREATE INDEX logbook_records_trgm ON logbook_records USING gin (text gin_trgm_ops);

      -- What a machine's forget removed, so its copies stay gone.
      CREATE TABLE logbook_tombstones (
        machine text NOT NULL,
        key text NOT NULL,
        forgotten_at timestamptz NOT NULL,
        PRIMARY KEY (machine, key)
      );
    `,
  },
  {
    name: "0002_roles",
    // Creating roles needs CREATEROLE: without it the grants wait for an administrator to create
    // the roles (docs/team.md has the SQL) and the schema is usable by its owner meanwhile.
    sql: `
      DO $$
      BEGIN
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'logbook_push') THEN
            CREATE ROLE logbook_push NOLOGIN;
          END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'logbook_read') THEN
            CREATE ROLE logbook_read NOLOGIN;
          END IF;
        EXCEPTION WHEN insufficient_privilege THEN
          RAISE NOTICE 'logbook: no CREATEROLE; create logbook_push and logbook_read yourself';
        END;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'logbook_read') THEN
          GRANT SELECT ON logbook_machines, logbook_cursors, logbook_conversations,
            logbook_records, logbook_tombstones, logbook_migrations TO logbook_read;
        END IF;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'logbook_push') THEN
          GRANT SELECT ON logbook_machines, logbook_cursors, logbook_conversations,
            logbook_records, logbook_tombstones, logbook_migrations TO logbook_push;
          GRANT INSERT, UPDATE ON logbook_machines, logbook_cursors, logbook_tombstones
            TO logbook_push;
          GRANT INSERT, UPDATE, DELETE ON logbook_conversations, logbook_records TO logbook_push;
        END IF;
      END $$;
    `,
  },
  {
    name: "0003_stable_identity_and_own_rows",
    // Records are keyed by what they are, not by a machine's local record id (which starts
    // again in a fresh store): `uid` is a hash of the conversation, the record's place in its
    // source and its exact bytes (see push.ts), so sending a record again is harmless. `id`
    // orders a conversation's records as they arrived. Rows sent before this step keep a null
    // uid until their machine's next push gives them theirs. The cursor is per conversation
    // (`sent_through`), so a conversation that joins an allowed project later is sent whole;
    // `store_id` says which store the cursors count in. Row-level security lets a push login
    // change only the rows of the machines it pushes as (`login`); everyone may read.
    sql: `
      ALTER TABLE logbook_machines ADD COLUMN login text NOT NULL DEFAULT current_user;
      ALTER TABLE logbook_machines ADD COLUMN store_id text;
      ALTER TABLE logbook_conversations ADD COLUMN sent_through bigint NOT NULL DEFAULT 0;
      DROP TABLE logbook_cursors;

      ALTER TABLE logbook_records DROP CONSTRAINT logbook_records_pkey;
      ALTER TABLE logbook_records ADD COLUMN id bigint GENERATED BY DEFAULT AS IDENTITY;
      UPDATE logbook_records r SET id = o.n
        FROM (SELECT machine, record_id, row_number() OVER (ORDER BY machine, record_id) AS n
              FROM logbook_records) o
        WHERE o.machine = r.machine AND o.record_id = r.record_id;
      SELECT setval(pg_get_serial_sequence('logbook_records', 'id'), coalesce(max(id), 0) + 1,
        false) FROM logbook_records;
      ALTER TABLE logbook_records ADD PRIMARY KEY (id);
      ALTER TABLE logbook_records ADD COLUMN uid bytea;
      ALTER TABLE logbook_records ADD CONSTRAINT logbook_records_uid UNIQUE (machine, uid);
      DROP INDEX logbook_records_conversation;
      CREATE INDEX logbook_records_conversation ON logbook_records (machine, conversation_key, id);

      ALTER TABLE logbook_machines ENABLE ROW LEVEL SECURITY;
      CREATE POLICY logbook_read ON logbook_machines FOR SELECT USING (true);
      CREATE POLICY logbook_own ON logbook_machines FOR ALL
        USING (login = current_user) WITH CHECK (login = current_user);
      DO $$
      DECLARE t text;
      BEGIN
        FOREACH t IN ARRAY ARRAY['logbook_conversations', 'logbook_records', 'logbook_tombstones']
        LOOP
          EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
          EXECUTE format('CREATE POLICY logbook_read ON %I FOR SELECT USING (true)', t);
          EXECUTE format('CREATE POLICY logbook_own ON %I FOR ALL '
            'USING (machine IN (SELECT m.machine FROM logbook_machines m WHERE m.login = current_user)) '
            'WITH CHECK (machine IN (SELECT m.machine FROM logbook_machines m WHERE m.login = current_user))',
            t);
        END LOOP;
      END $$;
    `,
  },
  {
    name: "0004_lighter_indexes",
    // What a push costs the server is mostly its indexes (issue 36), and the trigram index of
    // every record's whole text cost more than the rest of a row together, for two rare paths. A
    // query with CJK now narrows by `cjk`, the text's words that hold CJK, which pg_trgm indexes
    // (null, and not indexed, for text without any); a typo's spellings are looked for in the
    // text itself, for a bounded time (search.ts). lz4 compresses the text and its tsvector
    // several times faster than pglz, where the server has it.
    sql: `
      CREATE FUNCTION logbook_cjk_words(t text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
          SELECT CASE WHEN t ~ '${CJK_RANGES}' THEN (
            SELECT string_agg(w, ' ') FROM regexp_split_to_table(t, '\\s+') w
            WHERE w ~ '${CJK_RANGES}') END
        $f$;
      DROP INDEX logbook_records_trgm;
      ALTER TABLE logbook_records
        ADD COLUMN cjk text GENERATED ALWAYS AS (logbook_cjk_words(text)) STORED;
      CREATE INDEX logbook_records_cjk ON logbook_records USING gin (cjk gin_trgm_ops)
        WHERE cjk IS NOT NULL;
      DO $$
      BEGIN
        ALTER TABLE logbook_records ALTER COLUMN text SET COMPRESSION lz4,
          ALTER COLUMN tsv SET COMPRESSION lz4;
      EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
        RAISE NOTICE 'logbook: no lz4 in this server; the text stays compressed with pglz';
      END $$;
    `,
  },
  {
    name: "0005_words_as_read",
    // A word written with an invisible character inside (`pass\u200bword`) is the word a reader
    // sees, as the local index takes it (lib/invisible.ts): the tsvector is made from the text
    // without them. The push sends that text as `index_text` where it differs (null otherwise,
    // and never stored: the trigger makes the tsvector of it and clears it), so the server reads
    // no text twice; rows pushed before are indexed again here, those holding one found by a scan.
    sql: `
      ALTER TABLE logbook_records ALTER COLUMN tsv DROP EXPRESSION;
      ALTER TABLE logbook_records ADD COLUMN index_text text;
      CREATE FUNCTION logbook_records_tsv() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
          NEW.tsv := to_tsvector('simple', coalesce(NEW.index_text, NEW.text));
          NEW.index_text := NULL;
          RETURN NEW;
        END
      $f$;
      CREATE TRIGGER logbook_records_tsv BEFORE INSERT OR UPDATE OF text, index_text
        ON logbook_records FOR EACH ROW EXECUTE FUNCTION logbook_records_tsv();
      UPDATE logbook_records SET index_text = regexp_replace(text, '${INVISIBLE_RANGES}+', '', 'g')
        WHERE text ~ '${INVISIBLE_RANGES}';
    `,
  },
  {
    name: "0006_words_in_the_row",
    // A search ranks each of its candidates by the tsvector, which PostgreSQL kept out of the row
    // (in TOAST) wherever text and tsvector together passed 2 kB: a second page to read for
    // nearly every candidate, and each page a search reads is one more its process must map
    // (issue 36). MAIN keeps it in the row, compressed, while the row fits in a page. Rows pushed
    // before keep theirs where they are until the table is rewritten (VACUUM FULL).
    sql: `ALTER TABLE logbook_records ALTER COLUMN tsv SET STORAGE MAIN;`,
  },
];

/** The team database could not be reached or used; the message never holds the URL's password. */
export class TeamError extends Error {
  override name = "TeamError";
}

/** `url` with its password replaced, for messages. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(the configured team URL)";
  }
}

/**
 * What logbook's connections ask of the server: no JIT compiling. Every statement logbook sends is
 * short, and the server compiles any whose plan costs more than `jit_above_cost`: loading the
 * compiler into a new connection took 61 ms of a 66 ms EXPLAIN of a common word at 10 GB.
 */
export const TEAM_SESSION = { jit: "off" } as const;

/**
 * Connects to the team database (the driver is loaded here, on first use); with `idleSeconds`,
 * a connection left idle that long is closed (and opened again when next needed). Up to
 * `connections` (1 unless told) are opened, as statements wait for one. `session` adds to
 * TEAM_SESSION's settings.
 */
export async function connectTeam(
  url: string,
  options: { idleSeconds?: number; connections?: number; session?: Record<string, string> } = {},
): Promise<Sql> {
  const { default: postgres } = await import("postgres");
  return postgres(url, {
    max: options.connections ?? 1,
    ...(options.idleSeconds ? { idle_timeout: options.idleSeconds } : {}),
    onnotice: () => {},
    connect_timeout: 10,
    connection: { ...TEAM_SESSION, ...options.session },
    // Dates come back as ISO strings and bigints as numbers within the safe range.
    types: {
      bigint: {
        to: 20,
        from: [20],
        serialize: (x: number) => String(x),
        parse: (x: string) => Number(x),
      },
    },
  });
}

/** The names of the team migrations the database lacks, in order; reads only. */
async function pendingTeamMigrations(sql: Sql): Promise<string[]> {
  const [table] = await sql<{ t: string | null }[]>`SELECT to_regclass('logbook_migrations') AS t`;
  if (!table?.t) return TEAM_MIGRATIONS.map((m) => m.name);
  const done = new Set(
    (await sql<{ name: string }[]>`SELECT name FROM logbook_migrations`).map((r) => r.name),
  );
  return TEAM_MIGRATIONS.filter((m) => !done.has(m.name)).map((m) => m.name);
}

/**
 * Brings the team schema up to date; returns the names applied now. An up-to-date schema is
 * only read, so a push login (which may not create tables) goes on; one that needs migrating
 * takes the owner, and a push login is told so. Concurrent pushes take turns on an advisory lock.
 */
export async function migrateTeam(sql: Sql): Promise<string[]> {
  const pending = await pendingTeamMigrations(sql);
  if (!pending.length) return [];
  const applied: string[] = [];
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(7270917)`;
      await tx`
        CREATE TABLE IF NOT EXISTS logbook_migrations (
          name text PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`;
      const done = new Set(
        (await tx<{ name: string }[]>`SELECT name FROM logbook_migrations`).map((r) => r.name),
      );
      for (const migration of TEAM_MIGRATIONS) {
        if (done.has(migration.name)) continue;
        await tx.unsafe(migration.sql);
        await tx`INSERT INTO logbook_migrations (name) VALUES (${migration.name})`;
        applied.push(migration.name);
      }
    });
  } catch (err) {
    if (!isInsufficientPrivilege(err)) throw err;
    const [who] = await sql<{ user: string }[]>`SELECT current_user AS user`;
    throw new TeamError(
      `The team database's schema needs ${pending.join(", ")}, and "${who?.user}" may not ` +
        "change it: run the first push (or `logbook push --migrate`) as the database's owner, " +
        "then push as this login again",
      { cause: err },
    );
  }
  return applied;
}

/** True for PostgreSQL's "permission denied" (insufficient_privilege, 42501). */
function isInsufficientPrivilege(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "42501";
}

/** A driver error as a TeamError whose message names the database without its password. */
export function teamError(err: unknown, url: string): TeamError {
  if (err instanceof TeamError) return err;
  const message = messageOf(err);
  const clean = message.split(url).join(safeUrl(url));
  return new TeamError(`The team database ${safeUrl(url)} failed: ${clean}`, { cause: err });
}
