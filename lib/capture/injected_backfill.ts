// FLAG_INJECTED for the Codex records a store held before capture marked them (migration 0011
// leaves `injected_backfill` in meta). Each candidate (a developer, system or user message) is
// told as capture tells it: its whole text, decoded and derived through its adapter and the gate,
// to `isInjected`; a line kept in several rows is marked in all of them. Conversations are taken
// 32 at a time, each batch one transaction that moves the cursor, so a run stopped midway goes on
// from there. Each marked row is noted in `record_changes`, so project mirrors update their copies.

import type { Redactor } from "../gate/secrets.ts";
import type { TextReader } from "../sources/adapter.ts";
import { isInjected } from "../sources/injected.ts";
import type { HistoryStore } from "../store/db.ts";
import { type RecordRow, TextDeriver } from "../store/records.ts";
import { FLAG_INDEXED, FLAG_INJECTED, FLAG_STREAMED } from "../store/schema.ts";
import { yieldToEventLoop } from "../event_loop.ts";

/** The meta key: what is left to mark (`after`: the last conversation id done). */
export const INJECTED_BACKFILL_KEY = "injected_backfill";

/** Where the work stands: the last conversation id done. */
interface Cursor {
  after: number;
}

/** Conversations a batch looks at. */
const CONVERSATIONS_PER_BATCH = 32;

/**
 * Marks what is left to mark, batch by batch, until done (the key is removed) or `signal` is
 * aborted (the cursor says where to go on). Returns the rows marked.
 */
export async function backfillInjected(
  store: HistoryStore,
  adapters: readonly TextReader[],
  redact: Redactor,
  signal?: AbortSignal,
): Promise<number> {
  let state: Cursor | undefined = store.getMeta<Cursor>(INJECTED_BACKFILL_KEY);
  if (!state) return 0;
  const deriver = new TextDeriver(store, adapters, redact);
  const conversations = store.stmt(
    "SELECT id FROM conversations WHERE agent = 'codex' AND id > ? ORDER BY id LIMIT ?",
  );
  const candidates = store.stmt(
    `SELECT * FROM records WHERE conversation_id = ? AND seq = 0 AND kind = 'message'
       AND role IN ('user', 'developer', 'system')
       AND (flags & ${FLAG_INDEXED | FLAG_INJECTED | FLAG_STREAMED}) = ${FLAG_INDEXED}`,
  );
  const mark = store.stmt(`UPDATE records SET flags = flags | ${FLAG_INJECTED} WHERE id = ?`);
  const note = store.stmt("INSERT INTO record_changes (record_id) VALUES (?)");
  let marked = 0;
  while (state && !signal?.aborted) {
    const after: number = state.after;
    state = store.transaction((): Cursor | undefined => {
      const ids = (conversations.all(after, CONVERSATIONS_PER_BATCH) as { id: number }[])
        .map((c) => c.id);
      for (const id of ids) {
        for (const row of candidates.all(id) as unknown as RecordRow[]) {
          const { adapter, ref } = deriver.source(row.source_id);
          if (!adapter) continue;
          const line = deriver.lineOf(row);
          const text = redact(adapter.textOf(line.bytes, ref));
          if (!isInjected(ref.agent, { kind: row.kind, role: row.role, text })) continue;
          for (const target of line.ids) {
            mark.run(target);
            note.run(target);
            marked++;
          }
        }
      }
      if (ids.length < CONVERSATIONS_PER_BATCH) {
        store.deleteMeta(INJECTED_BACKFILL_KEY);
        return undefined;
      }
      const next: Cursor = { after: ids.at(-1)! };
      store.setMeta(INJECTED_BACKFILL_KEY, next);
      return next;
    });
    await yieldToEventLoop();
  }
  return marked;
}
