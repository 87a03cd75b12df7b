// The time a pass has left: from the rate measured over spans of its reports, smoothed, and
// estimating until a rate was measured.

import assert from "node:assert/strict";
import { type Progress, TimeLeft } from "../../../lib/capture/progress.ts";

const AT: Progress = {
  phase: "rebuilding",
  sourcesTotal: 10,
  sourcesDone: 0,
  bytesTotal: 10_000_000,
  bytesDone: 0,
  startedAt: 0,
  pid: 42,
};

Deno.test("TimeLeft estimates until a span is measured, then gives what is left at the rate", () => {
  const timeLeft = new TimeLeft({ sampleMs: 1000, windowMs: 10_000 });
  // An hour since the pass started counts for nothing: only the bytes' own rate does.
  assert.deepEqual(timeLeft.update(AT, 3_600_000), { bytesPerSecond: null, leftMs: null });
  assert.deepEqual(
    timeLeft.update({ ...AT, bytesDone: 500_000 }, 3_600_500),
    { bytesPerSecond: null, leftMs: null },
    "half a span is not yet a rate",
  );
  // 1 MB in the first second: 9 MB left at 1 MB/s.
  assert.deepEqual(timeLeft.update({ ...AT, bytesDone: 1_000_000 }, 3_601_000), {
    bytesPerSecond: 1_000_000,
    leftMs: 9000,
  });
  assert.deepEqual(timeLeft.update({ ...AT, bytesDone: 10_000_000 }, 3_602_000).leftMs, 0);
});

Deno.test("TimeLeft smooths the rate: a slow span moves it part of the way", () => {
  const timeLeft = new TimeLeft({ sampleMs: 1000, windowMs: 10_000 });
  timeLeft.update(AT, 0);
  timeLeft.update({ ...AT, bytesDone: 2_000_000 }, 1000);
  // A second at 0 B/s (a giant line being read): the rate falls by 1 - e^-0.1 of the gap.
  const slow = timeLeft.update({ ...AT, bytesDone: 2_000_000 }, 2000);
  const expected = 2_000_000 * Math.exp(-0.1);
  assert.ok(Math.abs(slow.bytesPerSecond! - expected) < 1, `${slow.bytesPerSecond}`);
  assert.equal(slow.leftMs, Math.round(8_000_000 / (expected / 1000)));
});

Deno.test("TimeLeft starts measuring again with a new phase", () => {
  const timeLeft = new TimeLeft({ sampleMs: 1000 });
  timeLeft.update(AT, 0);
  assert.notEqual(timeLeft.update({ ...AT, bytesDone: 1_000_000 }, 1000).leftMs, null);
  const capturing = { ...AT, phase: "capturing" as const, bytesTotal: 5_000 };
  assert.deepEqual(timeLeft.update(capturing, 1500), { bytesPerSecond: null, leftMs: null });
});
