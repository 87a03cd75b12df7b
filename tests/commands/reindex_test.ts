// `reindex` as cron and users run it: crash safety under kill -9, the lock between concurrent
// runs, a stale lock, the time limit, the capture switch, --status and --quiet.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { main as reindex } from "../../commands/reindex.ts";
import { main as search } from "../../commands/search.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { runCapture } from "../../lib/capture/run.ts";
import {
  captureIo,
  childBaseEnv,
  makeWorld,
  ROOT,
  runCli,
  taskFlags,
  type World,
} from "../_helpers.ts";
import { writeClaudeCorpus } from "../_corpus.ts";
import { eventually } from "../_wait.ts";

/** How `deno task reindex` runs it. */
const REINDEX_FLAGS = await taskFlags("reindex");

/** A digest of everything capture stored, independent of row ids and of where the world lives. */
function storeDigest(
  world: World,
): { records: string; index: string; conversations: string; count: number } {
  const db = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
  try {
    const records = createHash("sha256");
    let count = 0;
    const rows = db.prepare(`
      SELECT s.locator, r.generation, r.offset, r.seq, r.raw, r.kind, r.role, r.ts, r.flags,
             r.message_id, c.key
      FROM records r JOIN sources s ON s.id = r.source_id LEFT JOIN conversations c ON c.id = r.conversation_id
      ORDER BY s.locator, r.generation, r.offset`).iterate() as Iterable<Record<string, unknown>>;
    for (const row of rows) {
      count++;
      records.update(relative(world.dir, String(row.locator)));
      for (
        const key of [
          "generation",
          "offset",
          "seq",
          "kind",
          "role",
          "ts",
          "flags",
          "message_id",
          "key",
        ]
      ) {
        records.update(`|${row[key]}`);
      }
      records.update(row.raw as Uint8Array);
    }
    const index = createHash("sha256");
    for (const term of ["marker3", "cursor", "deploy AND retry", "marker150"]) {
      const hits = db.prepare(`
        SELECT s.locator, r.offset FROM fts JOIN records r ON r.id = fts.rowid
        JOIN sources s ON s.id = r.source_id WHERE fts MATCH ? ORDER BY s.locator, r.offset`).all(
        term,
      );
      for (const hit of hits) {
        index.update(`${relative(world.dir, String(hit.locator))}:${hit.offset};`);
      }
      index.update("\n");
    }
    const conversations = createHash("sha256");
    for (
      const row of db.prepare(
        "SELECT key, title, message_count, record_count, bytes, first_ts, last_ts, project_root FROM conversations ORDER BY key",
      ).all()
    ) {
      conversations.update(JSON.stringify(row));
    }
    return {
      records: records.digest("hex"),
      index: index.digest("hex"),
      conversations: conversations.digest("hex"),
      count,
    };
  } finally {
    db.close();
  }
}

async function reindexOk(world: World, args: string[] = []) {
  const io = captureIo();
  const code = await reindex(args, io, world.env);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

function spawnReindex(world: World, args: string[] = []): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...REINDEX_FLAGS,
      "--quiet",
      join(ROOT, "commands", "reindex.ts"),
      ...args,
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** The pid of the capture once it has taken its lock. */
function waitForLockHolder(world: World): Promise<number> {
  const path = join(world.data, "run", "capture.lock");
  return eventually("the capture to take its lock", () => {
    try {
      const info = JSON.parse(Deno.readTextFileSync(path));
      return typeof info.pid === "number" ? info.pid as number : undefined;
    } catch {
      return undefined; // not yet
    }
  });
}

/**
 * Waits until the capture has committed its first batch, as its stored progress says (what
 * `status` shows of a running capture), and returns that progress.
 */
function waitForFirstBatch(world: World): Promise<{ bytesDone: number; bytesTotal: number }> {
  const path = join(world.data, "history.db");
  return eventually("the capture's first batch", () => {
    try {
      const db = new DatabaseSync(path, { readOnly: true, timeout: 1000 });
      try {
        const row = db.prepare("SELECT value FROM meta WHERE key = 'progress'").get();
        const progress = row ? JSON.parse(String(row.value)) : null;
        return progress?.phase === "capturing" && progress.bytesDone > 0 ? progress : undefined;
      } finally {
        db.close();
      }
    } catch {
      return undefined; // no store, or no meta table, yet
    }
  }, { every: 5 });
}

Deno.test("reindex killed with -9 mid-way, then rerun, equals an uninterrupted capture", async () => {
  const killed = await makeWorld();
  const clean = await makeWorld();
  try {
    for (const world of [killed, clean]) {
      writeClaudeCorpus(world.claude, { sessions: 220, lines: 160 });
    }
    const cleanRun = await reindexOk(clean, ["--json"]);
    assert.equal(cleanRun.code, 0, cleanRun.stderr);
    // 21 MB of new transcripts: batches are written by a worker, two at a time in flight.
    assert.equal(JSON.parse(cleanRun.stdout).writer, "worker");
    const expected = storeDigest(clean);

    const child = spawnReindex(killed, ["--quiet"]);
    // In the middle of the capture: a batch committed, the next ones on their way.
    const progress = await waitForFirstBatch(killed);
    child.kill("SIGKILL");
    assert.ok(progress.bytesDone < progress.bytesTotal, "the first batch was not the last");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL", "the capture was still running when killed");
    const partial = storeDigest(killed);
    assert.ok(
      partial.count < expected.count,
      `killed mid-way (${partial.count} of ${expected.count})`,
    );

    const rerun = await reindexOk(killed, ["--quiet"]);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual(storeDigest(killed), expected);
  } finally {
    await killed.cleanup();
    await clean.cleanup();
  }
});

Deno.test("a second concurrent reindex exits 0 at once naming the running pid", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 300, lines: 160 });
    const child = spawnReindex(world, ["--json"]);
    const pid = await waitForLockHolder(world);
    // The first capture stands still while the second runs, so the second can only end by not
    // waiting for it. Should it wait, the first goes on after a minute and the second's output
    // below says so, rather than the test hanging.
    child.kill("SIGSTOP");
    const guard = setTimeout(() => child.kill("SIGCONT"), 60_000);
    let second;
    try {
      second = await runCli("reindex", [], world.vars);
    } finally {
      clearTimeout(guard);
      child.kill("SIGCONT");
    }
    const first = await child.output();
    assert.equal(first.code, 0, new TextDecoder().decode(first.stderr));
    // With the task's own permissions, the worker that writes batches starts.
    assert.equal(JSON.parse(new TextDecoder().decode(first.stdout)).writer, "worker");
    assert.equal(second.code, 0);
    assert.match(second.stdout, new RegExp(`Another capture is running \\(pid ${pid}\\)`));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a lock file left by a dead process is taken over", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 3, lines: 10 });
    const dead = new Deno.Command("true").spawn();
    const deadPid = dead.pid;
    await dead.status;
    await Deno.mkdir(join(world.data, "run"), { recursive: true, mode: 0o700 });
    Deno.writeTextFileSync(
      join(world.data, "run", "capture.lock"),
      JSON.stringify({ pid: deadPid, startedAt: 0, command: "reindex" }),
      { mode: 0o600 },
    );
    const result = await reindexOk(world);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Captured 30 new records/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("--max-seconds stops at a batch boundary with cursors consistent", async () => {
  const limited = await makeWorld();
  const clean = await makeWorld();
  try {
    for (const world of [limited, clean]) {
      writeClaudeCorpus(world.claude, { sessions: 40, lines: 100 });
    }
    await reindexOk(clean, ["--quiet"]);
    // A clock that stands still for the first calls, then leaps past any deadline.
    let calls = 0;
    const now = () => (++calls < 40 ? 1_000_000 : 9_000_000);
    const ctx = loadContext({ env: limited.env, now });
    const store = openStore(ctx);
    try {
      const result = await runCapture({ ctx, store, redact: redactorFor(ctx), maxSeconds: 5 });
      assert.equal(result.status, "captured");
      if (result.status === "captured") {
        assert.equal(result.summary.stoppedBy, "deadline");
        assert.equal(result.summary.complete, false);
        assert.ok(result.summary.records > 0);
      }
    } finally {
      store.close();
    }
    const rest = await reindexOk(limited, []);
    assert.equal(rest.code, 0);
    assert.deepEqual(storeDigest(limited), storeDigest(clean));
  } finally {
    await limited.cleanup();
    await clean.cleanup();
  }
});

Deno.test("LOGBOOK_INGEST=0 captures nothing and says so; search still works", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 2, lines: 4 });
    assert.equal((await reindexOk(world, ["--quiet"])).code, 0);
    writeClaudeCorpus(world.claude, { sessions: 4, lines: 4, seed: 99 });
    const off = await runCli("reindex", [], { ...world.vars, LOGBOOK_INGEST: "0" });
    assert.equal(off.code, 0);
    assert.match(off.stdout, /Capture is switched off \(LOGBOOK_INGEST=0\)/);
    const io = captureIo();
    assert.equal(await search(["marker1", "--json"], io, world.env), 0);
    assert.equal(io.stdout().trim().split("\n").length, 1);
    const json = await runCli("reindex", ["--json"], { ...world.vars, LOGBOOK_INGEST: "false" });
    assert.deepEqual(JSON.parse(json.stdout), { status: "off", reason: "LOGBOOK_INGEST=false" });
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --quiet prints nothing when all is well, and --status reports the store", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 5, lines: 6 });
    const quiet = await runCli("reindex", ["--quiet"], world.vars);
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [0, "", ""]);
    const status = await runCli("reindex", ["--status", "--json"], world.vars);
    assert.equal(status.code, 0, status.stderr);
    const parsed = JSON.parse(status.stdout);
    assert.equal(parsed.phase, "idle");
    assert.equal(parsed.capture, "on");
    assert.equal(parsed.records, 30);
    assert.equal(parsed.sources, 5);
    assert.equal(parsed.captured.ratio, 1);
    assert.deepEqual(parsed.conversations, [{ agent: "claude", count: 5, subagents: 0, gone: 0 }]);
    assert.equal(parsed.lastRun.ok, true);
    const human = await runCli("reindex", ["--status"], world.vars);
    assert.match(human.stdout, /^phase: idle$/m);
    assert.match(human.stdout, /; the files still there hold \S+ \S+, all of it captured$/m);
    assert.match(human.stdout, /^conversations: 5 \(claude 5\)$/m, "no subagents to name");
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex names the agent, version and count of format drift on stderr and exits 0", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const result = await runCli("reindex", [], world.vars);
    assert.equal(result.code, 0);
    assert.match(
      result.stderr,
      /^warning: claude 2\.9\.99: 3 lines of unknown type "hologram-sync" kept raw, not indexed$/m,
    );
    assert.match(
      result.stderr,
      /^warning: ".*6196747f-[^"]*\.jsonl" yielded no conversation from a non-empty file$/m,
    );
    const quiet = await runCli("reindex", ["--quiet"], world.vars);
    assert.equal(quiet.stdout, "", "nothing new: quiet");
    assert.equal(quiet.stderr, "", "drift is reported when it is captured, not on every run");
    // status names it from what capture kept, after a run that wrote nothing
    const status = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.equal(
      status.store.empty.filter((path: string) => /6196747f-[^/]*\.jsonl$/.test(path)).length,
      1,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a capture leaves stage markers for discovery, batches and index writes, and no content", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const log = Deno.readTextFileSync(join(world.data, "logs", "stage-markers.log"));
    const markers = log.trim().split("\n").map((l) => JSON.parse(l));
    const steps = new Set(markers.map((m) => `${m.step}:${m.event}`));
    for (const step of ["capture.discover", "capture.batch", "index.write"]) {
      assert.ok(steps.has(`${step}:start`) && steps.has(`${step}:finish`), step);
    }
    assert.equal(Deno.statSync(join(world.data, "logs", "stage-markers.log")).mode! & 0o777, 0o600);
    for (const phrase of ["marmot", "quokka-lantern", "/home/dev/src", "zebra"]) {
      assert.ok(!log.includes(phrase), `no "${phrase}" in the marker log`);
    }
    const off = await makeWorld({ fixtures: ["claude"] });
    try {
      assert.equal(
        (await runCli("reindex", ["--quiet"], { ...off.vars, LOGBOOK_STAGE_MARKERS: "0" })).code,
        0,
      );
      assert.equal(await Deno.stat(join(off.data, "logs")).catch(() => null), null);
    } finally {
      await off.cleanup();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --status says rebuilding while a rebuild runs, with no percentage", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 5, lines: 20 });
    assert.equal((await reindexOk(world, ["--quiet"])).code, 0);
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    const seen: string[] = [];
    try {
      const result = await runCapture({
        ctx,
        store,
        redact: redactorFor(ctx),
        rebuild: true,
        onProgress: (progress) => {
          // The announcement, before the rebuild counts its work (then it reports as it goes).
          if (progress.phase !== "rebuilding" || progress.bytesTotal > 0) return;
          // What another process sees from here until the rebuild commits (its one
          // transaction shows them nothing before): a synchronous child, so the rebuild waits.
          const child = new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              ...REINDEX_FLAGS,
              "--quiet",
              join(ROOT, "commands", "reindex.ts"),
              "--status",
            ],
            env: { ...childBaseEnv(), ...world.vars },
            clearEnv: true,
            stdin: "null",
          }).outputSync();
          seen.push(new TextDecoder().decode(child.stdout));
        },
      });
      assert.equal(result.status, "captured");
    } finally {
      store.close();
    }
    assert.equal(seen.length, 1, "the rebuild announced itself once");
    assert.match(seen[0]!, /^phase: rebuilding \(pid \d+, deriving the index and conversations/m);
    assert.doesNotMatch(seen[0]!, /^phase: .*%/m);
    const after = await runCli("reindex", ["--status"], world.vars);
    assert.match(after.stdout, /^phase: idle$/m);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --rebuild on a terminal draws the share and time left as capture does", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 5, lines: 20 });
    assert.equal((await reindexOk(world, ["--quiet"])).code, 0);
    // A terminal on stderr is what turns the bar on; the Io says so.
    const io = { ...captureIo(), errIsTerminal: true };
    assert.equal(await reindex(["--rebuild"], io, world.env), 0, io.stderr());
    assert.match(io.stderr(), /\rRebuilding the index and conversations from the raw records…/);
    assert.match(
      io.stderr(),
      /\rRebuilding \[[#.]{24}\] \d+% \d\/5 sources \S+ \S+\/\S+ \S+ .* left/,
    );
    assert.ok(io.stderr().endsWith("\r\x1b[K"), "the bar is cleared before the summary");
    assert.match(io.stdout(), /^Rebuilt the index and conversations from \d+ raw records$/m);
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --rebuild in a log writes its progress: rising, ending at the total, time left from the rate", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 40, lines: 30 });
    assert.equal((await reindexOk(world, ["--quiet"])).code, 0);
    // Every report is written (the interval is 0), so a small store reports many times.
    const run = await runCli("reindex", ["--rebuild"], { ...world.vars, LOGBOOK_PROGRESS_MS: "0" });
    assert.equal(run.code, 0, run.stderr);
    const pattern =
      /^Rebuilding: (\d+)% \((\S+ \S+) of (\S+ \S+), (\d+) of (\d+) sources\), (?:estimating the time left|(\S+ \S+)\/s, (\S+(?: min \S+)? \S+) left|derived again; writing it to the store)$/;
    const [starting, ...counted] = run.stderr.trimEnd().split("\n");
    assert.equal(
      starting,
      "Rebuilding: clearing what was derived, then counting what to derive again",
    );
    const lines = counted.map((line) => {
      const m = line.match(pattern);
      assert.ok(m, `a progress line: ${JSON.stringify(line)}`);
      return {
        line,
        percent: Number(m[1]),
        done: bytesOf(m[2]!),
        total: bytesOf(m[3]!),
        sources: Number(m[4]),
        rate: m[6] === undefined ? null : bytesOf(m[6]),
        left: m[7] === undefined ? null : msOf(m[7]),
      };
    });
    assert.ok(lines.length > 2, `reported more than twice: ${run.stderr}`);
    assert.match(lines[0]!.line, /estimating the time left$/, "no rate before one was measured");
    for (let i = 1; i < lines.length; i++) {
      const [before, now] = [lines[i - 1]!, lines[i]!];
      assert.ok(now.percent >= before.percent && now.done >= before.done, now.line);
      assert.ok(now.sources >= before.sources, now.line);
      assert.equal(now.total, before.total);
    }
    const last = lines.at(-1)!;
    assert.match(
      last.line,
      /^Rebuilding: 100% \((\S+ \S+) of \1, 40 of 40 sources\), derived again; writing it to the store$/,
    );
    const timed = lines.filter((l) => l.rate !== null && l.percent <= 75);
    assert.ok(timed.length > 0, `a time left was given: ${run.stderr}`);
    for (const l of timed) {
      // What is left at the rate shown, within the rounding of the figures printed.
      const expected = ((l.total - l.done) / l.rate!) * 1000;
      assert.ok(
        l.left! >= expected * 0.7 - 2 && l.left! <= expected * 1.3 + 2,
        `${l.line}: about ${Math.round(expected)} ms expected`,
      );
    }
    assert.match(run.stdout, /^Rebuilt the index and conversations from \d+ raw records$/m);
    // Nothing of it with --quiet or --json.
    for (const flag of ["--quiet", "--json"]) {
      const quiet = await runCli("reindex", ["--rebuild", flag], {
        ...world.vars,
        LOGBOOK_PROGRESS_MS: "0",
      });
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.equal(quiet.stderr, "", flag);
    }
  } finally {
    await world.cleanup();
  }
});

/** `1.2 MB` as bytes (as `formatBytes` rounds them). */
function bytesOf(text: string): number {
  const [value, unit] = text.split(" ");
  const scale = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[unit!];
  assert.ok(scale !== undefined, text);
  return Number(value) * scale;
}

/** `850 ms`, `12.3 s` or `4 min 05 s` as milliseconds (as `formatDuration` writes them). */
function msOf(text: string): number {
  const minutes = text.match(/^(\d+) min (\d+) s$/);
  if (minutes) return (Number(minutes[1]) * 60 + Number(minutes[2])) * 1000;
  const [value, unit] = text.split(" ");
  return Number(value) * (unit === "s" ? 1000 : 1);
}

/** Runs reindex with `args` in a child, sends it SIGINT once it holds the capture lock. */
async function interrupted(world: World, args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...REINDEX_FLAGS,
      "--quiet",
      join(ROOT, "commands", "reindex.ts"),
      ...args,
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // The lock is taken after the signal handlers are in place, and long before the work is done.
  await waitForLockHolder(world);
  child.kill("SIGINT");
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("Ctrl-C stops reindex and reindex --rebuild, which say to run again to finish", async (t) => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 220, lines: 160 });
    await t.step("a capture stops at a batch boundary; running again finishes it", async () => {
      const stopped = await interrupted(world, []);
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, /; stopped; run again to finish$/m);
      const again = await reindexOk(world, ["--json"]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(JSON.parse(again.stdout).complete, true);
    });
    await t.step("a rebuild rolls back whole and latches nothing", async () => {
      const before = storeDigest(world);
      const stopped = await interrupted(world, ["--rebuild"]);
      assert.equal(stopped.code, 0, stopped.stderr);
      // Its progress lines (stderr is not a terminal) come before it stopped.
      assert.equal(
        stopped.stderr.replace(/^Rebuilding: .*\n/gm, ""),
        "Rebuild stopped; run again to finish (the index and conversations are as they were)\n",
      );
      assert.deepEqual(storeDigest(world), before);
      const again = await reindexOk(world, ["--rebuild"]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(storeDigest(world), before);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("reindex --rebuild writes many small sources in a few batches, not one each", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 40, lines: 30 });
    assert.equal((await reindexOk(world, ["--quiet"])).code, 0);
    const log = join(world.data, "logs", "stage-markers.log");
    const before = Deno.readTextFileSync(log).length;
    const run = await runCli("reindex", ["--rebuild", "--quiet"], world.vars);
    assert.equal(run.code, 0, run.stderr);
    const markers = Deno.readTextFileSync(log).slice(before).trimEnd().split("\n")
      .map((line) => JSON.parse(line) as { step: string; event: string });
    const started = (step: string) =>
      markers.filter((m) => m.step === step && m.event === "start").length;
    assert.equal(started("capture.rebuild"), 1);
    // 40 sessions of 30 lines fit in one batch; the rebuild wrote one per source (40) before.
    assert.ok(started("capture.batch") <= 2, `${started("capture.batch")} batches written`);
  } finally {
    await world.cleanup();
  }
});
