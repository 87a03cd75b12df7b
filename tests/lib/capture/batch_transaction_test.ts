// writeBatch() reads the tombstones again inside its transaction: `forget` runs without the
// capture lock, so a batch read before a session was forgotten must not bring back the session
// or anything under it (a subagent met only in this batch), and leaves the subagent a tombstone.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type BatchPayload,
  type BatchRecord,
  writeBatch,
} from "../../../lib/capture/batch_transaction.ts";
import type { ConversationWrite } from "../../../lib/capture/conversation_rows.ts";
import { createSource } from "../../../lib/capture/identity.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { removeDir, tempDir } from "../../_helpers.ts";

const NOW = 1_767_000_000_000;

function conversation(key: string, parentKey: string | null): ConversationWrite {
  return {
    key,
    agent: "claude",
    nativeId: key.slice("claude:".length),
    sourceId: 1,
    projectRoot: null,
    projectKey: null,
    cwd: null,
    branch: null,
    title: null,
    titleRank: 0,
    firstTs: null,
    lastTs: null,
    messages: 1,
    records: 1,
    bytes: 3,
    parentKey,
    subagent: parentKey !== null,
    agentType: null,
    archived: null,
    version: null,
  };
}

function record(sourceId: number, offset: number, conversationKey: string): BatchRecord {
  return {
    existingId: null,
    sourceId,
    generation: 1,
    offset,
    seq: 0,
    rawAt: offset,
    rawLength: 3,
    length: null,
    conversationKey,
    ts: null,
    kind: "message",
    role: "user",
    messageId: null,
    partId: null,
    flags: 1,
    completes: false,
    text: "hello",
    drift: null,
    usage: null,
  };
}

Deno.test("writeBatch() keeps out a subagent whose session was forgotten while it was read", async () => {
  const dir = await tempDir();
  const store = HistoryStore.open({ path: join(dir, "history.db"), root: dir });
  try {
    const ref = {
      agent: "claude",
      locator: "/x.jsonl",
      path: "/x.jsonl",
      format: "jsonl",
    } as const;
    const sourceId = store.transaction(() =>
      createSource(store, { adapter: { derivation: 1 }, ref }, NOW)
    ).id;
    // Forgotten after the batch was read: the session has a tombstone, the subagent none yet.
    store.db.prepare("INSERT INTO tombstones (key, forgotten_at) VALUES ('claude:S', 1)").run();
    const payload: BatchPayload = {
      records: [record(sourceId, 0, "claude:S/agent-x"), record(sourceId, 3, "claude:T")],
      raw: new TextEncoder().encode("{}\n{}\n"),
      conversations: [conversation("claude:S/agent-x", "claude:S"), conversation("claude:T", null)],
      supersede: [],
      keys: [],
      mode: "add",
      tombstones: [],
      drop: [],
      sources: [],
      progress: null,
      now: NOW,
    };
    const result = writeBatch(store, payload);
    assert.deepEqual(result.tombstoned, ["claude:S/agent-x"]);
    assert.equal(result.inserted, 1, "only the other session's record");
    const keys = store.db.prepare("SELECT key FROM conversations").all() as { key: string }[];
    assert.deepEqual(keys.map((k) => k.key), ["claude:T"]);
    const tombstones = store.db.prepare("SELECT key, forgotten_at FROM tombstones ORDER BY key")
      .all();
    assert.deepEqual(tombstones.map((t) => ({ ...t })), [
      { key: "claude:S", forgotten_at: 1 },
      { key: "claude:S/agent-x", forgotten_at: NOW },
    ]);
  } finally {
    store.close();
    await removeDir(dir);
  }
});
