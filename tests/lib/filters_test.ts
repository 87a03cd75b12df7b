// The search command's hand check of a search request and the dashboard's zod schema state the
// same rules: they accept and refuse the same inputs, naming the same field.

import { oneOf } from "../../lib/format.ts";
import { AGENTS } from "../../lib/agents.ts";
import assert from "node:assert/strict";
import { parseSearchInput, splitInline } from "../../lib/filters.ts";
import { describeIssue, searchInput } from "../../lib/filters_schema.ts";

const INPUTS: Record<string, unknown>[] = [
  { q: "rotate credentials" },
  { q: "  padded  " },
  { q: "" },
  { q: "   " },
  { q: "x".repeat(4096) },
  { q: "x".repeat(4097) },
  { q: 42 },
  {},
  { q: "a", project: "." },
  { q: "a", project: "" },
  { q: "a", agent: "codex" },
  { q: "a", agent: "gpt" },
  { q: "a", kind: "tool_call" },
  { q: "a", kind: "tool" },
  { q: "a", role: "assistant" },
  { q: "a", role: "robot" },
  { q: "a", session: "claude:3f2a" },
  { q: "a", session: "" },
  { q: "a", session: "s".repeat(301) },
  { q: "a", since: "7d", until: "today" },
  { q: "a", until: "" },
  { q: "a", subagents: false },
  { q: "a", subagents: "yes" },
  { q: "a", limit: 1 },
  { q: "a", limit: 1000 },
  { q: "a", limit: 0 },
  { q: "a", limit: 1001 },
  { q: "a", limit: 2.5 },
  { q: "a", limit: "20" },
  { q: "a", forgive: "typing" },
  { q: "a", forgive: "exact" },
  { q: "a", forgive: "loose" },
];

Deno.test("parseSearchInput() accepts and refuses what the dashboard's zod schema does", async (t) => {
  for (const input of INPUTS) {
    await t.step(JSON.stringify(input).slice(0, 60), () => {
      const byHand = parseSearchInput(input);
      const byZod = searchInput.safeParse(input);
      assert.equal(byHand.success, byZod.success);
      if (byHand.success && byZod.success) assert.deepEqual(byHand.data, byZod.data);
      if (!byHand.success && !byZod.success) {
        assert.equal(byHand.error.field, describeIssue(byZod.error).field);
        assert.ok(byHand.error.message);
      }
    });
  }
});

Deno.test("parseSearchInput() says what is wrong with the query", () => {
  const empty = parseSearchInput({ q: "  " });
  assert.deepEqual(empty, { success: false, error: { field: "q", message: "the query is empty" } });
  const long = parseSearchInput({ q: "x".repeat(4097) });
  assert.ok(!long.success && long.error.message === "the query is over 4096 characters");
  const agent = parseSearchInput({ q: "a", agent: "gpt" });
  assert.deepEqual(agent, {
    success: false,
    error: {
      field: "agent",
      message: `expected ${oneOf(AGENTS)}`,
      expected: oneOf(AGENTS),
    },
  });
});

Deno.test("splitInline() takes name:value filters out of a search box's words", () => {
  assert.deepEqual(splitInline("agent:codex retry  since:7d backoff"), {
    text: "retry backoff",
    inline: { agent: "codex", since: "7d" },
  });
  assert.deepEqual(splitInline('project:"/home/me/my app" kind:tool_result'), {
    text: "",
    inline: { project: "/home/me/my app", kind: "tool_result" },
  });
  // Only the filters it knows, and only at a word's start: the rest are words to search for.
  assert.deepEqual(splitInline("http://x colour:red role:user"), {
    text: "http://x colour:red",
    inline: { role: "user" },
  });
});
