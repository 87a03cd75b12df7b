// The store's small parts: the line reader's boundaries, the streaming JSON scanner, index
// fragments, snippets and relative times.

import assert from "node:assert/strict";
import { type ByteReader, LineReader } from "../../../lib/capture/lines.ts";
import { JsonTextScanner } from "../../../lib/capture/json_stream.ts";
import { makeSnippet, queryTerms, splitFragments } from "../../../lib/store/_text.ts";
import { parseWhen } from "../../../lib/when.ts";

function readerOf(bytes: Uint8Array, step: number): ByteReader {
  let at = 0;
  return {
    read(buffer) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(step, buffer.length, bytes.length - at);
      buffer.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

Deno.test("LineReader hands out complete lines with their terminators and holds an incomplete tail", async () => {
  const text = "one\r\ntwo\n\nthree-without-newline";
  for (const step of [1, 2, 3, 7, 100]) {
    const reader = new LineReader(readerOf(new TextEncoder().encode(text), step), 10, 1 << 20);
    const lines: [number, string][] = [];
    for (let line = await reader.next(); line; line = await reader.next()) {
      assert.equal(line.oversized, false);
      lines.push([line.offset, new TextDecoder().decode(line.bytes)]);
    }
    assert.deepEqual(lines, [[10, "one\r\n"], [15, "two\n"], [19, "\n"]], `read step ${step}`);
    assert.equal(reader.position, 20);
    assert.equal(reader.pendingBytes, "three-without-newline".length);
  }
});

Deno.test("LineReader streams a line longer than its limit in pieces", async () => {
  const long = "x".repeat(300_000);
  const bytes = new TextEncoder().encode(`short\n${long}\nafter\n`);
  const reader = new LineReader(readerOf(bytes, 65_536), 0, 100_000);
  assert.equal(new TextDecoder().decode((await reader.next())!.bytes), "short\n");
  const head = (await reader.next())!;
  assert.equal(head.oversized, true);
  assert.equal(head.offset, 6);
  let total = head.bytes.length;
  let piece;
  while ((piece = await reader.nextPiece())) {
    total += piece.bytes.length;
    assert.ok(piece.bytes.length <= 65_536);
    if (piece.done) break;
  }
  assert.equal(total, long.length + 1);
  const after = (await reader.next())!;
  assert.equal(new TextDecoder().decode(after.bytes), "after\n");
  assert.equal(after.offset, 6 + long.length + 1);
});

Deno.test("JsonTextScanner keeps top scalars, decodes escapes and leaves out base64", () => {
  const payload = "A".repeat(5000);
  const json = JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "text", text: 'caf\u00e9 "quoted"\nline two \ud83d\ude00' },
        { type: "image", source: { type: "base64", data: payload } },
        { type: "tool_result", content: "plain words " + payload },
      ],
    },
    timestamp: "2026-10-01T00:00:00Z",
    n: 42,
    ok: true,
  });
  const scanner = new JsonTextScanner(new Set(["data"]));
  const bytes = new TextEncoder().encode(json);
  let text = "";
  for (let i = 0; i < bytes.length; i += 37) {
    scanner.write(bytes.subarray(i, i + 37));
    text += scanner.takeText();
  }
  scanner.end();
  assert.equal(scanner.failed, false);
  assert.equal(scanner.scalars.get("type"), "user");
  assert.equal(scanner.scalars.get("message.role"), "user");
  assert.equal(scanner.scalars.get("message.content.0.type"), "text");
  assert.equal(scanner.scalars.get("timestamp"), "2026-10-01T00:00:00Z");
  assert.equal(scanner.scalars.get("n"), 42);
  assert.equal(scanner.scalars.get("ok"), true);
  assert.match(text, /café "quoted"\nline two 😀/);
  assert.match(text, /plain words A/);
  assert.ok(!text.includes("A".repeat(300)) || text.includes("plain words " + "A".repeat(300)));
  assert.equal(text.split(payload).length, 2, "only the text that starts with words is kept");
});

Deno.test("JsonTextScanner reports invalid JSON", () => {
  const scanner = new JsonTextScanner(new Set());
  scanner.write(new TextEncoder().encode('{"a": [1, 2}'));
  scanner.end();
  assert.equal(scanner.failed, true);
});

Deno.test("splitFragments gives exactly N pieces that join back to the text", () => {
  const text = "word ".repeat(10_000) + "tail";
  for (const parts of [1, 2, 5, 17]) {
    const fragments = splitFragments(text, parts);
    assert.equal(fragments.length, parts);
    assert.equal(fragments.join(""), text);
  }
  assert.deepEqual(splitFragments("", 3), ["", "", ""]);
});

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
