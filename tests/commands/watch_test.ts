// `reindex --watch` as a user leaves it running: new lines and new files are captured within
// seconds, SIGTERM stops it cleanly, and a later reindex captures nothing twice.

import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { main as search } from "../../commands/search.ts";
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

async function hits(world: World, query: string): Promise<number> {
  const io = captureIo();
  const code = await search([query, "--json"], io, world.env);
  return code === 0 ? io.stdout().trim().split("\n").length : 0;
}

/** A failure with what the watcher printed, so a timeout says why. */
async function withWatcherOutput(err: unknown, child: Deno.ChildProcess): Promise<unknown> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already exited
  }
  const out = await child.output().catch(() => null);
  if (!out || !(err instanceof Error)) return err;
  const decoder = new TextDecoder();
  err.message += `\nwatcher exit ${out.code}; stderr:\n${decoder.decode(out.stderr).slice(-2000)}`;
  return err;
}

function line(sessionId: string, text: string): string {
  return JSON.stringify({
    type: "user",
    sessionId,
    cwd: "/home/dev/src/project0",
    timestamp: "2026-11-01T10:00:00.000Z",
    uuid: crypto.randomUUID(),
    message: { role: "user", content: text },
  }) + "\n";
}

Deno.test("reindex --watch captures appends and new files within seconds and stops on SIGTERM", async () => {
  const world = await makeWorld();
  const flags = await taskFlags("reindex");
  const child = (() => {
    const [first] = writeClaudeCorpus(world.claude, { sessions: 3, lines: 4 });
    return {
      file: first!,
      process: new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...flags,
          "--quiet",
          join(ROOT, "commands", "reindex.ts"),
          "--watch",
        ],
        env: { ...childBaseEnv(), ...world.vars },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn(),
    };
  })();
  try {
    await eventually("the first capture", async () => (await hits(world, "marker2")) === 1);
    // status names the watcher as what captured last, as it names reindex for a cron run.
    await eventually("status to show the watcher's capture", async () => {
      const shown = await runCli("status", [], world.vars);
      return /^last capture: \S+ \(\d+ s ago, by reindex --watch\) ok — Captured 12 new records /m
        .test(shown.stdout);
    });
    const sessionId = child.file.split("/").at(-1)!.replace(".jsonl", "");
    appendFileSync(child.file, line(sessionId, "appended quetzal-harmonica words"));
    await eventually(
      "the appended line",
      async () => (await hits(world, "quetzal-harmonica")) === 1,
    );

    const dir = join(world.claude, "projects", "-home-dev-src-newproject");
    await Deno.mkdir(dir, { recursive: true });
    const fresh = crypto.randomUUID();
    Deno.writeTextFileSync(
      join(dir, `${fresh}.jsonl`),
      line(fresh, "brand new lobster-sonata file"),
    );
    await eventually("the new file", async () => (await hits(world, "lobster-sonata")) === 1);

    child.process.kill("SIGTERM");
    const out = await child.process.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));

    const after = captureIo();
    assert.equal(await reindex(["--json"], after, world.env), 0);
    assert.equal(JSON.parse(after.stdout()).records, 0, "nothing captured twice");
    assert.equal(await hits(world, "quetzal-harmonica"), 1);
  } catch (err) {
    throw await withWatcherOutput(err, child.process);
  } finally {
    try {
      child.process.kill("SIGKILL");
    } catch {
      // already exited
    }
    await child.process.status;
    await world.cleanup();
  }
});

Deno.test("reindex --watch captures a Codex append and an OpenCode part within seconds", async () => {
  const world = await makeWorld({ fixtures: ["codex", "opencode"] });
  const { fixtureIds, insertPart } = await import("../../fixtures/opencode/make_db.ts");
  const ids = fixtureIds();
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("reindex"),
      "--quiet",
      join(ROOT, "commands", "reindex.ts"),
      "--watch",
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    await eventually(
      "the first capture",
      async () => (await hits(world, "glacier-tambourine")) === 1,
    );
    const rollouts = manifestFiles("codex") as { path: string; case: string }[];
    const interrupted = join(world.codex, rollouts.find((e) => e.case === "interrupted")!.path);
    appendFileSync(
      interrupted,
      JSON.stringify({
        timestamp: "2026-06-16T12:00:00.000Z",
        type: "response_item",
        payload: {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "late answer about osprey-quadrant" }],
        },
      }) + "\n",
    );
    const now = Date.now();
    insertPart(join(world.xdgData, "opencode", "opencode.db"), {
      messageId: ids.mainLastMessage,
      sessionId: ids.sessions.main,
      timeCreated: now,
      timeUpdated: now,
      data: { type: "text", text: "a new part about kiwi-sextant", time: { start: now, end: now } },
    });
    await eventually("the Codex line", async () => (await hits(world, "osprey-quadrant")) === 1);
    await eventually("the OpenCode part", async () => (await hits(world, "kiwi-sextant")) === 1);
    // A prompt typed for a session without a rollout (that it comes between discoveries, the
    // history file being watched, is tests/lib/capture/watch_test.ts's to show).
    appendFileSync(
      join(world.codex, "history.jsonl"),
      JSON.stringify({
        session_id: "019f1c2d-3e4f-7a5b-8c6d-7e8f9a0b1c2d",
        ts: Math.floor(now / 1000),
        text: "what became of the heron-spinnaker build",
      }) + "\n",
    );
    await eventually("the typed prompt", async () => (await hits(world, "heron-spinnaker")) === 1);

    process.kill("SIGTERM");
    const out = await process.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const after = captureIo();
    assert.equal(await reindex(["--json"], after, world.env), 0);
    assert.equal(JSON.parse(after.stdout()).records, 0, "nothing captured twice");
    assert.equal(await hits(world, "kiwi-sextant"), 1);
  } catch (err) {
    throw await withWatcherOutput(err, process);
  } finally {
    try {
      process.kill("SIGKILL");
    } catch {
      // already exited
    }
    await process.status;
    await world.cleanup();
  }
});

function manifestFiles(agent: string): unknown[] {
  const parsed = JSON.parse(Deno.readTextFileSync(join(ROOT, "fixtures", agent, "MANIFEST.json")));
  return Array.isArray(parsed) ? parsed : parsed.files;
}
