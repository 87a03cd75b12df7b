// What a tombstone covers: its conversation, and a subagent under it (by its parent, or by a key
// that extends the tombstoned one past a "/"); never a fork, nor a key that merely starts alike.

import assert from "node:assert/strict";
import { coveringKeys } from "../../../lib/store/tombstones.ts";

const covers = (tombstones: string[], conversation: Parameters<typeof coveringKeys>[0]) =>
  coveringKeys(conversation).some((key) => tombstones.includes(key));

Deno.test("coveringKeys() names the tombstones that cover a conversation", async (t) => {
  await t.step("its own", () => {
    assert.ok(covers(["claude:S"], { key: "claude:S" }));
    assert.ok(!covers(["claude:S"], { key: "claude:T" }));
  });
  await t.step("a subagent's session, by its key or by its parent", () => {
    assert.ok(covers(["claude:S"], { key: "claude:S/agent-x", subagent: true }));
    assert.ok(
      covers(["codex:P"], { key: "codex:C", parentKey: "codex:P", subagent: true }),
      "a Codex thread spawned by a forgotten one",
    );
  });
  await t.step("not a fork, which is its own", () => {
    assert.ok(!covers(["codex:P"], { key: "codex:F", parentKey: "codex:P", subagent: false }));
  });
  await t.step("not a prompt history whose project path extends a forgotten one's", () => {
    const forgotten = ["claude:history:/home/u"];
    assert.ok(!covers(forgotten, { key: "claude:history:/home/u/agent-tools" }));
    assert.ok(!covers(forgotten, { key: "claude:history:/home/u/proj" }));
  });
});
