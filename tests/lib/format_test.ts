// Sizes and durations as people read them: the same words in the commands and the dashboard.

import assert from "node:assert/strict";
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatLocalTime,
  messageOf,
  tilde,
  timeAgo,
} from "../../lib/format.ts";

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

Deno.test("timeAgo() says an age in its largest whole unit, in words or in a terminal's column", () => {
  const now = Date.parse("2026-09-30T12:00:00Z");
  const ago = (seconds: number) => now - seconds * 1000;
  const cases: [seconds: number, long: string, short: string][] = [
    [0, "just now", "just now"],
    [59.9, "just now", "just now"],
    [60, "1 minute ago", "1 min ago"],
    [5 * 60 + 30, "5 minutes ago", "5 min ago"],
    [3599, "59 minutes ago", "59 min ago"],
    [3600, "1 hour ago", "1 h ago"],
    [23 * 3600, "23 hours ago", "23 h ago"],
    [86400, "1 day ago", "1 d ago"],
    [29 * 86400, "29 days ago", "29 d ago"],
    [30 * 86400, "1 month ago", "2026-08-31"],
    [300 * 86400, "10 months ago", "2025-12-04"],
    [800 * 86400, "2 years ago", "2024-07-22"],
  ];
  for (const [seconds, long, short] of cases) {
    assert.equal(timeAgo(ago(seconds), now), long, `${seconds} s`);
    assert.equal(timeAgo(ago(seconds), now, "short"), short, `${seconds} s`);
  }
  // Every short age fits the terminal's column of ten.
  for (const [seconds] of cases) assert.ok(timeAgo(ago(seconds), now, "short").length <= 10);
  assert.equal(timeAgo(now + 5000, now), "just now", "a clock a little ahead");
});

Deno.test("tilde() shows the home directory as ~, and only a whole directory of it", () => {
  assert.equal(tilde("/home/ana/src/app", "/home/ana"), "~/src/app");
  assert.equal(tilde("/home/ana", "/home/ana"), "~");
  assert.equal(tilde("/home/anabel/app", "/home/ana"), "/home/anabel/app");
  assert.equal(tilde("/srv/app", undefined), "/srv/app");
  assert.equal(tilde(null, "/home/ana"), "-");
});

Deno.test("messageOf() says what a thrown value says", () => {
  assert.equal(messageOf(new RangeError("Bad size")), "Bad size");
  assert.equal(messageOf("plain words"), "plain words");
  assert.equal(messageOf(42), "42");
});
