// The shared team database on PostgreSQL: connecting (the `postgres` driver, loaded only by the
// commands that reach a team), and the schema, built by named migrations recorded in
// `logbook_migrations` so every machine finds the same tables. Conversations are keyed by machine
// and conversation id; each record's redacted text is indexed with PostgreSQL's own full-text
// search (a `tsvector` with a GIN index) and with `pg_trgm` for text words cannot find (CJK,
// symbols). Two group roles with least privilege: `logbook_push` may add and remove what its
// machines send; `logbook_read` may only read.

import type { Sql } from "postgres";

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
    // the roles (the README has the SQL) and the schema is usable by its owner meanwhile.
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
 * Connects to the team database (the driver is loaded here, on first use); with `idleSeconds`,
 * a connection left idle that long is closed (and opened again when next needed).
 */
export async function connectTeam(
  url: string,
  options: { idleSeconds?: number } = {},
): Promise<Sql> {
  const { default: postgres } = await import("postgres");
  return postgres(url, {
    max: 1,
    ...(options.idleSeconds ? { idle_timeout: options.idleSeconds } : {}),
    onnotice: () => {},
    connect_timeout: 10,
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

/**
 * Brings the team schema up to date; returns the names applied now. Concurrent pushes from two
 * machines take turns on an advisory lock.
 */
export async function migrateTeam(sql: Sql): Promise<string[]> {
  const applied: string[] = [];
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
  return applied;
}

/** A driver error as a TeamError whose message names the database without its password. */
export function teamError(err: unknown, url: string): TeamError {
  const message = err instanceof Error ? err.message : String(err);
  const clean = message.split(url).join(safeUrl(url));
  return new TeamError(`The team database ${safeUrl(url)} failed: ${clean}`, { cause: err });
}
