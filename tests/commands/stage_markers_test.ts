// `stage-markers` as a user runs it (a real subprocess): the last markers, `--tail`, `--json`,
// `--unclosed` with a step left open by a killed process, and the paths and switches it honours.

import assert from "node:assert/strict";
import { join } from "node:path";
import { createStageMarkers, type StallTimers } from "../../lib/stage_markers.ts";
import { readMarkers } from "../../lib/stage_markers_read.ts";
import { childBaseEnv, makeWorld, runCli, type World } from "../_helpers.ts";

const T0 = Date.parse("2025-03-01T10:00:00.000Z");
const LIB = new URL("../../lib/stage_markers.ts", import.meta.url).href;
/** Stall timers that never fire: these tests write logs, they do not wait for stalls. */
const NO_TIMERS: StallTimers = { set: () => 0, clear: () => {} };

function logOf(world: World): string {
  return join(world.data, "logs", "stage-markers.log");
}

/** Writes `count` finished steps `batch.1` … into the world's log, one second apart. */
function writeSteps(path: string, root: string, count: number): void {
  let now = T0;
  const markers = createStageMarkers({ path, root, now: () => now, timers: NO_TIMERS });
  for (let i = 1; i <= count; i++) {
    markers.stageSync(`batch.${i}`, () => (now += 250));
    now += 750;
  }
}

Deno.test("stage-markers with no log shows nothing and exits 0", async () => {
  const world = await makeWorld();
  try {
    const plain = await runCli("stage_markers", [], world.vars);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout, "");
    assert.equal(plain.stderr, `No stage markers in "${logOf(world)}"\n`);
    const open = await runCli("stage_markers", ["--unclosed"], world.vars);
    assert.equal(open.code, 0);
    assert.equal(open.stdout, "");
    assert.equal(open.stderr, "No unclosed steps\n");
    const json = await runCli("stage_markers", ["--json"], world.vars);
    assert.deepEqual([json.code, json.stdout], [0, ""]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("stage-markers shows the last 20 markers, --tail N the last N, --json objects", async () => {
  const world = await makeWorld();
  try {
    writeSteps(logOf(world), world.data, 15);
    const plain = await runCli("stage_markers", [], world.vars);
    assert.equal(plain.code, 0, plain.stderr);
    const lines = plain.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 20);
    // 30 markers (a start and a finish per step): the last 20 begin with batch.6's start.
    assert.match(
      lines[0]!,
      new RegExp(
        `^2025-03-01 10:00:05\\.000Z {2}pid ${Deno.pid} +process:[0-9a-f]{8} {2}batch\\.6 {2}start$`,
      ),
    );
    assert.match(
      lines[19]!,
      /^2025-03-01 10:00:14\.250Z {2}pid \d+ +process:[0-9a-f]{8} {2}batch\.15 {2}finish {2}250 ms$/,
    );

    const tail = await runCli("stage_markers", ["--tail", "5"], world.vars);
    assert.equal(tail.code, 0);
    const tailLines = tail.stdout.trimEnd().split("\n");
    assert.equal(tailLines.length, 5);
    assert.match(tailLines[0]!, /batch\.13 {2}finish/);

    const json = await runCli("stage_markers", ["--json", "--tail", "3"], world.vars);
    assert.equal(json.code, 0);
    const objects = json.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(objects, await readMarkers(logOf(world), { tail: 3 }));
    assert.deepEqual(objects.map((m) => [m.step, m.event]), [
      ["batch.14", "finish"],
      ["batch.15", "start"],
      ["batch.15", "finish"],
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("stage-markers --unclosed lists a step left open by a process killed with -9 as dead", async () => {
  const world = await makeWorld();
  const script = join(world.dir, "hold.ts");
  Deno.writeTextFileSync(
    script,
    `import { operation } from ${JSON.stringify(LIB)};
const op = operation("capture");
const never = op.stage("capture.batch", () => new Promise(() => setInterval(() => {}, 60_000)));
console.log("ready");
await never;
`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-R", "-W", "-E", "--quiet", "--no-config", script],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`The child ended before it was ready: ${text}`);
      text += value;
    }
    reader.releaseLock();

    const alive = await runCli("stage_markers", ["--unclosed", "--json"], world.vars);
    assert.equal(JSON.parse(alive.stdout).alive, true);

    child.kill("SIGKILL");
    assert.equal((await child.status).signal, "SIGKILL");

    const json = await runCli("stage_markers", ["--unclosed", "--json"], world.vars);
    assert.equal(json.code, 0, json.stderr);
    const lines = json.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 1);
    const step = JSON.parse(lines[0]!);
    assert.equal(step.step, "capture.batch");
    assert.equal(step.pid, child.pid);
    assert.equal(step.alive, false);
    assert.match(step.op, /^capture:[0-9a-f]{8}$/);
    assert.equal(typeof step.openMs, "number");

    const plain = await runCli("stage_markers", ["--unclosed"], world.vars);
    assert.equal(plain.code, 0);
    assert.match(
      plain.stdout,
      new RegExp(
        `^capture\\.batch {2}op capture:[0-9a-f]{8} {2}pid ${child.pid} dead {2}open [^\\n]+ \\(since [^)]+\\)\\n$`,
      ),
    );
    assert.doesNotMatch(plain.stdout, /stall suspected/);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already killed.
    }
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await world.cleanup();
  }
});

Deno.test("stage-markers --unclosed flags a live step open past 120 s as a suspected stall", async () => {
  const world = await makeWorld();
  try {
    const path = logOf(world);
    const tenMinutesAgo = Date.now() - 10 * 60_000;
    const old = createStageMarkers({
      path,
      root: world.data,
      now: () => tenMinutesAgo,
      timers: NO_TIMERS,
    });
    old.operation("model").begin("model.request");
    const fresh = createStageMarkers({ path, root: world.data, timers: NO_TIMERS });
    fresh.operation("snapshot").begin("snapshot.write");
    fresh.begin("done.step").finish();

    const plain = await runCli("stage_markers", ["--unclosed"], world.vars);
    assert.equal(plain.code, 0, plain.stderr);
    const [first, second, extra] = plain.stdout.trimEnd().split("\n");
    assert.equal(extra, undefined);
    assert.match(
      first!,
      new RegExp(
        `^model\\.request {2}op model:\\S+ {2}pid ${Deno.pid} alive {2}open 10 min \\d\\d s .* {2}stall suspected$`,
      ),
    );
    assert.match(second!, /^snapshot\.write {2}op snapshot:\S+ {2}pid \d+ alive {2}open [^,]+\)$/);

    const json = await runCli("stage_markers", ["--unclosed", "--json", "--tail", "1"], world.vars);
    const objects = json.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(objects.map((o) => [o.step, o.alive, o.stalled]), [
      ["snapshot.write", true, false],
    ]);
    const both = await runCli("stage_markers", ["--unclosed", "--json"], world.vars);
    assert.equal(JSON.parse(both.stdout.split("\n")[0]!).stalled, true);
  } finally {
    await world.cleanup();
  }
});

Deno.test("stage-markers reads LOGBOOK_STAGE_MARKERS_PATH and says when markers are off", async () => {
  const world = await makeWorld();
  try {
    const moved = join(world.dir, "volume", "markers.log");
    writeSteps(moved, join(world.dir, "volume"), 2);
    const vars = { ...world.vars, LOGBOOK_STAGE_MARKERS_PATH: moved };
    const result = await runCli("stage_markers", ["--json"], vars);
    assert.equal(result.code, 0);
    assert.equal(result.stdout.trimEnd().split("\n").length, 4);
    const unmoved = await runCli("stage_markers", ["--json"], world.vars);
    assert.equal(unmoved.stdout, "");

    const off = await runCli("stage_markers", [], { ...vars, LOGBOOK_STAGE_MARKERS: "0" });
    assert.equal(off.code, 0);
    assert.match(off.stderr, /^note: stage markers are off \(LOGBOOK_STAGE_MARKERS=0\)/);
    assert.equal(off.stdout.trimEnd().split("\n").length, 4, "what was recorded is still shown");
  } finally {
    await world.cleanup();
  }
});

Deno.test("stage-markers refuses a bad --tail and extra arguments with exit 2", async () => {
  const world = await makeWorld();
  try {
    for (const args of [["--tail", "0"], ["--tail", "ten"], ["extra"]]) {
      const result = await runCli("stage_markers", args, world.vars);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, /^error: /);
      assert.match(result.stderr, /--help/);
    }
  } finally {
    await world.cleanup();
  }
});
