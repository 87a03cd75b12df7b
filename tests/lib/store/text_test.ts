// The words and snippet marks of lib/store/text.ts: ASCII text takes the cheap letter class, and
// must find exactly what the Unicode class finds.

import assert from "node:assert/strict";
import { leadToMatch, makeSnippet, queryTerms, tokenize } from "../../../lib/store/text.ts";
import { isAscii } from "../../../lib/store/_letters.ts";

/** The words as the Unicode class alone finds them. */
function unicodeWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}\p{Co}]+/gu) ?? [];
}

/** The marked substrings of a snippet of `text` for `query`. */
function marked(text: string, query: string): string[] {
  const snippet = makeSnippet(text, queryTerms(query), 400);
  return snippet.ranges.map(([a, b]) => snippet.text.slice(a, b));
}

Deno.test("isAscii() tells ASCII text from text with any other character", () => {
  assert.equal(isAscii(""), true);
  assert.equal(isAscii("plain words, tabs\t and \u007f"), true);
  assert.equal(isAscii("café"), false);
  assert.equal(isAscii("an astral letter 𝐀"), false);
  assert.equal(isAscii("\u0080"), false);
});

Deno.test("tokenize() finds the words the Unicode class finds, in ASCII text and not", () => {
  const texts = [
    "Rotate the KEYRING_v2 creds: phx.server, a-b_c 42x",
    "don't split co-op; ID=abc123 (ok)",
    "café naïve Straße 東京 ｆｕｌｌ 𝐀𝐁 ٣٤ \ue000private",
    "\u212a is the Kelvin sign, lowercased to k",
  ];
  for (const text of texts) assert.deepEqual(tokenize(text), unicodeWords(text), text);
});

Deno.test("makeSnippet() marks whole words alike in ASCII and non-ASCII text", () => {
  // ASCII text: the cheap class.
  assert.deepEqual(marked("cafe, cafes and a cafe.", "cafe"), ["cafe", "cafe"]);
  assert.deepEqual(marked("cafe, cafes and a cafe.", "cafe*"), ["cafe", "cafes", "cafe"]);
  assert.deepEqual(marked("rotate the keyring now", '"the keyring"'), ["the keyring"]);
  // A letter beyond ASCII still bounds a word: "caf" is not a word of "café" or "cafés".
  assert.deepEqual(marked("café, caf and cafés", "caf"), ["caf"]);
  assert.deepEqual(marked("naïve naï", "na"), []);
  assert.deepEqual(marked("Straße strasse", "stra*"), ["Straße", "strasse"]);
});

Deno.test("makeSnippet() finds a word with an invisible character inside and marks it whole", () => {
  assert.deepEqual(marked("Where is the pass\u200bword reset?", "password"), ["pass\u200bword"]);
  assert.deepEqual(marked("a soft hy\u00adphen", "hyphen"), ["hy\u00adphen"]);
  // The BOM is no space, though JavaScript's \\s counts it as one.
  assert.deepEqual(marked("the pass\ufeffword", "password"), ["pass\ufeffword"]);
  // Tag characters inside a word, and a prefix.
  assert.deepEqual(marked("over\u{e0041}\u{e0042}flows", "overflow*"), [
    "over\u{e0041}\u{e0042}flows",
  ]);
  // An invisible character at a word's edge stays outside the mark.
  assert.deepEqual(marked("\u200eleft\u200f marks", "left"), ["left"]);
  // The snippet keeps them: the terminal filter shows them.
  assert.equal(makeSnippet("pass\u200bword", queryTerms("password")).text, "pass\u200bword");
});

Deno.test("leadToMatch() keeps at most the asked lead before the first match, marks moved", () => {
  const text = "one two three four five six seven eight nine ten grebe eleven twelve";
  const snippet = makeSnippet(text, queryTerms("grebe twelve"));
  const near = leadToMatch(snippet, 10);
  assert.equal(near.text, "…nine ten grebe eleven twelve");
  assert.deepEqual(near.ranges.map(([a, b]) => near.text.slice(a, b)), ["grebe", "twelve"]);
  assert.equal(leadToMatch(snippet, 60), snippet, "a match within the lead is left as it is");
  const none = makeSnippet(text, queryTerms("zzz"));
  assert.equal(leadToMatch(none, 5), none, "nothing matched: nothing moved");
});
