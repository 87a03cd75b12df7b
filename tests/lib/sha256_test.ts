// The hand-written SHA-256 gives node:crypto's digest for short and block-boundary inputs.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../lib/sha256.ts";

Deno.test("sha256Hex() equals node:crypto's SHA-256", () => {
  const inputs = ["", "abc", "/home/dev/src/alpha", "é漢字🙂".repeat(30)];
  for (let n = 50; n <= 130; n++) inputs.push("x".repeat(n));
  inputs.push("y".repeat(10_000));
  for (const text of inputs) {
    assert.equal(
      sha256Hex(text),
      createHash("sha256").update(text).digest("hex"),
      `${text.length}`,
    );
  }
});
