// Tests for lib/safe_json.ts: exact JSON without a raw terminal control or an
// invisible character in it.

import assert from "node:assert/strict";
import { safeJson } from "../../lib/safe_json.ts";

Deno.test("safeJson() parses back to the same value and holds no raw control character", () => {
  const value = {
    text: "\x1b]52;c;ZXZpbA==\x07 \x9b2J \x7f \u202e \u2066 \u2028 \r\n\t \ud800 Grüße 🦕",
    nested: [{ title: "\x1b]0;t\x1b\\" }],
  };
  const json = safeJson(value);
  assert.deepEqual(JSON.parse(json), value);
  // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
  assert.doesNotMatch(json, /[\0-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
  assert.match(json, /\\u009b2J/);
  // Unchanged where JSON.stringify needed nothing more.
  assert.equal(safeJson({ a: "plain ü" }), JSON.stringify({ a: "plain ü" }));
});

Deno.test("safeJson() escapes every character a reader cannot see, and parses back the same", () => {
  const value = {
    text:
      "pass\u200bword \u200c\u200d\u200e\u200f\u061c\u2060\ufeff\u00ad \u{e0049}\u{e0067} 👨\u200d👩 ❤\ufe0f",
  };
  const json = safeJson(value);
  assert.deepEqual(JSON.parse(json), value);
  assert.doesNotMatch(json, /[\p{Default_Ignorable_Code_Point}\u2028\u2029]/u);
  assert.match(json, /pass\\u200bword/);
  // A tag character as JSON writes a character past U+FFFF: its two surrogates.
  assert.match(json, /\\udb40\\udc49\\udb40\\udc67/);
  // Every invisible character of Unicode's.
  let all = "";
  for (let code = 0; code <= 0x10ffff; code++) {
    if (code < 0xd800 || code > 0xdfff) all += String.fromCodePoint(code);
  }
  const every = safeJson({ all });
  assert.equal(JSON.parse(every).all, all);
  assert.doesNotMatch(every, /[\p{Default_Ignorable_Code_Point}\u2028\u2029]/u);
});
