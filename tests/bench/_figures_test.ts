// The figures' targets (bench/_figures.ts): those that depend on the corpus's size say so, and
// judge a run against the target of its size.

import assert from "node:assert/strict";
import type { CaptureReport } from "../../bench/_capture.ts";
import {
  FIGURE_KEYS,
  type Figures,
  figuresOf,
  type Measured,
  TARGETS,
} from "../../bench/_figures.ts";

/** Figures with only `key` measured, as `value`. */
function only(key: keyof Figures, value: number): Figures {
  const figures = Object.fromEntries(FIGURE_KEYS.map((k) => [k, null])) as Figures;
  figures[key] = value;
  return figures;
}

function target(key: keyof Figures) {
  return TARGETS.find((t) => t.key === key)!;
}

Deno.test("capture's peak memory: ≤ 200 MiB at 200 MB, ≤ 250 MiB from 1 GB on", () => {
  const rss = target("capture_peak_rss_mb");
  const figures = only("capture_peak_rss_mb", 225.7);
  assert.equal(rss.target(figures, 200e6), "≤ 200");
  assert.equal(rss.met(figures, 200e6), false);
  assert.equal(rss.target(figures, 10e9), "≤ 250");
  assert.equal(rss.met(figures, 10e9), true);
  assert.equal(rss.met(figures, 1e9), true);
  assert.equal(rss.met(only("capture_peak_rss_mb", 251), 10e9), false);
  assert.equal(rss.met(only("noop_reindex_ms", 1), 10e9), null);
});

Deno.test("a no-op reindex is judged against 300 ms at 200 MB and 1.5 s at 10 GB", () => {
  const noop = target("noop_reindex_ms");
  assert.equal(noop.met(only("noop_reindex_ms", 1206), 200e6), false);
  assert.equal(noop.met(only("noop_reindex_ms", 1206), 10e9), true);
});

Deno.test("capture is judged against 80% of the FTS ceiling measured in the same run", () => {
  const capture = target("capture_mb_s");
  const figures = (capture: number) => ({ ...only("capture_mb_s", capture), fts_ceiling_mb_s: 25 });
  assert.equal(capture.target(figures(18), 10e9), "≥ 80% of the FTS ceiling (20)");
  assert.equal(capture.met(figures(18), 10e9), false);
  assert.equal(capture.met(figures(20.5), 10e9), true);
  assert.equal(capture.met(only("capture_mb_s", 20.5), 10e9), null);
});

Deno.test("capture at size over the slice's: ≥ 0.9, and nothing to judge without a slice", () => {
  const slowdown = target("capture_over_slice");
  assert.equal(slowdown.met(only("capture_over_slice", 0.89), 10e9), false);
  assert.equal(slowdown.met(only("capture_over_slice", 0.9), 10e9), true);
  assert.equal(slowdown.met(only("capture_mb_s", 20), 1e9), null);
});

Deno.test("the slice's capture and the corpus's over it, from the same run's two captures", () => {
  // 10 GB in 500 s (20 MB/s) against a 1 GB slice in 40 s (25 MB/s).
  const capture = (slice: number | null) =>
    ({
      bytes: 10e9,
      ms: 500_000,
      ceiling: { insertMs: 400_000 },
      store: { db: 10e9, wal: 0 },
      breakdown: { slice, bytes: 1e9, captureMs: 40_000 },
    }) as unknown as CaptureReport;
  // Every other family not measured: null.
  const measured = (c: CaptureReport) =>
    new Proxy({ capture: c }, { get: (m, key) => Reflect.get(m, key) ?? null }) as Measured;
  const sliced = figuresOf(measured(capture(1e9)));
  assert.equal(sliced.capture_mb_s, 20);
  assert.equal(sliced.slice_capture_mb_s, 25);
  assert.equal(sliced.capture_over_slice, 0.8);
  const whole = figuresOf(measured(capture(null)));
  assert.equal(whole.slice_capture_mb_s, null);
  assert.equal(whole.capture_over_slice, null);
});
