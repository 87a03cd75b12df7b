// The conversation page's tool lookup: the source it hands an adapter has the format of the
// locator the store wrote, whatever the folder names in its path hold.

import assert from "node:assert/strict";
import { toolLookup } from "../../../servers/pages/_chat.ts";
import type { Adapter, SourceRef } from "../../../lib/sources/adapter.ts";
import type { ShownRecord } from "../../../servers/_redact.ts";

Deno.test("toolLookup gives the adapter the locator's path and format", () => {
  const seen: SourceRef[] = [];
  const adapter = {
    agent: "codex",
    toolOf(_bytes: Uint8Array, source: SourceRef) {
      seen.push(source);
      return null;
    },
  } as unknown as Adapter;
  const lookup = toolLookup([adapter], "codex", (text) => text);
  const record = (source: string) =>
    ({ id: 1, source, kind: "tool_call", raw: "", text: "" }) as unknown as ShownRecord;
  for (
    const source of [
      "/mnt/backup#2/codex/sessions/rollout-1.jsonl",
      "/home/u/.codex/sessions/rollout-2.jsonl.zst",
      "/home/u/.local/share/opencode/opencode.db#ses_01",
      "/mnt/a#b/opencode.db#ses_02",
    ]
  ) {
    assert.equal(lookup(record(source)), null);
  }
  assert.deepEqual(seen.map((s) => [s.path, s.format]), [
    ["/mnt/backup#2/codex/sessions/rollout-1.jsonl", "jsonl"],
    ["/home/u/.codex/sessions/rollout-2.jsonl.zst", "jsonl.zst"],
    ["/home/u/.local/share/opencode/opencode.db", "rows"],
    ["/mnt/a#b/opencode.db", "rows"],
  ]);
});
