// `fork` as a user runs it: the source is left byte for byte as it was, manifest runs and unknown
// ids are refused, and another agent's conversation becomes a logbook session; on a terminal with
// no model configured it forks in that agent's own command (`--print` prints it), and
// `--into-logbook` asks for the logbook session, saying what a model needs, whole.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { loadContext, openStore } from "../../lib/context.ts";
import { projectOf } from "../../lib/paths.ts";
import { newRecord, type SessionRecord, SessionStore } from "../../lib/sessions/records.ts";
import { nearestExistingDir } from "../../lib/sessions/resume.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { captureIo, makeWorld, runCli, type World } from "../_helpers.ts";
import { exitStatus, fakeAgents, terminalScript, Tmux, tmuxAvailable } from "../_tmux.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function projectWorld(): Promise<{ world: World; project: string; store: SessionStore }> {
  const world = await makeWorld();
  const project = join(world.dir, "project");
  Deno.mkdirSync(project);
  world.vars.INIT_CWD = project;
  return { world, project, store: new SessionStore(loadContext({ env: world.env }).paths) };
}

function saved(store: SessionStore, project: string, patch: Partial<SessionRecord> = {}) {
  const record: SessionRecord = {
    ...newRecord({
      cwd: project,
      project: projectOf(project).root,
      branch: "main",
      build: "0.1.0",
      now: Date.parse("2026-02-01T00:00:00Z"),
      title: "Retry helper",
    }),
    ...patch,
  };
  if (record.kind === "chat") {
    record.messages.push({ role: "user", content: "why?" }, {
      role: "assistant",
      content: "because",
    });
  }
  store.save(record);
  store.appendTrail(record, [{
    at: record.createdAt,
    event: "turn",
    turn: 1,
    disk: { gates: ["secrets"], redacted: {} },
  }]);
  return record;
}

Deno.test("fork prints the new id; the source record and trail are byte-identical after", async () => {
  const { world, project, store } = await projectWorld();
  try {
    const source = saved(store, project);
    const recordBytes = Deno.readFileSync(store.recordPath(source));
    const trailBytes = Deno.readFileSync(store.trailPath(source));
    const result = await runCli("fork", [source.id.slice(0, 8)], world.vars);
    assert.equal(result.code, 0, result.stderr);
    const id = result.stdout.trim();
    assert.match(id, UUID_V4);
    assert.equal(
      result.stderr,
      `Forked as "Retry helper (fork)". Resume with: logbook resume ${id}\n`,
    );
    assert.deepEqual(Deno.readFileSync(store.recordPath(source)), recordBytes);
    assert.deepEqual(Deno.readFileSync(store.trailPath(source)), trailBytes);
    const fork = store.read(projectOf(project).key, id);
    assert.deepEqual(fork.messages, source.messages);
    assert.deepEqual(fork.spend, source.spend);
    assert.deepEqual(Deno.readFileSync(store.trailPath(fork)), trailBytes);
    assert.notEqual(fork.startedAt, source.startedAt);
  } finally {
    await world.cleanup();
  }
});

Deno.test("fork refuses a manifest run and an unknown id", async () => {
  const { world, project, store } = await projectWorld();
  try {
    const manifest = saved(store, project, {
      kind: "manifest",
      plan: { goal: "g", plan: [], steps: [] },
    });
    const refused = await runCli("fork", [manifest.id], world.vars);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      `error: Cannot fork session "${manifest.id}": it is a manifest run, which has no conversation\n`,
    );
    const unknown = await runCli("fork", ["feedface"], world.vars);
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.stderr,
      'error: Cannot fork session "feedface": no such id in this project, and no captured ' +
        "conversation has it\n",
    );
    const missing = await runCli("fork", [], world.vars);
    assert.equal(missing.code, 2);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forking a Claude Code conversation creates a logbook session from its messages", async () => {
  const { world, project, store } = await projectWorld();
  try {
    const sid = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d";
    const dir = join(world.claude, "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
    Deno.mkdirSync(dir, { recursive: true });
    const base = { isSidechain: false, cwd: project, sessionId: sid, version: "2.1.40" };
    Deno.writeTextFileSync(
      join(dir, `${sid}.jsonl`),
      [
        {
          ...base,
          type: "user",
          uuid: "u1",
          parentUuid: null,
          timestamp: "2026-04-01T09:00:00.000Z",
          message: { role: "user", content: "Add jitter to the retry helper" },
        },
        {
          ...base,
          type: "assistant",
          uuid: "a1",
          parentUuid: "u1",
          timestamp: "2026-04-01T09:00:09.000Z",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "claude-x",
            content: [{ type: "text", text: "Added full jitter." }],
          },
        },
      ].map((l) => JSON.stringify(l)).join("\n") + "\n",
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    // The id as a search hit line shows it, forked from another directory.
    const elsewhere = join(world.dir, "elsewhere");
    Deno.mkdirSync(elsewhere);
    const there = { ...world.vars, INIT_CWD: elsewhere };
    const found = await runCli("search", ["jitter"], there);
    const id = found.stdout.split("\n").find((l) => l.startsWith("claude:"))!;
    assert.equal(id, `claude:${sid}`);
    const result = await runCli("fork", [id], there);
    assert.equal(result.code, 0, result.stderr);
    const fork = store.read(projectOf(project).key, result.stdout.trim());
    assert.equal(fork.forkedFrom, `claude:${sid}`);
    assert.equal(fork.title, "Add jitter to the retry helper (fork)");
    assert.deepEqual(fork.messages.map((m) => [m.role, m.content]), [
      ["user", "Add jitter to the retry helper"],
      ["assistant", "Added full jitter."],
    ]);
    const rows = await runCli("resume", ["--continue", "--print"], world.vars);
    assert.equal(rows.stdout, `logbook resume ${fork.id}\n`);
  } finally {
    await world.cleanup();
  }
});

Deno.test("fork of a conversation whose directory is gone names the nearest one that is there", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    // The fixture's cwd (/home/dev/src/alpha) exists on no test machine.
    const elsewhere = join(world.dir, "elsewhere");
    Deno.mkdirSync(elsewhere);
    const id = "claude:f332cca8-0b9a-4244-835f-c44f31385301";
    const result = await runCli("fork", [id], { ...world.vars, INIT_CWD: elsewhere });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /note: the session's directory "\/home\/dev\/src\/alpha" no longer exists; using "\/[^"]*"/,
    );
    const hint = result.stderr.match(/Resume with: (?:cd (\S+) && )?logbook resume (\S+)/);
    assert.ok(hint, result.stderr);
    assert.equal(hint[2], result.stdout.trim());
    const dir = hint[1] ?? elsewhere;
    assert.ok(Deno.statSync(dir).isDirectory, `the hint's directory "${dir}" exists`);
  } finally {
    await world.cleanup();
  }
});

/** The session records written in `world` (none when its sessions folder is not there). */
function sessionRecords(world: World): string[] {
  const root = join(world.data, "sessions");
  try {
    return [...Deno.readDirSync(root)].flatMap((project) =>
      [...Deno.readDirSync(join(root, project.name))]
        .filter((f) => f.name.endsWith(".json"))
        .map((f) => join(root, project.name, f.name))
    );
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** One top-level conversation of each agent the world captured: its key, native id and cwd. */
function conversationsOf(world: World): Map<string, { key: string; id: string; cwd: string }> {
  const store = openStore(loadContext({ env: world.env }), { mustExist: true, readOnly: true });
  try {
    const rows = store.stmt(
      `SELECT agent, key, native_id AS id, coalesce(cwd, project_root) AS cwd FROM conversations
       WHERE subagent = 0 ORDER BY id`,
    ).all() as { agent: string; key: string; id: string; cwd: string }[];
    const found = new Map<string, { key: string; id: string; cwd: string }>();
    for (const row of rows) if (!found.has(row.agent)) found.set(row.agent, row);
    return found;
  } finally {
    store.close();
  }
}

Deno.test("fork --print prints each agent's own fork, where it can run", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const elsewhere = join(world.dir, "elsewhere");
    Deno.mkdirSync(elsewhere);
    const there = { ...world.vars, INIT_CWD: elsewhere };
    const found = conversationsOf(world);
    // As each agent's --help gives its fork (Claude Code 2.1, Codex 0.169, OpenCode 1.18).
    const forks: Record<string, (id: string) => string> = {
      claude: (id) => `claude --resume ${id} --fork-session`,
      codex: (id) => `codex fork ${id}`,
      opencode: (id) => `opencode --session ${id} --fork`,
    };
    for (const [agent, fork] of Object.entries(forks)) {
      const c = found.get(agent)!;
      const printed = await runCli("fork", [c.key, "--print"], there);
      assert.equal(printed.code, 0, printed.stderr);
      // The fixtures' directories are on no machine: the nearest that is, said so.
      const runsIn = nearestExistingDir(c.cwd);
      assert.equal(printed.stdout, `cd ${runsIn} && ${fork(c.id)}\n`, agent);
      assert.equal(
        printed.stderr,
        `note: the session's directory "${c.cwd}" no longer exists; using "${runsIn}", the ` +
          "nearest that does\n",
      );
    }
    assert.deepEqual(sessionRecords(world), [], "nothing was forked");
  } finally {
    await world.cleanup();
  }
});

Deno.test("fork --print refuses a logbook session and a logbook fork, whole", async () => {
  const { world, project, store } = await projectWorld();
  try {
    const source = saved(store, project);
    const own = await runCli("fork", [source.id, "--print"], world.vars);
    assert.equal(own.code, 1);
    assert.equal(
      own.stderr,
      `error: Cannot print a command that forks "logbook:${source.id}": a logbook session forks ` +
        `into logbook only ("logbook fork ${source.id}")\n`,
    );
    for (const other of ["--into-logbook", "--incognito"]) {
      const both = await runCli("fork", [source.id, "--print", other], world.vars);
      assert.equal(both.code, 2);
      assert.match(
        both.stderr,
        new RegExp(`^error: Options "--print" and "${other}" cannot be used together\n`),
      );
    }
  } finally {
    await world.cleanup();
  }
});

const skip = () => console.log("skipped: tmux is not installed, so the terminal test cannot run");

Deno.test("on a terminal with no model, fork runs the agent's own fork; --into-logbook says what to set (tmux)", async (t) => {
  if (!tmuxAvailable()) return skip();
  const world = await makeWorld();
  try {
    const sid = "3c9d1e2f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
    const app = join(world.dir, "app dir");
    await placeClaudeTranscript(
      world,
      app,
      sid,
      claudeTranscript(sid, app, [["Tune the amber-quartz cache", "Done: 64 entries."]]),
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { path, calls } = fakeAgents(world);
    const vars = { ...world.vars, PATH: path };
    await t.step("the agent's own fork, in the session's directory", async () => {
      const { script, status } = await terminalScript(world.dir, "fork", [`claude:${sid}`], vars);
      // Wide enough that no line wraps.
      const tmux = new Tmux(script, { width: 200, height: 24 });
      try {
        assert.equal(await exitStatus(status), "3", "the agent's exit status passes through");
        Deno.removeSync(status);
        assert.equal(
          Deno.readTextFileSync(calls),
          `claude|${app}|--resume ${sid} --fork-session\n`,
        );
        const screen = tmux.screen().replace(/\s+/g, " ");
        assert.ok(
          screen.includes(
            `note: no model is configured, so this forks in Claude Code; "logbook fork ` +
              `--into-logbook claude:${sid}" says what to set for a logbook session`,
          ),
          screen,
        );
        assert.ok(
          screen.includes(
            `Forking claude:${sid} with: cd '${app}' && claude --resume ${sid} --fork-session`,
          ),
          screen,
        );
        assert.deepEqual(sessionRecords(world), [], "no logbook session was written");
      } finally {
        tmux.kill();
      }
    });
    await t.step("--into-logbook: the model's absence, whole, and nothing written", async () => {
      const { script, status } = await terminalScript(
        world.dir,
        "fork",
        [`claude:${sid}`, "--into-logbook"],
        vars,
      );
      const tmux = new Tmux(script, { width: 200, height: 24 });
      try {
        assert.equal(await exitStatus(status), "1");
        const screen = await tmux.waitFor(/with your endpoint's address/, "the whole error");
        assert.match(screen, /^error: No model configured: add these two lines to .*config\.json/m);
        assert.match(screen, /^ {2}"baseUrl": "http:\/\/127\.0\.0\.1:8080\/v1",$/m);
        assert.match(screen, /^ {2}"model": "<the model's name at that endpoint>"$/m);
        assert.match(screen, /or set the variables OPENAI_BASE_URL and LOGBOOK_MODEL/);
        assert.equal(Deno.readTextFileSync(calls).split("\n").length, 2, "no agent ran");
        assert.deepEqual(sessionRecords(world), [], "no logbook session was written");
      } finally {
        tmux.kill();
      }
    });
  } finally {
    await world.cleanup();
  }
});
