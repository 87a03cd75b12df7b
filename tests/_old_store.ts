// A store as the build before migration 0008 left it: many captured records (Claude Code's
// format, some in Chinese, Japanese or Korean), the index holding CJK sentences whole, and
// neither the migration nor its batches table there. The migration tests start from it.

import { join } from "node:path";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { CJK_MIGRATION } from "../lib/store/cjk.ts";
import { TextDeriver } from "../lib/store/records.ts";
import { RowHash } from "../lib/store/batched_migration.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { FLAG_INDEXED } from "../lib/store/schema.ts";
import type { Redactor } from "../lib/gate.ts";
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
