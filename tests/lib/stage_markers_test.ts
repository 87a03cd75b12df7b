// Tests for lib/stage_markers.ts: what a marker holds (and never holds), owner-only files,
// rotation, the off switches, stall reports, and reading open steps back, on real files and
// real processes.

import assert from "node:assert/strict";
import { join } from "node:path";
import { envFrom } from "../../lib/env.ts";
import {
  configureStageMarkers,
  createStageMarkers,
  DEFAULT_STALL_AFTER_MS,
  errorClass,
  liveDirOf,
  type Marker,
  operation,
  rotatedPath,
  stage,
  stageMarkersFromEnv,
  stageMarkersLocation,
  type StallTimers,
} from "../../lib/stage_markers.ts";
import { readMarkers, unclosed } from "../../lib/stage_markers_read.ts";
import { childBaseEnv } from "../_helpers.ts";

const T0 = Date.parse("2025-03-01T10:00:00.000Z");
const LIB = new URL("../../lib/stage_markers.ts", import.meta.url).href;

function tempDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "logbook-stage-markers-" }));
}

function modeOf(path: string): number {
  return (Deno.lstatSync(path).mode ?? -1) & 0o7777;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function linesOf(path: string): Marker[] {
  return Deno.readTextFileSync(path).split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** A clock and stall timers that only move when the test says so. */
function manualTime(start = T0) {
  let now = start;
  let nextId = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: StallTimers = {
    set(fn, ms) {
      pending.set(++nextId, { at: now + ms, fn });
      return nextId;
    },
    clear(handle) {
      pending.delete(handle as number);
    },
  };
  return {
    now: () => now,
    timers,
    pending,
    /** Moves the clock on, firing each timer that falls due at its own time. */
    tick(ms: number) {
      const end = now + ms;
      for (const [id, timer] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > end || !pending.has(id)) continue;
        now = Math.max(now, timer.at);
        pending.delete(id);
        timer.fn();
      }
      now = end;
    },
  };
}

Deno.test("stage() writes a start and a finish with pid, operation, step and duration", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "logs", "stage-markers.log");
    const time = manualTime();
    const markers = createStageMarkers({ path, root: dir, now: time.now, timers: time.timers });
    const op = markers.operation("capture");
    assert.match(op.id, /^capture:[0-9a-f]{8}$/);
    const result = await op.stage("capture.batch", () => {
      time.tick(1500);
      return 42;
    });
    assert.equal(result, 42);
    assert.deepEqual(linesOf(path), [
      {
        time: "2025-03-01T10:00:00.000Z",
        pid: Deno.pid,
        op: op.id,
        seq: 1,
        step: "capture.batch",
        event: "start",
      },
      {
        time: "2025-03-01T10:00:01.500Z",
        pid: Deno.pid,
        op: op.id,
        seq: 1,
        step: "capture.batch",
        event: "finish",
        ms: 1500,
      },
    ]);
    const sync = markers.stageSync("index.write", () => "done");
    assert.equal(sync, "done");
    const last = linesOf(path).at(-1)!;
    assert.equal(last.step, "index.write");
    assert.match(last.op, /^process:[0-9a-f]{8}$/);
    assert.equal(markers.id, last.op);
    assert.deepEqual(markers.health(), {
      enabled: true,
      path,
      written: 4,
      dropped: 0,
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a failing step writes fail with the error's class name and code, and rethrows it", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const markers = createStageMarkers({ path, now: () => T0 });
    class SnapshotError extends Error {
      override name = "SnapshotError";
    }
    const thrown = new SnapshotError("Cannot write snapshot");
    await assert.rejects(markers.stage("snapshot.write", () => Promise.reject(thrown)), (err) => {
      assert.equal(err, thrown);
      return true;
    });
    const noSpace = Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
    assert.throws(() =>
      markers.stageSync("index.write", () => {
        throw noSpace;
      }), (err) => err === noSpace);
    await assert.rejects(markers.stage("model.request", () => Promise.reject("plain string")));
    const open = markers.begin("compaction.summary");
    open.fail("timeout");
    open.finish(); // a closed step stays closed
    const fails = linesOf(path).filter((m) => m.event !== "start");
    assert.deepEqual(fails.map((m) => [m.step, m.event, m.error, m.code]), [
      ["snapshot.write", "fail", "SnapshotError", undefined],
      ["index.write", "fail", "Error", "ENOSPC"],
      ["model.request", "fail", "NonError", undefined],
      ["compaction.summary", "fail", "timeout", undefined],
    ]);
    assert.throws(() => markers.begin("x.y").fail("Disk full: /home/me"), TypeError);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("no step argument reaches the log: secrets in the work and in the error are absent", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const secret = "sk-live-7f3e9a1c2b4d6e8f0a1b2c3d";
    const markers = createStageMarkers({ path });
    const elsewhere = join(dir, "work.txt");
    await markers.stage("snapshot.write", async () => {
      await Deno.writeTextFile(elsewhere, `export API_KEY=${secret}`);
      return secret;
    });
    await assert.rejects(
      markers.operation("model").stage("model.request", () => {
        throw new Error(`401 for key ${secret} on query "where is my password"`);
      }),
    );
    const weird = new Error(secret);
    weird.name = `Bad ${secret}`;
    assert.deepEqual(errorClass(weird), { error: "Error" });
    markers.begin("x.y").fail(weird);
    const text = Deno.readTextFileSync(path);
    assert.equal(linesOf(path).length, 6);
    assert.ok(!text.includes(secret), "the secret is not in the log");
    assert.ok(!text.includes("password"), "the query is not in the log");
    // Its words, not "401" alone: a time's milliseconds, a pid or an operation's random id may
    // hold those digits.
    assert.ok(!text.includes("401 for key"), "the error message is not in the log");
    const keys = new Set(linesOf(path).flatMap((m) => Object.keys(m)));
    assert.deepEqual(
      [...keys].sort(),
      ["error", "event", "ms", "op", "pid", "seq", "step", "time"],
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("step and operation names are checked: lowercase, short, no user text", () => {
  const markers = createStageMarkers({ enabled: false });
  for (const bad of ["", "Capture", "1step", "a b", "x/y", "a".repeat(65), "naïve", "rm -rf"]) {
    assert.throws(() => markers.begin(bad), TypeError, bad);
    assert.throws(() => markers.operation(bad), TypeError, bad);
  }
  assert.throws(() => markers.stageSync("Bad Name", () => 1), /Invalid stage step name "Bad Name"/);
  for (const good of ["a", "capture.batch", "fs_diff-2", "a".repeat(64)]) {
    markers.begin(good).finish();
    markers.operation(good);
  }
});

Deno.test("the log is 0600 in 0700 directories whatever the umask; looser ones are tightened", () => {
  const dir = tempDir();
  const previous = Deno.umask(0o277);
  try {
    const data = join(dir, "data");
    const path = join(data, "logs", "stage-markers.log");
    createStageMarkers({ path, root: data }).begin("a.step").finish();
    assert.equal(modeOf(data), 0o700);
    assert.equal(modeOf(join(data, "logs")), 0o700);
    assert.equal(modeOf(path), 0o600);

    Deno.chmodSync(join(data, "logs"), 0o755);
    Deno.chmodSync(path, 0o644);
    createStageMarkers({ path, root: data }).begin("a.step").finish();
    assert.equal(modeOf(join(data, "logs")), 0o700);
    assert.equal(modeOf(path), 0o600);
  } finally {
    Deno.umask(previous);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the log rotates at the size limit and keeps exactly one .1", () => {
  const dir = tempDir();
  try {
    const logs = join(dir, "logs");
    const path = join(logs, "stage-markers.log");
    const maxBytes = 4096;
    const markers = createStageMarkers({ path, root: dir, maxBytes });
    assert.throws(() => createStageMarkers({ path, maxBytes: 10 }), RangeError);
    let rotations = 0;
    let sizeBefore = 0;
    for (let i = 0; i < 200; i++) {
      markers.stageSync("capture.batch", () => i);
      const size = Deno.statSync(path).size;
      if (size < sizeBefore) rotations++;
      sizeBefore = size;
      assert.ok(size <= maxBytes, `log is ${size} bytes`);
    }
    assert.ok(rotations >= 5, `rotated ${rotations} times`);
    assert.deepEqual([...Deno.readDirSync(logs)].map((e) => e.name).sort(), [
      "stage-markers.live",
      "stage-markers.log",
      "stage-markers.log.1",
    ]);
    assert.deepEqual([...Deno.readDirSync(liveDirOf(path))], [], "no step open, no lock kept");
    const old = rotatedPath(path);
    assert.ok(Deno.statSync(old).size <= maxBytes);
    assert.ok(Deno.statSync(old).size > maxBytes / 2);
    assert.equal(modeOf(old), 0o600);
    // Nothing is lost at the seam: .1 ends where the current file begins.
    const seqs = [...linesOf(old), ...linesOf(path)].map((m) => m.seq);
    for (let i = 1; i < seqs.length; i++) {
      assert.ok(seqs[i]! - seqs[i - 1]! <= 1, `markers between ${seqs[i - 1]} and ${seqs[i]}`);
    }
    assert.equal(seqs.at(-1), 200);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("LOGBOOK_STAGE_MARKERS=0 and enabled: false write no file and create no directory", async (t) => {
  const dir = tempDir();
  try {
    const data = join(dir, "data");
    const moved = join(dir, "elsewhere", "markers.log");
    const reports: string[] = [];
    const onStall = (line: string) => reports.push(line);
    const cases = {
      "LOGBOOK_STAGE_MARKERS=0": stageMarkersFromEnv(
        envFrom({ LOGBOOK_DATA_DIR: data, LOGBOOK_STAGE_MARKERS: "0" }),
        { stallAfterMs: 1, onStall },
      ),
      "LOGBOOK_STAGE_MARKERS=0 with a moved log": stageMarkersFromEnv(
        envFrom({
          LOGBOOK_DATA_DIR: data,
          LOGBOOK_STAGE_MARKERS: "0",
          LOGBOOK_STAGE_MARKERS_PATH: moved,
        }),
        { stallAfterMs: 1, onStall },
      ),
      "enabled: false (incognito)": stageMarkersFromEnv(
        envFrom({ LOGBOOK_DATA_DIR: data }),
        { enabled: false, stallAfterMs: 1, onStall },
      ),
    };
    for (const [name, markers] of Object.entries(cases)) {
      await t.step(name, async () => {
        assert.equal(markers.enabled, false);
        assert.equal(await markers.stage("a.step", () => 7), 7);
        const slow = () => new Promise((r) => setTimeout(r, 20));
        await markers.operation("capture").stage("b.step", slow);
        markers.begin("c.step");
        await slow();
        assert.deepEqual(reports, [], "no stall report while off");
        assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing created");
        assert.equal(markers.health().written, 0);
        assert.equal(markers.health().dropped, 0);
        assert.ok(markers.health().off);
      });
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("LOGBOOK_STAGE_MARKERS_PATH moves the log out of the data dir", async () => {
  const dir = tempDir();
  try {
    const data = join(dir, "data");
    const moved = join(dir, "volume", "markers", "stage.log");
    const env = envFrom({ LOGBOOK_DATA_DIR: data, LOGBOOK_STAGE_MARKERS_PATH: moved });
    assert.deepEqual(stageMarkersLocation(env), {
      path: moved,
      root: join(dir, "volume", "markers"),
    });
    assert.deepEqual(stageMarkersLocation(envFrom({ LOGBOOK_DATA_DIR: data })), {
      path: join(data, "logs", "stage-markers.log"),
      root: data,
    });
    const markers = stageMarkersFromEnv(env);
    await markers.stage("capture.batch", () => 1);
    assert.equal(linesOf(moved).length, 2);
    assert.equal(exists(data), false, "the data dir is not created");
    assert.equal(modeOf(moved), 0o600);
    assert.equal(modeOf(join(dir, "volume", "markers")), 0o700);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a marker that cannot be written is dropped and counted, never thrown", async () => {
  const dir = tempDir();
  try {
    const data = join(dir, "data");
    Deno.mkdirSync(data, { mode: 0o700 });
    Deno.writeTextFileSync(join(data, "logs"), "a file where the logs dir should be");
    const blocked = createStageMarkers({
      path: join(data, "logs", "stage-markers.log"),
      root: data,
    });
    assert.equal(await blocked.stage("capture.batch", () => "still works"), "still works");
    const health = blocked.health();
    assert.equal(health.written, 0);
    assert.equal(health.dropped, 2);
    assert.ok(health.lastError);

    // A log planted as a symbolic link is not written through.
    const other = join(dir, "data2");
    Deno.mkdirSync(join(other, "logs"), { recursive: true, mode: 0o700 });
    const target = join(dir, "target.txt");
    Deno.writeTextFileSync(target, "");
    Deno.symlinkSync(target, join(other, "logs", "stage-markers.log"));
    const linked = createStageMarkers({
      path: join(other, "logs", "stage-markers.log"),
      root: other,
      maxBytes: 1024,
    });
    linked.stageSync("index.write", () => undefined);
    assert.equal(Deno.readTextFileSync(target), "");
    assert.equal(linked.health().dropped, 2);
    assert.match(linked.health().lastError ?? "", /symbolic link/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a step open past the threshold reports one stall however long it stays open", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const time = manualTime();
    const reports: string[] = [];
    const markers = createStageMarkers({
      path,
      now: time.now,
      timers: time.timers,
      stallAfterMs: 120_000,
      onStall: (line) => reports.push(line),
    });
    const op = markers.operation("model");
    let release!: () => void;
    const running = op.stage("model.request", () => new Promise<void>((r) => (release = r)));
    time.tick(119_999);
    assert.deepEqual(reports, []);
    for (let i = 0; i < 10; i++) time.tick(60_000);
    assert.equal(reports.length, 1);
    assert.equal(
      reports[0],
      `warning: stall suspected: step "model.request" of operation "${op.id}" (pid ${Deno.pid}) ` +
        "has been open for 2 min 00 s; nothing is cancelled\n",
    );
    const stalls = linesOf(path).filter((m) => m.event === "stall");
    assert.deepEqual(stalls, [{
      time: "2025-03-01T10:02:00.000Z",
      pid: Deno.pid,
      op: op.id,
      seq: 1,
      step: "model.request",
      event: "stall",
      ms: 120_000,
    }]);
    release();
    await running;
    assert.equal(linesOf(path).at(-1)!.event, "finish");
    assert.equal(linesOf(path).at(-1)!.ms, 719_999);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a step that closes in time clears its stall timer and never reports", async () => {
  const dir = tempDir();
  try {
    const time = manualTime();
    const reports: string[] = [];
    const markers = createStageMarkers({
      path: join(dir, "stage-markers.log"),
      now: time.now,
      timers: time.timers,
      onStall: (line) => reports.push(line),
    });
    const open = markers.begin("snapshot.write");
    assert.equal(time.pending.size, 1);
    time.tick(DEFAULT_STALL_AFTER_MS - 1);
    open.finish();
    assert.equal(time.pending.size, 0);
    await markers.stage("index.write", () => time.tick(1));
    assert.throws(() => markers.begin("a.b").fail("not a code!"), TypeError);
    markers.stageSync("compaction.apply", () => undefined);
    time.tick(10 * DEFAULT_STALL_AFTER_MS);
    assert.equal(time.pending.size, 0);
    assert.equal(reports.length, 1, "only the step left open by the bad fail() reports");
    assert.match(reports[0]!, /step "a\.b"/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("with real timers a 50 ms threshold writes exactly one stall line over many", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const reports: string[] = [];
    const markers = createStageMarkers({
      path,
      stallAfterMs: 50,
      onStall: (line) => reports.push(line),
    });
    // Ten thresholds pass while the step is open; the 50 ms timer is due long before the 500 ms one.
    await markers.stage("fs.diff", () => new Promise((r) => setTimeout(r, 500)));
    assert.equal(reports.length, 1);
    assert.match(reports[0]!, /^warning: stall suspected: step "fs\.diff"/);
    const events = linesOf(path).map((m) => m.event);
    assert.deepEqual(events, ["start", "stall", "finish"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** Runs a script that imports the library, in a child Deno with only `vars` as its env. */
function spawnScript(dir: string, body: string, vars: Record<string, string>): Deno.ChildProcess {
  const script = join(dir, `script-${crypto.randomUUID()}.ts`);
  Deno.writeTextFileSync(script, body);
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-R", "-W", "-E", "--quiet", "--no-config", script],
    env: { ...childBaseEnv(), ...vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Reads the child's stdout up to a line starting with `word`. */
async function waitFor(child: Deno.ChildProcess, word: string): Promise<string> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    while (!text.split("\n").some((l) => l.startsWith(word))) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`Child ended before printing "${word}": ${text}`);
      text += value;
    }
    return text;
  } finally {
    reader.releaseLock();
  }
}

Deno.test("unclosed() lists a step left open by a process killed with -9, and it is dead", async () => {
  const dir = tempDir();
  const child = spawnScript(
    dir,
    `import { operation } from ${JSON.stringify(LIB)};
const op = operation("capture");
const never = op.stage("capture.batch", () => new Promise(() => setInterval(() => {}, 60_000)));
console.log("ready " + op.id);
await never;
`,
    { HOME: dir, LOGBOOK_DATA_DIR: join(dir, "data") },
  );
  try {
    const ready = await waitFor(child, "ready");
    const opId = ready.trim().split(" ")[1];
    const path = join(dir, "data", "logs", "stage-markers.log");
    const later = Date.now() + 5_000;
    const before = await unclosed(path, { now: later });
    assert.equal(before.length, 1);
    assert.equal(before[0]!.alive, true);
    child.kill("SIGKILL");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
    const after = await unclosed(path, { now: later });
    assert.equal(after.length, 1);
    const step = after[0]!;
    assert.equal(step.step, "capture.batch");
    assert.equal(step.op, opId);
    assert.equal(step.pid, child.pid);
    assert.equal(step.alive, false);
    assert.ok(step.openMs >= 4_000 && step.openMs <= later - Date.parse(step.started));
    assert.equal(step.stalled, false);
    assert.equal(modeOf(path), 0o600);
    assert.equal(modeOf(join(dir, "data", "logs")), 0o700);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a stall timer does not keep a finished process alive", async () => {
  const dir = tempDir();
  const path = join(dir, "markers.log");
  const child = spawnScript(
    dir,
    `import { createStageMarkers } from ${JSON.stringify(LIB)};
const markers = createStageMarkers({ path: ${JSON.stringify(path)}, stallAfterMs: 60_000 });
markers.begin("left.open");
console.log("done");
`,
    {},
  );
  // Only a guard against a hung test: a referenced timer would hold the child for 60 s.
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const output = await child.output();
    assert.equal(output.signal, null, "the child exited by itself");
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.equal(new TextDecoder().decode(output.stdout), "done\n");
    const open = await unclosed(path);
    assert.deepEqual(open.map((s) => [s.step, s.pid, s.alive]), [["left.open", child.pid, false]]);
  } finally {
    clearTimeout(guard);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("unclosed() pairs a start kept in .1 with its end in the current log", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const time = manualTime();
    const markers = createStageMarkers({
      path,
      now: time.now,
      timers: time.timers,
      maxBytes: 1024,
      onStall: () => {},
    });
    const left = markers.operation("capture").begin("capture.discover");
    const closed = markers.begin("index.write");
    while (!exists(rotatedPath(path))) markers.stageSync("capture.batch", () => undefined);
    time.tick(121_000);
    closed.finish();
    assert.match(Deno.readTextFileSync(rotatedPath(path)), /"step":"index.write","event":"start"/);
    assert.match(Deno.readTextFileSync(path), /"step":"index.write","event":"finish"/);

    const open = await unclosed(path, { now: T0 + 200_000 });
    assert.equal(open.length, 1);
    assert.deepEqual(open[0], {
      op: open[0]!.op,
      seq: left.seq,
      step: "capture.discover",
      pid: Deno.pid,
      started: "2025-03-01T10:00:00.000Z",
      openMs: 200_000,
      alive: true,
      stalled: true,
      stallReported: true,
    });
    assert.equal((await unclosed(path, { now: T0 + 60_000 }))[0]!.stalled, false);
    assert.equal(
      (await unclosed(path, { now: T0 + 200_000, isAlive: () => false }))[0]!.alive,
      false,
    );
    assert.deepEqual(await unclosed(join(dir, "missing.log")), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an operation holds a lock while it has open steps, and stale locks are swept", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "logs", "stage-markers.log");
    const live = liveDirOf(path);
    assert.equal(live, join(dir, "logs", "stage-markers.live"));
    // A lock left by a killed process long ago, and one that a process is creating right now.
    Deno.mkdirSync(live, { recursive: true });
    const stale = join(live, "capture-00000000.lock");
    const fresh = join(live, "capture-11111111.lock");
    Deno.writeTextFileSync(stale, "");
    Deno.writeTextFileSync(fresh, "");
    Deno.utimeSync(stale, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));

    const markers = createStageMarkers({ path, root: dir, timers: manualTime().timers });
    const op = markers.operation("capture");
    const first = op.begin("capture.discover");
    const second = op.begin("capture.batch");
    const lock = join(live, `${op.id.replace(":", "-")}.lock`);
    assert.deepEqual(
      [...Deno.readDirSync(live)].map((e) => e.name).sort(),
      [
        "capture-11111111.lock",
        `${op.id.replace(":", "-")}.lock`,
      ].sort(),
    );
    assert.equal(modeOf(live), 0o700);
    assert.equal(modeOf(lock), 0o600);
    const alive = (await unclosed(path)).map((s) => [s.step, s.alive]);
    assert.deepEqual(alive, [["capture.discover", true], ["capture.batch", true]]);

    first.finish();
    assert.ok(exists(lock), "still held while a step is open");
    second.fail(new Error("boom"));
    assert.equal(exists(lock), false, "released with the last open step");
    assert.deepEqual(await unclosed(path), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("readMarkers() returns the last N across .1 and the log, skipping what is not a marker", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    const line = (seq: number) =>
      JSON.stringify({
        time: new Date(T0 + seq * 1000).toISOString(),
        pid: 4242,
        op: "capture:0123abcd",
        seq,
        step: "capture.batch",
        event: "start",
      }) + "\n";
    Deno.writeTextFileSync(rotatedPath(path), [1, 2, 3, 4, 5].map(line).join(""));
    Deno.writeTextFileSync(
      path,
      line(6) + "not json\n" + '{"hello":"world"}\n' + "x".repeat(40_000) + "\n" + line(7) +
        line(8) + line(9).slice(0, 30),
    );
    const seqs = async (tail?: number) =>
      (await readMarkers(path, tail === undefined ? {} : { tail })).map((m) => m.seq);
    assert.deepEqual(await seqs(), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(await seqs(5), [4, 5, 6, 7, 8]);
    assert.deepEqual(await seqs(2), [7, 8]);
    assert.deepEqual(await seqs(100), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(await seqs(0), []);
    await assert.rejects(readMarkers(path, { tail: -1 }), RangeError);
    assert.deepEqual(await readMarkers(join(dir, "nothing-here.log")), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the process-wide stage() and operation() write through configureStageMarkers", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "stage-markers.log");
    configureStageMarkers(createStageMarkers({ path }));
    await stage("dashboard.request", () => undefined);
    const op = operation("compaction");
    await op.stage("compaction.snapshot", () => undefined);
    assert.deepEqual(linesOf(path).map((m) => [m.step, m.event]), [
      ["dashboard.request", "start"],
      ["dashboard.request", "finish"],
      ["compaction.snapshot", "start"],
      ["compaction.snapshot", "finish"],
    ]);
    assert.equal(linesOf(path)[2]!.op, op.id);
  } finally {
    configureStageMarkers(createStageMarkers({ enabled: false }));
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the process-wide writer reads Deno.env on first use in a fresh process", async () => {
  const dir = tempDir();
  const moved = join(dir, "moved", "markers.log");
  const script = `import { stage, stageMarkers } from ${JSON.stringify(LIB)};
await stage("first.step", () => undefined);
console.log(JSON.stringify(stageMarkers().health()));
`;
  try {
    for (
      const [vars, expectWritten] of [
        [{ HOME: dir, LOGBOOK_DATA_DIR: join(dir, "data"), LOGBOOK_STAGE_MARKERS_PATH: moved }, 2],
        [{ HOME: dir, LOGBOOK_DATA_DIR: join(dir, "off"), LOGBOOK_STAGE_MARKERS: "0" }, 0],
      ] as const
    ) {
      const output = await spawnScript(dir, script, vars).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      const health = JSON.parse(new TextDecoder().decode(output.stdout));
      assert.equal(health.written, expectWritten);
    }
    assert.equal(linesOf(moved).length, 2);
    assert.equal(exists(join(dir, "data")), false);
    assert.equal(exists(join(dir, "off")), false);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a writer given no stall sink logs the stall and writes nothing to stderr", async () => {
  const dir = tempDir();
  const path = join(dir, "markers.log");
  const child = spawnScript(
    dir,
    `import { createStageMarkers } from ${JSON.stringify(LIB)};
const markers = createStageMarkers({ path: ${JSON.stringify(path)}, stallAfterMs: 10 });
const open = markers.begin("slow.step");
while (!Deno.readTextFileSync(${JSON.stringify(path)}).includes('"event":"stall"')) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
open.finish();
console.log("done");
`,
    {},
  );
  // Only a guard against a hung test, should the stall never be logged.
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const output = await child.output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.equal(new TextDecoder().decode(output.stdout), "done\n");
    assert.equal(new TextDecoder().decode(output.stderr), "", "the library printed the stall");
    assert.deepEqual(linesOf(path).map((m) => m.event), ["start", "stall", "finish"]);
  } finally {
    clearTimeout(guard);
    Deno.removeSync(dir, { recursive: true });
  }
});
