// A store as the build before migration 0008 left it: many captured records (Claude Code's
// format, some in Chinese, Japanese or Korean), the index holding CJK sentences whole, and
// neither the migration nor its batches table there. The migration tests start from it. And a
// store as builds before migration 0013 left it (no derivation recorded), with what a store
// derived laid out to compare with a fresh capture of the same files.

import { join } from "node:path";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { bigramText, CJK_MIGRATION } from "../lib/store/cjk.ts";
import { withoutInvisible } from "../lib/invisible.ts";
import { DERIVATIONS_KEY } from "../lib/capture/derivation.ts";
import { TextDeriver } from "../lib/store/records.ts";
import { RowHash } from "../lib/store/batched_migration.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { FLAG_INDEXED } from "../lib/store/schema.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import { redactorFor } from "../lib/context.ts";
import { captureWorld, makeWorld, withStore, type World } from "./_helpers.ts";

const WORDS = ("walrus harbour ledger copper lantern migrate cursor batch verify switch " +
  "rotate token index shard beacon thimble orchard vessel quartz meadow").split(" ");
const CJK = [
  "我们需要把缓存策略改成按需加载",
  "設定ファイルの読み込みが遅い",
  "캐시 전략을 바꾸면",
];

/** The text of message `i`: a few words, and CJK in one message of five. */
export function messageText(i: number): string {
  const words = [0, 1, 2, 3, 4, 5].map((k) => WORDS[(i * 7 + k * 13) % WORDS.length]);
  const cjk = i % 5 === 0 ? ` ${CJK[i % CJK.length]}` : "";
  return `${words.join(" ")} number ${i}${cjk}`;
}

/**
 * Writes `records` Claude Code lines (user and assistant in turn, 1,000 to a session), captures
 * them with this build, then makes the store what the build before 0008 wrote. `text` gives
 * message `i`'s text (`messageText` unless told).
 */
export async function oldStoreWorld(
  records: number,
  text: (i: number) => string = messageText,
): Promise<World> {
  const world = await makeWorld();
  const cwd = "/home/dev/src/harbour";
  const dir = join(world.claude, "projects", cwd.replaceAll("/", "-"));
  await Deno.mkdir(dir, { recursive: true });
  const perSession = 1000;
  for (let s = 0; s * perSession < records; s++) {
    const session = `0b5e0000-0000-4000-8000-${String(s).padStart(12, "0")}`;
    const lines: string[] = [];
    for (let j = 0; j < perSession && s * perSession + j < records; j++) {
      const i = s * perSession + j;
      const uuid = `${String(i).padStart(8, "0")}-0000-4000-8000-000000000000`;
      const base = {
        parentUuid: null,
        isSidechain: false,
        userType: "external",
        cwd,
        sessionId: session,
        version: "2.1.40",
        uuid,
        timestamp: new Date(Date.UTC(2026, 5, 1) + i * 1000).toISOString(),
      };
      lines.push(JSON.stringify(
        j % 2 === 0 ? { ...base, type: "user", message: { role: "user", content: text(i) } } : {
          ...base,
          type: "assistant",
          message: {
            id: `msg_${i}`,
            type: "message",
            role: "assistant",
            model: "claude-opus-4-6",
            content: [{ type: "text", text: text(i) }],
          },
        },
      ));
    }
    await Deno.writeTextFile(join(dir, `${session}.jsonl`), lines.join("\n") + "\n");
  }
  await captureWorld(world);
  makeOld(world);
  return world;
}

/** The index as the old build wrote it (text as it is), and no trace of 0008. */
function makeOld(world: World): void {
  withStore(world, (store, ctx) => makeStoreOld(store, redactorFor(ctx)));
}

/**
 * Makes `store` (a main store or a project mirror) what the build before 0008 left: the records
 * with CJK text indexed with that text as it is, and neither 0008 nor the later steps that add
 * tables applied, nor their tables there.
 */
export function makeStoreOld(store: HistoryStore, redact: Redactor): void {
  const deriver = new TextDeriver(store, ADAPTERS, redact);
  const rows = store.db.prepare(
    `SELECT * FROM records WHERE (flags & ${FLAG_INDEXED}) != 0 AND raw LIKE '%' || ? || '%'`,
  );
  store.transaction(() => {
    // Only records with CJK are indexed differently now.
    for (const mark of ["我们", "設定", "캐시"]) {
      for (const row of rows.all(mark) as unknown as Parameters<TextDeriver["textOf"]>[0][]) {
        store.db.prepare("DELETE FROM fts WHERE rowid = ?").run(row.id);
        store.db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)")
          .run(row.id, deriver.textOf(row));
      }
    }
    // 0008 and the tables of the steps after it (a column another one added stays).
    for (const name of [CJK_MIGRATION, "0010_record_changes"]) {
      store.db.prepare("DELETE FROM migrations WHERE name = ?").run(name);
    }
    store.db.exec("DROP TABLE migration_batches; DROP TABLE IF EXISTS record_changes;");
  });
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

/** A hash of everything the text index holds: every term of every record, at its offset. */
export function indexHash(store: HistoryStore): string {
  store.db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_rows USING fts5vocab(main, fts, instance)",
  );
  const hash = new RowHash();
  // Through a function: reading two million rows one by one costs several times as much.
  store.db.function("test_index_row", (term, doc, offset) => {
    hash.value(term as string).value(doc as number).value(offset as number).endRow();
    return 0;
  });
  // In the index's own order (term, record, offset), whatever its segments are.
  store.db.prepare("SELECT count(test_index_row(term, doc, offset)) FROM temp.fts_rows").get();
  return Array.from(hash.digest(), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A hash of every record: id, flags and stored bytes. */
export function recordsHash(store: HistoryStore): string {
  const hash = new RowHash();
  for (
    const row of store.db.prepare("SELECT id, flags, raw FROM records ORDER BY id")
      .iterate() as Iterable<{ id: number; flags: number; raw: Uint8Array }>
  ) hash.value(row.id).value(row.flags).value(row.raw).endRow();
  return Array.from(hash.digest(), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Makes `store` what a build before migration 0013 left (any store captured before this week's
 * upgrade): no derivation recorded with its sources, no conversation shares, and the records
 * that hold characters a reader cannot see indexed with those characters, as builds before the
 * index left them out did. Opening it again applies 0013, and capture derives it again.
 */
export function makeStoreUnversioned(store: HistoryStore, redact: Redactor): void {
  const deriver = new TextDeriver(store, ADAPTERS, redact);
  const rows = store.db.prepare(`SELECT * FROM records WHERE (flags & ${FLAG_INDEXED}) != 0`)
    .all() as unknown as Parameters<TextDeriver["textOf"]>[0][];
  store.transaction(() => {
    for (const row of rows) {
      const text = deriver.textOf(row);
      if (withoutInvisible(text) === text) continue;
      store.db.prepare("DELETE FROM fts WHERE rowid = ?").run(row.id);
      store.db.prepare("INSERT INTO fts (rowid, text) VALUES (?, ?)").run(row.id, bigramText(text));
    }
    store.db.exec(`
      DROP TABLE conversation_shares;
      DROP TABLE conversations_to_sum;
      ALTER TABLE sources DROP COLUMN derivation;
      DELETE FROM migrations WHERE name = '0013_derivations';
      DELETE FROM meta WHERE key = '${DERIVATIONS_KEY}';`);
  });
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

/**
 * What `store` derived, keyed so that two stores of the same files compare whatever their
 * record ids and wherever the files are (`root` is cut from each source's path): conversation
 * rows by key, records by source, generation and offset, the words the index holds of each
 * record, record keys, drift, each source's shares of conversations and its saved state.
 */
export function derivedState(store: HistoryStore, root: string): Record<string, string[]> {
  const all = (sql: string) =>
    store.db.prepare(sql).all().map((row) =>
      JSON.stringify(row, (_, v) => (typeof v === "string" ? v.replaceAll(root, "<root>") : v))
    );
  const record = `s.locator || ' ' || r.generation || ' ' || r.offset`;
  store.db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_rows USING fts5vocab(main, fts, instance)",
  );
  return {
    conversations: all(`
      SELECT c.*, s.locator AS source FROM conversations c LEFT JOIN sources s ON s.id = c.source_id
      ORDER BY c.key`).map((row) => row.replace(/"id":\d+,/, "").replace(/"source_id":\d+,/, "")),
    records: all(`
      SELECT ${record} AS record, r.seq, c.key, r.ts, r.kind, r.role, r.message_id, r.part_id,
        r.flags
      FROM records r JOIN sources s ON s.id = r.source_id
      LEFT JOIN conversations c ON c.id = r.conversation_id ORDER BY s.locator, r.generation, r.offset`),
    index: all(`
      SELECT ${record} AS record, group_concat(v.term || '@' || v.offset, ' ') AS terms
      FROM (SELECT * FROM temp.fts_rows ORDER BY doc, offset, term) v
      JOIN records r ON r.id = v.doc JOIN sources s ON s.id = r.source_id
      GROUP BY v.doc ORDER BY record`),
    keys: all(`
      SELECT s.locator, k.key, ${record} AS record FROM record_keys k
      JOIN sources s ON s.id = k.source_id JOIN records r ON r.id = k.record_id
      ORDER BY s.locator, k.key`),
    drift: all(`
      SELECT s.locator, d.generation, d.agent, d.version, d.category, d.detail, d.count
      FROM drift d JOIN sources s ON s.id = d.source_id ORDER BY 1, 2, 3, 4, 5, 6`),
    shares: all(`
      SELECT c.key, s.locator, sh.* FROM conversation_shares sh
      JOIN conversations c ON c.id = sh.conversation_id JOIN sources s ON s.id = sh.source_id
      ORDER BY c.key, s.locator`).map((row) =>
      row.replace(/"conversation_id":\d+,/, "").replace(/"source_id":\d+,/, "")
    ),
    sources: all(
      "SELECT locator, generation, cursor, state, derivation FROM sources ORDER BY locator",
    ),
  };
}
