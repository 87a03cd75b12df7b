// Sizes and durations as people read them: the same words in the commands and the dashboard.

import assert from "node:assert/strict";
import { formatBytes, formatDuration } from "../../lib/format.ts";

Deno.test("formatBytes() counts in thousands with one decimal below ten", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(999), "999 B");
  assert.equal(formatBytes(1000), "1.0 KB");
  assert.equal(formatBytes(1_400_000), "1.4 MB");
  assert.equal(formatBytes(12_345_678), "12 MB");
  assert.equal(formatBytes(5e15), "5000 TB");
});

Deno.test("formatDuration() reads as ms, seconds, then minutes and seconds", () => {
  assert.equal(formatDuration(849.6), "850 ms");
  assert.equal(formatDuration(12_345), "12.3 s");
  assert.equal(formatDuration(245_000), "4 min 05 s");
});
