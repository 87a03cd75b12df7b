// The capture's progress bar on stderr: redrawn in place at most every 100 ms, for a capture and
// for a rebuild (a note until the rebuild has counted its work) and for sources derived again, and
// cleared so the summary line starts clean.

import assert from "node:assert/strict";
import { progressBar, rebuildLines } from "../../../commands/_terminal/progress.ts";
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
    "\r[############............] 50% 1/4 sources 1.0 MB/2.0 MB estimating the time left\x1b[K",
    "no rate measured yet: the time since the pass started is not one",
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
  bar.update({ ...BASE, phase: "rebuilding", bytesDone: 0 });
  now += 1000;
  bar.update({ ...BASE, phase: "rebuilding", bytesDone: 500_000 });
  // 500 KB in the second since the rebuild counted its work: 1.5 MB left at 500 KB/s.
  assert.ok(
    io.stderr().endsWith(
      "\rRebuilding [######..................] 25% 1/4 sources 500 KB/2.0 MB 500 KB/s, 3.0 s left\x1b[K",
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
    "\rDeriving again [############............] 50% 2/4 sources 1.0 MB/2.0 MB estimating the time left\x1b[K",
  );
});

Deno.test("rebuildLines() writes a line as it starts, when it has counted, at most one an interval, and at the end", () => {
  const io = captureIo();
  let now = 0;
  const report = rebuildLines(io, { intervalMs: 10_000, now: () => now });
  const at = (bytesDone: number, sourcesDone: number) =>
    report({ ...BASE, phase: "rebuilding", bytesDone, sourcesDone });
  report({ ...BASE, phase: "rebuilding", bytesTotal: 0, bytesDone: 0 });
  report({ ...BASE, phase: "rebuilding", bytesTotal: 0, bytesDone: 0 });
  at(0, 0);
  now = 5000;
  at(500_000, 1);
  now = 10_000;
  at(1_000_000, 2);
  now = 12_000;
  at(2_000_000, 3);
  at(2_000_000, 4);
  at(2_000_000, 4);
  assert.deepEqual(io.stderr().split("\n"), [
    "Rebuilding: clearing what was derived, then counting what to derive again",
    "Rebuilding: 0% (0 B of 2.0 MB, 0 of 4 sources), estimating the time left",
    "Rebuilding: 50% (1.0 MB of 2.0 MB, 2 of 4 sources), 100 KB/s, 10.0 s left",
    "Rebuilding: 100% (2.0 MB of 2.0 MB, 4 of 4 sources), derived again; writing it to the store",
    "",
  ]);
});
