// The store's small parts: snippets and relative times.

import assert from "node:assert/strict";
import { makeSnippet, queryTerms } from "../../../lib/store/text.ts";
import { parseWhen } from "../../../lib/when.ts";

Deno.test("makeSnippet centres on the first match and marks every term", () => {
  const text = "x ".repeat(500) + "the Marmot keyring rotates " + "y ".repeat(500);
  const snippet = makeSnippet(text, queryTerms("marmot keyring"));
  assert.ok(snippet.text.startsWith("…") && snippet.text.endsWith("…"));
  const marked = snippet.ranges.map(([a, b]) => snippet.text.slice(a, b).toLowerCase());
  assert.deepEqual(marked, ["marmot", "keyring"]);
  assert.deepEqual(queryTerms('"exact phrase" pre* NOT other'), [
    { text: "exact phrase", prefix: false },
    { text: "pre", prefix: true },
    { text: "other", prefix: false },
  ]);
});

Deno.test("parseWhen reads ISO times and relative amounts", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");
  assert.equal(parseWhen("30m", now), now - 30 * 60_000);
  assert.equal(parseWhen("12h", now), now - 12 * 3_600_000);
  assert.equal(parseWhen("7d", now), now - 7 * 86_400_000);
  assert.equal(parseWhen("2w", now), now - 14 * 86_400_000);
  assert.equal(parseWhen("2026-10-01T08:00:00Z", now), Date.parse("2026-10-01T08:00:00Z"));
  assert.equal(parseWhen("2026-10-01", now), new Date(2026, 9, 1).getTime());
  const today = new Date(now);
  today.setHours(0, 0, 0, 0);
  assert.equal(parseWhen("today", now), today.getTime());
  assert.equal(parseWhen("yesterday", now), today.getTime() - 86_400_000);
  assert.throws(() => parseWhen("last tuesday", now), RangeError);
  assert.throws(() => parseWhen("2026-02-30", now), RangeError);
});
