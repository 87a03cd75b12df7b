// A snippet's matches marked for the terminal: overlapping matches merged, the text between them
// passed through its own function (the filter).

import assert from "node:assert/strict";
import { markRanges } from "../../../commands/_terminal/highlight.ts";

Deno.test("markRanges() marks each match once and passes the rest through plain", () => {
  const text = "rotate the credentials, rotate them";
  const marked = markRanges(
    text,
    [[24, 30], [0, 6], [2, 6], [11, 22]],
    (t) => `[${t}]`,
    (t) => t.toUpperCase(),
  );
  assert.equal(marked, "[rotate] THE [credentials], [rotate] THEM");
  assert.equal(markRanges(text, [], (t) => `[${t}]`), text);
});
