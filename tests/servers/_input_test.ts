// `conversationId` and the query helpers: ids with path characters are refused.

import assert from "node:assert/strict";
import { conversationId, queryFlag, queryInt } from "../../servers/_input.ts";

Deno.test("conversationId refuses path characters but takes real ids and a subagent's slash", () => {
  for (
    const id of [
      "claude:f332cca8-0b9a-4244-835f-c44f31385301",
      "f332cca8",
      "codex:019cadec-4215-715a-81d7-8fe048acf960",
      "opencode:ses_3f2a",
      "claude:e6b87366-6fa9-42f4-8674-9b1edd6ba8df/agent-a7d93e1",
    ]
  ) assert.equal(conversationId.safeParse(id).success, true, id);
  for (
    const id of [
      "",
      "../../etc/passwd",
      "..",
      "a\\b",
      "/etc/passwd",
      "claude:x/../y",
      "claude:x/agent-a/agent-b",
      "claude:x/other",
      "a\u0000b",
      "a\nb",
      "x".repeat(301),
    ]
  ) assert.equal(conversationId.safeParse(id).success, false, JSON.stringify(id));
});

Deno.test("queryInt and queryFlag read query-string values strictly", () => {
  const limit = queryInt(1, 10);
  assert.equal(limit.parse("7"), 7);
  for (const bad of ["0", "11", "-1", "1.5", "abc", " 3", "1e3"]) {
    assert.equal(limit.safeParse(bad).success, false, bad);
  }
  assert.equal(queryFlag.parse("1"), true);
  assert.equal(queryFlag.parse("false"), false);
  assert.equal(queryFlag.safeParse("yes").success, false);
});
