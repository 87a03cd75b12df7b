// A store as a build before tombstones covered children leaves it: a session forgotten while
// its subagents were not there yet, then the subagents captured when they appeared.

import type { HistoryStore } from "../lib/store/db.ts";

/**
 * Forgets the conversation `key` alone, as that build did when it had no subagents to take
 * with it, leaving its subagents (captured later, by that build) in the store.
 */
export function forgetLeavingChildren(store: HistoryStore, key: string): void {
  store.transaction(() => {
    const { id } = store.stmt("SELECT id FROM conversations WHERE key = ?").get(key) as {
      id: number;
    };
    store.stmt(
      "DELETE FROM fts WHERE rowid IN (SELECT id FROM records WHERE conversation_id = ? AND (flags & 1) != 0)",
    ).run(id);
    store.stmt("DELETE FROM records WHERE conversation_id = ?").run(id);
    store.stmt("DELETE FROM conversations WHERE id = ?").run(id);
    store.stmt("INSERT INTO tombstones (key, forgotten_at) VALUES (?, ?)").run(key, Date.now());
  });
}
