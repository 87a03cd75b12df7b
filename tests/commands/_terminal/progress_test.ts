// The capture's progress bar on stderr: redrawn in place at most every 100 ms, for a capture and
// for a rebuild (a note until the rebuild has counted its work) and for sources derived again, and
// cleared so the summary line starts clean.

import assert from "node:assert/strict";
import { progressBar } from "../../../commands/_terminal/progress.ts";
import type { Progress } from "../../../lib/capture/progress.ts";
import { captureIo } from "../../_helpers.ts";

const BASE: Progress = {
  phase: "capturing",
  sourcesTotal: 4,
  sourcesDone: 1,
  bytesTotal: 2_000_000,
  bytesDone: 1_000_000,
  startedAt: 0,
  pid: 42,
};

Deno.test("progressBar() draws the share, sources, bytes and time left, then clears", () => {
  const io = captureIo();
  let now = 10_000;
  const bar = progressBar(io, () => now);
  bar.update(BASE);
  assert.equal(
    io.stderr(),
    "\r[############............] 50% 1/4 sources 1.0 MB/2.0 MB 10.0 s left\x1b[K",
  );
  now += 50;
  bar.update({ ...BASE, bytesDone: 1_500_000 });
  assert.equal(io.stderr().split("\r").length, 2, "no redraw within 100 ms");
  bar.update({ ...BASE, phase: "rebuilding", sourcesTotal: 0, bytesTotal: 0, bytesDone: 0 });
  assert.match(
    io.stderr(),
    // deno-lint-ignore no-control-regex -- the bar ends its line with ESC [K
    /\rRebuilding the index and conversations from the raw records…\x1b\[K$/,
  );
  bar.clear();
  assert.ok(io.stderr().endsWith("\r\x1b[K"));
  bar.clear();
  assert.ok(!io.stderr().endsWith("\r\x1b[K\r\x1b[K"), "cleared once");
});

Deno.test("progressBar() draws a rebuild's share and time left as it draws a capture's", () => {
  const io = captureIo();
  let now = 10_000;
  const bar = progressBar(io, () => now);
  bar.update({ ...BASE, phase: "rebuilding", sourcesTotal: 0, bytesTotal: 0, bytesDone: 0 });
  now += 500;
  bar.update({ ...BASE, phase: "rebuilding", bytesDone: 500_000 });
  assert.ok(
    io.stderr().endsWith(
      "\rRebuilding [######..................] 25% 1/4 sources 500 KB/2.0 MB 31.5 s left\x1b[K",
    ),
    JSON.stringify(io.stderr()),
  );
  bar.clear();
  assert.ok(io.stderr().endsWith("\r\x1b[K"));
});

Deno.test("progressBar() draws sources derived again as it draws a capture, named so", () => {
  const io = captureIo();
  const bar = progressBar(io, () => 10_000);
  bar.update({ ...BASE, phase: "rederiving", sourcesDone: 2, bytesDone: 1_000_000 });
  assert.equal(
    io.stderr(),
    "\rDeriving again [############............] 50% 2/4 sources 1.0 MB/2.0 MB 10.0 s left\x1b[K",
  );
});
