// Tests for lib/stage_markers_read.ts: the log read back 64 KiB at a time gives every marker
// whole, wherever a read ends, and leaves out what is not one (a line too long to be a marker, a
// torn last line), on real files.

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Marker } from "../../lib/stage_markers.ts";
import { OpenSteps, readMarkers, unclosed } from "../../lib/stage_markers_read.ts";
import { rotatedPath } from "../../lib/stage_markers.ts";

const T0 = Date.parse("2025-03-01T10:00:00.000Z");

function markerLine(seq: number, event: Marker["event"], step = "capture.batch"): string {
  const time = new Date(T0 + seq).toISOString();
  return JSON.stringify({ time, pid: 4242, op: "capture:0badc0de", seq, step, event }) + "\n";
}

Deno.test("unclosed() and readMarkers() read a log of megabytes whole, across every read's end", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "logbook-stage-markers-read-" });
  try {
    const path = join(dir, "stage-markers.log");
    const parts: string[] = [];
    let bytes = 0;
    let seq = 0;
    const add = (line: string) => {
      parts.push(line);
      bytes += new TextEncoder().encode(line).length;
    };
    // Some 3 MiB of steps that closed, with non-ASCII step names (a read may end inside one),
    // lines too long to be markers across a read's end and across whole reads, and three steps
    // left open.
    const open = [1_000, 5_000, 11_000];
    while (bytes < 3 * 1024 * 1024) {
      seq++;
      add(markerLine(seq, "start", seq % 7 ? "capture.batch" : "índice·写入"));
      if (!open.includes(seq)) add(markerLine(seq, seq % 5 ? "finish" : "fail"));
      if (bytes > 1024 * 1024 - 8 * 1024 && bytes < 1024 * 1024) {
        add(`{"pad":"${"x".repeat(20 * 1024)}"}\n`);
      }
      if (bytes > 2 * 1024 * 1024 - 8 * 1024 && bytes < 2 * 1024 * 1024) {
        add(`{"pad":"${"y".repeat(150 * 1024)}"}\n`);
      }
    }
    const whole = parts.join("");
    Deno.writeTextFileSync(path, whole + markerLine(seq + 1, "start").slice(0, 40));
    const steps = await unclosed(path, { now: T0 + 60_000, isAlive: () => false });
    assert.deepEqual(steps.map((s) => s.seq), open);
    assert.equal(steps[0]!.step, "capture.batch");
    assert.equal(steps[1]!.started, new Date(T0 + 5_000).toISOString());
    const expected = whole.split("\n").filter((l) => l.startsWith('{"time"')).map((l) =>
      JSON.parse(l) as Marker
    );
    const markers = await readMarkers(path);
    assert.equal(markers.length, expected.length);
    assert.deepEqual(markers, expected);
    assert.ok(markers.some((m) => m.step === "índice·写入"));
    assert.deepEqual(await readMarkers(path, { tail: 3 }), expected.slice(-3));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("OpenSteps reads on from where it stopped, a torn line once it is whole, and both files again after a rotation", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "logbook-stage-markers-read-" });
  try {
    const path = join(dir, "stage-markers.log");
    const options = { now: T0 + 60_000, isAlive: () => false };
    const seqs = async (steps: OpenSteps) => (await steps.read(options)).map((s) => s.seq);
    const append = (text: string) => Deno.writeTextFileSync(path, text, { append: true });
    const steps = new OpenSteps(path);
    assert.deepEqual(await seqs(steps), [], "no log yet");

    append(markerLine(1, "start") + markerLine(2, "start") + markerLine(1, "finish"));
    assert.deepEqual(await seqs(steps), [2]);

    // A line torn as it is written, then whole: read once it ends.
    const torn = markerLine(2, "finish");
    append(markerLine(3, "start") + torn.slice(0, 30));
    assert.deepEqual(await seqs(steps), [2, 3]);
    append(torn.slice(30));
    assert.deepEqual(await seqs(steps), [3]);
    assert.deepEqual(await seqs(steps), [3], "nothing new, nothing changes");

    // Rotated: the log becomes .1, a new log begins.
    Deno.renameSync(path, rotatedPath(path));
    append(markerLine(4, "start") + markerLine(3, "fail"));
    assert.deepEqual(await seqs(steps), [4]);
    append(markerLine(5, "start"));
    const [again, fresh] = await Promise.all([seqs(steps), seqs(steps)]);
    assert.deepEqual(again, [4, 5]);
    assert.deepEqual(fresh, [4, 5], "reads asked at once read one after the other");
    assert.deepEqual((await unclosed(path, options)).map((s) => s.seq), [4, 5]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("OpenSteps with a data dir keeps what it read in the run directory: the next process reads only what was written since", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "logbook-stage-markers-read-" });
  try {
    const path = join(dir, "stage-markers.log");
    const paths = { root: dir, run: join(dir, "run") };
    const kept = join(paths.run, "open_steps.json");
    const options = { now: T0 + 60_000, isAlive: () => false };
    const seqs = async (steps: OpenSteps) => (await steps.read(options)).map((s) => s.seq);
    const append = (text: string) => Deno.writeTextFileSync(path, text, { append: true });
    append(markerLine(1, "start") + markerLine(2, "start") + markerLine(1, "finish"));

    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [2]);
    assert.throws(() => Deno.statSync(paths.run), Deno.errors.NotFound, "no run dir made");
    Deno.mkdirSync(paths.run, { mode: 0o700 });
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [2]);
    assert.equal(Deno.statSync(kept).mode! & 0o777, 0o600);

    // The next process reads on: a line before where the last one stopped, changed in place
    // (same file, same size), is not read again; the lines after it are.
    const before = Deno.readTextFileSync(path);
    Deno.writeTextFileSync(path, before.replace(markerLine(2, "start"), markerLine(7, "start")));
    append(markerLine(3, "start") + markerLine(4, "start") + markerLine(3, "finish"));
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [2, 4]);
    assert.deepEqual(await seqs(new OpenSteps(path)), [7, 4], "without it, the whole log");

    // Rotated: both files read again, and kept anew.
    Deno.renameSync(path, rotatedPath(path));
    append(markerLine(5, "start") + markerLine(4, "fail"));
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 5]);
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 5]);

    // What is kept says 5 is open; the log, changed in place, now says 8. Another log's state
    // is not taken, and a damaged file is a whole read, never an error.
    const good = JSON.parse(Deno.readTextFileSync(kept));
    const rotatedLog = Deno.readTextFileSync(path);
    Deno.writeTextFileSync(
      path,
      rotatedLog.replace(markerLine(5, "start"), markerLine(8, "start")),
    );
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 5]);
    const other = join(dir, "other.log");
    Deno.writeTextFileSync(other, markerLine(9, "start"));
    assert.deepEqual(await seqs(new OpenSteps(other, paths)), [9]);
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 8]);
    const badTime = structuredClone(good);
    badTime.open[0][1].marker.time = "not a time";
    for (
      const damaged of [
        "{",
        '{"path":1}',
        JSON.stringify({ ...good, read: {} }),
        JSON.stringify(badTime),
      ]
    ) {
      Deno.writeTextFileSync(kept, damaged);
      assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 8], damaged);
    }
    Deno.writeTextFileSync(kept, JSON.stringify(good));
    assert.deepEqual(await seqs(new OpenSteps(path, paths)), [7, 5], "the good one is taken");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
