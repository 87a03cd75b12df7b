// The figures' targets (bench/_figures.ts): those that depend on the corpus's size say so, and
// judge a run against the target of its size.

import assert from "node:assert/strict";
import { FIGURE_KEYS, type Figures, TARGETS } from "../../bench/_figures.ts";

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
