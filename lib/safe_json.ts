// JSON for a terminal or a pipe: exact JSON that holds no character a terminal would act on and
// none a reader cannot see. JSON.stringify escapes C0 controls but writes DEL, C1 controls, bidi
// controls and invisible characters (`lib/invisible.ts`) as they are.

import { INVISIBLE_CLASS } from "./invisible.ts";

// Only ever inside a JSON string, where an escape stands for the same character.
const UNESCAPED = new RegExp(`[\\x7f-\\x9f\\u2028\\u2029${INVISIBLE_CLASS}]`, "gu");

/**
 * `JSON.stringify(value)` with DEL, C1 controls, the line and paragraph separators, the bidi
 * controls and the invisible characters (zero-width ones, bidi marks, the BOM, tag characters)
 * escaped as `\uNNNN` too (a character past U+FFFF as its two surrogates, as JSON writes it): it
 * parses back to exactly the same value.
 */
export function safeJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError("Cannot write this value as JSON");
  // By hand, as in safeText: replace() with a function is slow once anything matched.
  let out = "";
  let done = 0;
  UNESCAPED.lastIndex = 0;
  for (let found = UNESCAPED.exec(json); found; found = UNESCAPED.exec(json)) {
    out += json.slice(done, found.index);
    for (let i = 0; i < found[0].length; i++) {
      out += `\\u${found[0].charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    done = UNESCAPED.lastIndex;
  }
  return done === 0 ? json : out + json.slice(done);
}
