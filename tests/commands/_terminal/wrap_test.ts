// Fitting text to a terminal: widths, cuts and wrapping that keep marks and never overflow.

import assert from "node:assert/strict";
import {
  cutStartToWidth,
  cutToWidth,
  displayWidth,
  wrapSpans,
  wrapText,
} from "../../../commands/_terminal/wrap.ts";

Deno.test("displayWidth() counts wide characters twice and combining marks not at all", () => {
  assert.equal(displayWidth("abc"), 3);
  assert.equal(displayWidth("日本語"), 6);
  assert.equal(displayWidth("e\u0301"), 1);
  // What the terminal filter keeps of an emoji's invisible parts takes no column.
  assert.equal(displayWidth("🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"), 2);
  assert.equal(displayWidth("🙂\ufe0f"), 2);
  assert.equal(displayWidth("葛\u{e0100}"), 2);
  // A joined sequence is its emoji, two columns each, and the joiner none.
  assert.equal(displayWidth("👩\u200d💻"), 4);
});

Deno.test("displayWidth() counts what Unicode calls wide as two, emoji before U+1F300 too", () => {
  // Terminals draw these in two columns (East Asian Width "W"); a hand-written table missed them.
  assert.equal(displayWidth("✅"), 2);
  assert.equal(displayWidth("⌚"), 2);
  assert.equal(displayWidth("⚡ done"), 7);
  assert.equal(displayWidth("🀄"), 2);
  // Ambiguous characters (arrows, box drawing) are narrow, as on a terminal outside East Asia.
  assert.equal(displayWidth("→─"), 2);
  // Combining marks of every script take no column, not only those after Latin letters.
  assert.equal(displayWidth("क्ष"), 2);
  assert.equal(displayWidth("a\u20dd"), 1);
  assert.equal(displayWidth(cutToWidth("✅✅✅✅ all green", 6)), 5);
});

Deno.test("cutToWidth() and cutStartToWidth() fit a line, marking the cut", () => {
  assert.equal(cutToWidth("short", 10), "short");
  assert.equal(cutToWidth("a long title here", 8), "a long …");
  assert.equal(displayWidth(cutToWidth("日本語のタイトル", 7)), 7);
  assert.equal(cutStartToWidth("/home/dev/src/alpha", 10), "…src/alpha");
});

Deno.test("wrapSpans() breaks at spaces, keeps marks, and breaks only words wider than a line", () => {
  const lines = wrapSpans([
    { text: "one two ", mark: false },
    { text: "three four", mark: true },
    { text: " five", mark: false },
  ], 9);
  const text = lines.map((l) => l.map((s) => s.text).join(""));
  assert.deepEqual(text, ["one two", "three", "four five"]);
  assert.ok(lines[1]!.every((s) => s.mark));
  assert.equal(lines[2]![0]!.mark, true);
  const long = wrapSpans([{ text: "x".repeat(25), mark: false }], 10);
  assert.deepEqual(long.map((l) => l.map((s) => s.text).join("").length), [10, 10, 5]);
});

Deno.test("wrapText() wraps long lines only, keeping their indentation", () => {
  assert.equal(wrapText("fits\n", 10), "fits\n");
  const wrapped = wrapText("    " + "word ".repeat(10).trim(), 30);
  for (const line of wrapped.split("\n")) {
    assert.ok(line.length <= 30);
    assert.ok(line.startsWith("    word"));
  }
});
