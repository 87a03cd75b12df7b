// What a bench does with a signal that comes while in-process work holds the event loop
// (bench/_stop.ts): the listener runs only when the loop turns, so the run heeds it before its
// report instead of ending as if nothing came.

import assert from "node:assert/strict";
import { join } from "node:path";
import { removeDir, ROOT, tempDir } from "../_helpers.ts";
import { logUntil } from "./_bench_json.ts";

/**
 * A script that listens as the bench does, says "busy", then holds the event loop (as a capture
 * or a search in-process does) until `release` exists, and ends the way `main` does.
 */
function script(release: string): string {
  const stop = join(ROOT, "bench", "_stop.ts");
  return `
import { heedSignals, stopOnSignals } from ${JSON.stringify(`file://${stop}`)};
const stopListening = stopOnSignals((message) => console.error(message));
console.error("busy");
for (;;) {
  try {
    Deno.statSync(${JSON.stringify(release)});
    break;
  } catch {
    // Not yet: the work goes on without waiting on anything.
  }
}
await heedSignals();
stopListening();
console.error("report");
`;
}

/**
 * Waits until the process `pid` has taken signal `signo` (no longer pending for it, as
 * /proc/<pid>/status says), so that its handler has run before the work is let go.
 */
async function delivered(pid: number, signo: number): Promise<void> {
  const bit = 1n << BigInt(signo - 1);
  for (;;) {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const pending = /^ShdPnd:\s*([0-9a-f]+)/m.exec(status)![1]!;
    if ((BigInt(`0x${pending}`) & bit) === 0n) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function runHeld(): Promise<{ code: number; stderr: string }> {
  const dir = await tempDir("logbook-bench-signal-");
  try {
    const release = join(dir, "release");
    const path = join(dir, "held.ts");
    await Deno.writeTextFile(path, script(release));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", path],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const log = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let text = await logUntil(log, /busy/);
    child.kill("SIGINT");
    await delivered(child.pid, 2);
    await Deno.writeTextFile(release, "");
    for (;;) {
      const { value, done } = await log.read();
      if (done) break;
      text += value;
    }
    return { code: (await child.status).code, stderr: text };
  } finally {
    await removeDir(dir);
  }
}

// Without heedSignals the same script ends with its report and exit 0, or is killed by the signal
// once its listener is gone: never with the listener's "stopped".
Deno.test("heedSignals() stops a run whose signal came while in-process work held the event loop", async () => {
  const { code, stderr } = await runHeld();
  assert.equal(code, 130, stderr);
  assert.match(stderr, /stopped \(SIGINT\): cleaning up/);
  assert.doesNotMatch(stderr, /report/);
});
