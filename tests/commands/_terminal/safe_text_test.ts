// Tests for commands/_terminal/safe_text.ts: what a terminal would act on is shown, the rest of
// the text is left exactly as it was.

import assert from "node:assert/strict";
import { safeText } from "../../../commands/_terminal/safe_text.ts";

/** True when `text` holds a character a terminal acts on (tab and, with `newline`, LF allowed). */
function hasControl(text: string, newline: boolean): boolean {
  return [...text].some((c) => {
    const code = c.codePointAt(0)!;
    if (c === "\t" || (newline && c === "\n")) return false;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
  });
}

Deno.test("safeText() shows the sequences a transcript can plant instead of passing them", async (t) => {
  const cases: [string, string, string][] = [
    ["OSC 52 (clipboard)", "a\x1b]52;c;ZXZpbA==\x07b", "a␛]52;c;ZXZpbA==\\x07b"],
    ["ESC[2J (clear screen)", "\x1b[2J\x1b[H", "␛[2J␛[H"],
    ["OSC 0 (window title)", "\x1b]0;pwned\x1b\\", "␛]0;pwned␛\\"],
    [
      "OSC 8 (link)",
      "\x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\",
      "␛]8;;http://evil.example␛\\x␛]8;;␛\\",
    ],
    ["C1 CSI", "\x9b31mred", "\\x9b31mred"],
    ["C1 OSC and ST", "\x9d0;t\x9c", "\\x9d0;t\\x9c"],
    ["BEL", "ding\x07", "ding\\x07"],
    ["a lone CR", "safe\rEVIL", "safe\\x0dEVIL"],
    ["NUL and DEL", "\0x\x7f", "\\x00x\\x7f"],
    ["backspace and vertical tab", "ab\x08\x0b", "ab\\x08\\x0b"],
    [
      "bidi override (Trojan Source)",
      "if (x\u202e } \u2066y\u2069)",
      "if (x\\u202e } \\u2066y\\u2069)",
    ],
  ];
  for (const [name, input, shown] of cases) {
    await t.step(name, () => {
      assert.equal(safeText(input), shown);
      assert.equal(safeText(input, { multiline: true }), shown);
      assert.ok(!hasControl(safeText(input), false));
    });
  }
});

Deno.test("safeText() keeps newlines only where the layout needs them, and tabs always", () => {
  assert.equal(safeText("one\ntwo\r\nthree\tx", { multiline: true }), "one\ntwo\nthree\tx");
  assert.equal(safeText("one\ntwo\r\nthree\tx"), "one\\x0atwo\\x0d\\x0athree\tx");
});

Deno.test("safeText() leaves ordinary text, Unicode and lookalikes of escapes as they are", () => {
  const text =
    "Grüße, 日本語, emoji 🦕, U+FFFD \ufffd, a literal \\x1b and ␛ [REDACTED:github-token]";
  assert.equal(safeText(text), text);
  assert.equal(safeText(text, { multiline: true }), text);
  // Printable characters just outside the ranges stay too.
  assert.equal(
    safeText("\u00a0\u00ff\u2029\u202f\u2065\u206a ~"),
    "\u00a0\u00ff\u2029\u202f\u2065\u206a ~",
  );
});

Deno.test("safeText() leaves no control character of all 0x00–0xFF and the bidi set", () => {
  let all = "";
  for (let c = 0; c <= 0xff; c++) all += String.fromCharCode(c);
  for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
    all += String.fromCharCode(c);
  }
  assert.ok(!hasControl(safeText(all), false));
  assert.ok(!hasControl(safeText(all, { multiline: true }), true));
});
