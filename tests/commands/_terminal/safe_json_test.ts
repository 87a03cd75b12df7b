// Tests for commands/_terminal/safe_json.ts: exact JSON without a raw terminal control in it.

import assert from "node:assert/strict";
import { safeJson } from "../../../commands/_terminal/safe_json.ts";

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
