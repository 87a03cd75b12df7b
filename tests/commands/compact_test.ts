// `compact` as a user runs it, a compaction killed half-way (the record stays as it was, the
// snapshot is there), and the privacy of the stage-marker log across capture, search, chat
// and compaction.

import assert from "node:assert/strict";
import { join } from "node:path";
import { projectOf } from "../../lib/paths.ts";
import {
  childBaseEnv,
  makeWorld,
  ROOT,
  runCli,
  runCliWithInput,
  taskFlags,
  type World,
} from "../_helpers.ts";
import { type OpenAiServer, startOpenAiServer } from "../_openai_server.ts";
import { eventually } from "../_wait.ts";

interface Setup {
  world: World;
  server: OpenAiServer;
  vars: Record<string, string>;
  project: string;
}

async function withSetup(fn: (s: Setup) => Promise<void>, fixtures = false): Promise<void> {
  const world = await makeWorld(fixtures ? { fixtures: ["claude"] } : {});
  const server = startOpenAiServer({
    reply: (req) =>
      req.messages[0]?.content.startsWith("You are compacting")
        ? "SUMMARY of the talk so far"
        : "An answer.",
  });
  try {
    const project = join(world.dir, "project");
    Deno.mkdirSync(project);
    const vars = {
      ...world.vars,
      INIT_CWD: project,
      OPENAI_BASE_URL: server.baseUrl,
      LOGBOOK_MODEL: "asked-model",
    };
    await fn({ world, server, vars, project });
  } finally {
    await server.close();
    await world.cleanup();
  }
}

/** A session of three rounds made by `chat` with piped prompts; returns its record path. */
async function threeRounds(s: Setup, prompts = ["first", "second", "third"]): Promise<string> {
  const chat = await runCliWithInput("chat", [], s.vars, prompts.join("\n") + "\n");
  assert.equal(chat.code, 0, chat.stderr);
  const dir = join(s.world.data, "sessions", projectOf(s.project).key);
  const file = [...Deno.readDirSync(dir)].find((e) => e.name.endsWith(".json"))!.name;
  return join(dir, file);
}

Deno.test("compact <id> compacts a session of this project and reports it", async () => {
  await withSetup(async (s) => {
    const file = await threeRounds(s);
    const id = file.split("/").at(-1)!.replace(".json", "");
    const result = await runCli("compact", [id.slice(0, 8), "--json"], s.vars);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.outcome, "compacted");
    assert.equal(report.session, id);
    assert.equal(report.replaced, 2);
    const record = JSON.parse(Deno.readTextFileSync(file));
    assert.deepEqual(record.archive.map((m: { content: string }) => m.content), [
      "first",
      "An answer.",
    ]);

    const again = await runCli("compact", [id], s.vars);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /^Nothing to compact: /);
    const unknown = await runCli("compact", ["no-such-session"], s.vars);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^error: Cannot compact session "no-such-session": no such id in this project/,
    );
  });
});

Deno.test("a compaction killed half-way leaves the record as it was, with the snapshot", async () => {
  await withSetup(async (s) => {
    const file = await threeRounds(s);
    const before = Deno.readTextFileSync(file);
    const id = file.split("/").at(-1)!.replace(".json", "");
    s.server.options.delayMs = 6_000; // the summary does not come before the kill
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...await taskFlags("compact"),
        "--quiet",
        join(ROOT, "commands", "compact.ts"),
        id,
      ],
      env: { ...childBaseEnv(), ...s.vars },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const archives = join(s.world.data, "prune-archives");
    const snapshot = await eventually(
      "the snapshot, written before the summary is asked for",
      () => {
        try {
          return [...Deno.readDirSync(archives)].find((e) => e.name.endsWith(".txt"))?.name;
        } catch {
          return undefined; // not yet
        }
      },
    );
    await eventually("the summary asked for", () => s.server.requests.length >= 4);
    child.kill("SIGKILL");
    await child.status;
    assert.equal(Deno.readTextFileSync(file), before, "the record is exactly as it was");
    assert.match(Deno.readTextFileSync(join(archives, snapshot)), /third/);
  });
});

Deno.test("after capture, search, chat and compaction the marker log holds no text, only steps", async () => {
  await withSetup(async (s) => {
    const secret = "sk-proj-" + "Zq8Xv3Nw7Lk2Mj5Hb9Gf4Dc6".repeat(2);
    assert.equal((await runCli("reindex", ["--quiet"], s.vars)).code, 0);
    assert.equal((await runCli("search", ["marmot keyring"], s.vars)).code, 0);
    const file = await threeRounds(s, [
      `please remember ${secret} for later`,
      "the pelican-umbrella question",
      "one more quince-orbit prompt",
    ]);
    const id = file.split("/").at(-1)!.replace(".json", "");
    assert.equal((await runCli("compact", [id], s.vars)).code, 0);

    const log = Deno.readTextFileSync(join(s.world.data, "logs", "stage-markers.log"));
    const steps = new Set(log.trim().split("\n").map((l) => JSON.parse(l).step));
    for (
      const step of [
        "capture.batch",
        "index.write",
        "model.request",
        "snapshot.write",
        "compaction.summary",
      ]
    ) {
      assert.ok(steps.has(step), `the log has ${step}`);
    }
    for (
      const planted of [
        secret,
        "Zq8Xv3Nw7",
        "marmot",
        "keyring",
        "pelican-umbrella",
        "quince-orbit",
        "quokka-lantern",
        "An answer",
        "SUMMARY",
      ]
    ) {
      assert.ok(!log.includes(planted), `no "${planted}" in the marker log`);
    }
  }, true);
});
