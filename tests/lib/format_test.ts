// Sizes and durations as people read them: the same words in the commands and the dashboard.

import assert from "node:assert/strict";
import { formatBytes, formatCount, formatDuration, formatLocalTime } from "../../lib/format.ts";

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

Deno.test("formatLocalTime() reads as the local date and time to the minute", () => {
  const at = new Date(2026, 2, 4, 14, 22, 59);
  assert.equal(formatLocalTime(at.getTime()), "2026-03-04 14:22");
  assert.equal(formatLocalTime(at.toISOString()), "2026-03-04 14:22");
  assert.equal(formatLocalTime(null), "-");
  assert.equal(formatLocalTime("not a time"), "-");
});

Deno.test("formatCount() groups thousands with commas", () => {
  assert.equal(formatCount(0), "0");
  assert.equal(formatCount(999), "999");
  assert.equal(formatCount(1214), "1,214");
  assert.equal(formatCount(1234567), "1,234,567");
});
