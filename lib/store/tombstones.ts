// What a tombstone covers. `forget` leaves one per conversation it removes, and it covers that
// conversation and everything under it, now and later: a subagent whose parent is tombstoned (a
// Claude Code `subagents/agent-*.jsonl`, a helper copy, a Codex thread it spawned, an OpenCode
// child session), or whose key extends a tombstoned one past a "/" (`claude:S` covers
// `claude:S/agent-x`), is covered too, and gets a tombstone of its own once capture meets it, so
// what it spawned in turn is covered as well. Forks are their own: they are not covered.

import type { HistoryStore } from "./db.ts";

/** A conversation as capture meets it: its key, and what it is a subagent of, if anything. */
export interface Covered {
  key: string;
  parentKey?: string | null;
  subagent?: boolean;
}

/**
 * The keys whose tombstone covers `conversation`: its own, and for a subagent its parent's and
 * every "/"-prefix of its key (only a subagent: a prompt history key holds a path).
 */
export function coveringKeys(conversation: Covered): string[] {
  const keys = [conversation.key];
  if (!conversation.subagent) return keys;
  if (conversation.parentKey) keys.push(conversation.parentKey);
  const key = conversation.key;
  for (let at = key.indexOf("/"); at > 0; at = key.indexOf("/", at + 1)) {
    keys.push(key.slice(0, at));
  }
  return keys;
}

/** True when a tombstone in the store covers `conversation` (read now, inside a transaction). */
export function coveredInStore(store: HistoryStore, conversation: Covered): boolean {
  const tombstoned = store.stmt("SELECT 1 FROM tombstones WHERE key = ?");
  return coveringKeys(conversation).some((key) => tombstoned.get(key) !== undefined);
}

/** Leaves a tombstone for `key` (a later one keeps the earlier time: it was covered since). */
export function addTombstone(store: HistoryStore, key: string, now: number): void {
  store.stmt("INSERT INTO tombstones (key, forgotten_at) VALUES (?, ?) ON CONFLICT DO NOTHING")
    .run(key, now);
}
