// `resume` as a user runs it: --continue passing over manifest runs, manifest runs printed, each
// project seeing only its own sessions, corrupt records left out, another build and branch noted,
// and other agents' sessions resumed by their own (fake) binaries in the session's directory.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { loadContext, openStore } from "../../lib/context.ts";
import { projectOf } from "../../lib/paths.ts";
import { corruptRecords, newRecord, SessionStore } from "../../lib/sessions/records.ts";
import { startOpenAiServer } from "../_openai_server.ts";
import { captureIo, makeWorld, runCli, type World } from "../_helpers.ts";
import { fakeAgents } from "../_tmux.ts";
import { leaks, placeSecretPathSession, SECRET_PATH_SESSION, shownPath } from "../_secret_path.ts";

/** A Claude Code transcript in its real format: one question and answer, run in `cwd`. */
function writeClaudeSession(world: World, cwd: string, sessionId: string, question: string) {
  const dir = join(world.claude, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  Deno.mkdirSync(dir, { recursive: true });
  const base = { isSidechain: false, cwd, sessionId, version: "2.1.40", gitBranch: "main" };
  const u = crypto.randomUUID();
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: "user",
      uuid: u,
      timestamp: "2026-04-01T09:00:00.000Z",
      message: { role: "user", content: question },
    },
    {
      ...base,
      parentUuid: u,
      type: "assistant",
      uuid: crypto.randomUUID(),
      timestamp: "2026-04-01T09:00:05.000Z",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-x",
        content: [{ type: "text", text: "Sure." }],
      },
    },
  ];
  Deno.writeTextFileSync(
    join(dir, `${sessionId}.jsonl`),
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
}

/** Saves a logbook record for `cwd` directly, as a finished session would have left it. */
function saveRecord(
  world: World,
  cwd: string,
  updatedAt: string,
  patch: Partial<ReturnType<typeof newRecord>> = {},
) {
  const record = {
    ...newRecord({
      cwd,
      project: projectOf(cwd).root,
      branch: null,
      build: "0.1.0",
      now: Date.parse(updatedAt),
      title: "A logbook session",
    }),
    ...patch,
  };
  if (record.kind === "chat" && record.messages.length === 0) {
    record.messages.push({ role: "user", content: "hello" }, { role: "assistant", content: "hi" });
  }
  const store = new SessionStore(loadContext({ env: world.env }).paths);
  store.save(record);
  return record;
}

async function projectWorld(): Promise<
  { world: World; project: string; vars: Record<string, string> }
> {
  const world = await makeWorld();
  const project = join(world.dir, "my project");
  Deno.mkdirSync(project);
  world.vars.INIT_CWD = project;
  return { world, project, vars: { ...world.vars } };
}

Deno.test("--continue passes over manifest runs and fails clearly where there is nothing", async () => {
  const { world, project, vars } = await projectWorld();
  try {
    const none = await runCli("resume", ["--continue"], vars);
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `error: Nothing to continue in "${project}": this project has no session that can be continued\n`,
    );
    const manifest = saveRecord(world, project, "2026-05-02T00:00:00Z", {
      kind: "manifest",
      title: "Linter upgrade",
      plan: { goal: "Upgrade the linter", plan: ["bump"], steps: [] },
    });
    const onlyManifest = await runCli("resume", ["-c", "--print"], vars);
    assert.equal(onlyManifest.code, 1);
    assert.match(onlyManifest.stderr, /^error: Nothing to continue in /);

    const chat = saveRecord(world, project, "2026-05-01T00:00:00Z");
    const picked = await runCli("resume", ["-c", "--print"], vars);
    assert.equal(picked.code, 0, picked.stderr);
    assert.equal(picked.stdout, `logbook resume ${chat.id}\n`);

    const printed = await runCli("resume", [manifest.id.slice(0, 6)], vars);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^Manifest run "Linter upgrade" /);
    assert.match(printed.stdout, /It cannot be continued/);
    assert.match(printed.stdout, /Goal: Upgrade the linter/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("/a/b, /a-b and /a b each see only their own sessions", async () => {
  const world = await makeWorld();
  const server = startOpenAiServer();
  try {
    const ids = new Map<string, string>();
    for (const cwd of ["/a/b", "/a-b", "/a b"]) {
      const vars = {
        ...world.vars,
        INIT_CWD: cwd,
        OPENAI_BASE_URL: server.baseUrl,
        LOGBOOK_MODEL: "m",
      };
      const made = await runCli("chat", ["-p", `hello from ${cwd}`], vars);
      assert.equal(made.code, 0, made.stderr);
      ids.set(cwd, /logbook resume ([0-9a-f-]{36})/.exec(made.stderr)![1]!);
    }
    for (const [cwd, id] of ids) {
      const vars = { ...world.vars, INIT_CWD: cwd };
      const latest = await runCli("resume", ["--continue", "--print"], vars);
      assert.equal(latest.stdout, `logbook resume ${id}\n`, cwd);
      for (const [otherCwd, otherId] of ids) {
        if (otherCwd === cwd) continue;
        const foreign = await runCli("resume", [otherId, "--print"], vars);
        assert.equal(foreign.code, 1);
        assert.equal(
          foreign.stderr,
          `error: Cannot resume session "${otherId}": no such id in this project, and no ` +
            "captured conversation has it\n",
        );
      }
    }
  } finally {
    await server.close();
    await world.cleanup();
  }
});

Deno.test("a corrupt record is left out of resume, noted, and listed for status", async () => {
  const { world, project, vars } = await projectWorld();
  try {
    const good = saveRecord(world, project, "2026-05-01T00:00:00Z");
    const ctx = loadContext({ env: world.env });
    const bad = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d";
    const path = join(ctx.paths.sessions, projectOf(project).key, `${bad}.json`);
    Deno.writeTextFileSync(path, "{ truncated");
    const result = await runCli("resume", ["--continue", "--print"], vars);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `logbook resume ${good.id}\n`);
    assert.match(result.stderr, /^note: 1 session record cannot be read and is left out: /);
    assert.ok(result.stderr.includes(path));
    const named = await runCli("resume", [bad.slice(0, 8), "--print"], vars);
    assert.equal(named.code, 1);
    assert.match(
      named.stderr,
      /\nerror: Cannot resume session "9b1deb4d": its record ".*" cannot be read: it is not valid JSON: /,
    );
    assert.deepEqual(corruptRecords(ctx.paths).map((c) => c.path), [path]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("resuming a record from another build, on another branch, says both", async () => {
  const { world, project, vars } = await projectWorld();
  const server = startOpenAiServer();
  try {
    Deno.mkdirSync(join(project, ".git", "refs", "heads"), { recursive: true });
    Deno.writeTextFileSync(join(project, ".git", "HEAD"), "ref: refs/heads/feature\n");
    const old = saveRecord(world, project, "2026-05-01T00:00:00Z", {
      build: "0.0.3",
      branch: "main",
    });
    const result = await runCli("resume", [old.id], {
      ...vars,
      OPENAI_BASE_URL: server.baseUrl,
      LOGBOOK_MODEL: "m",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /note: This session was recorded by logbook 0\.0\.3; this is logbook 0\.1\.0\n/,
    );
    assert.match(
      result.stderr,
      /note: The Git branch changed: the session ran on "main", this is "feature"\n/,
    );
    assert.match(result.stderr, new RegExp(`Resume with: logbook resume ${old.id}\\n$`));
  } finally {
    await server.close();
    await world.cleanup();
  }
});

Deno.test("an id copied from a search hit line resumes from any directory, in the recorded cwd", async () => {
  const { world, project, vars } = await projectWorld();
  try {
    const elsewhere = join(world.dir, "somewhere else");
    Deno.mkdirSync(elsewhere);
    const work = join(project, "service");
    Deno.mkdirSync(work);
    const claudeId = "8e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b";
    writeClaudeSession(world, work, claudeId, "Tune the lighthouse-quokka cache");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const there = { ...vars, INIT_CWD: elsewhere };
    const found = await runCli("search", ["lighthouse-quokka"], there);
    assert.equal(found.code, 0, found.stderr);
    // The hit's id line, copied whole.
    const id = found.stdout.split("\n").find((l) => l.startsWith("claude:"));
    assert.equal(id, `claude:${claudeId}`, found.stdout);

    const printed = await runCli("resume", [id, "--print"], there);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, `cd '${work}' && claude --resume ${claudeId}\n`);
    assert.equal(printed.stderr, "");

    const { path, calls } = fakeAgents(world);
    const ran = await runCli("resume", [id], { ...there, PATH: path });
    assert.equal(ran.code, 3, ran.stderr);

    // The recorded directory is gone: the nearest existing parent, said so.
    Deno.removeSync(work);
    const moved = await runCli("resume", [id, "--print"], there);
    assert.equal(moved.code, 0, moved.stderr);
    assert.equal(moved.stdout, `cd '${project}' && claude --resume ${claudeId}\n`);
    assert.equal(
      moved.stderr,
      `note: the session's directory "${work}" no longer exists; using "${project}", the ` +
        "nearest that does\n",
    );
    const ranMoved = await runCli("resume", [id], { ...there, PATH: path });
    assert.equal(ranMoved.code, 3, ranMoved.stderr);
    assert.deepEqual(Deno.readTextFileSync(calls).trimEnd().split("\n"), [
      `claude|${work}|--resume ${claudeId}`,
      `claude|${project}|--resume ${claudeId}`,
    ]);

    // A logbook session of that project, once captured, by its id from elsewhere.
    const own = saveRecord(world, project, "2026-05-01T00:00:00Z");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const ownPrinted = await runCli("resume", [`logbook:${own.id}`, "--print"], there);
    assert.equal(ownPrinted.code, 0, ownPrinted.stderr);
    assert.equal(ownPrinted.stdout, `cd '${project}' && logbook resume ${own.id}\n`);

    const unknown = await runCli("resume", ["claude:0000dead", "--print"], there);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no such id in this project, and no captured conversation has it/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("another agent's session runs its own resume command in the session's directory", async () => {
  const { world, project, vars } = await projectWorld();
  try {
    // A Git work tree, so that a session run in a subdirectory belongs to this project.
    Deno.mkdirSync(join(project, ".git"));
    Deno.writeTextFileSync(join(project, ".git", "HEAD"), "ref: refs/heads/main\n");
    const sub = join(project, "sub dir");
    Deno.mkdirSync(sub);
    const claudeId = "5d2c7f0e-3a1b-4c2d-9e8f-0a1b2c3d4e5f";
    writeClaudeSession(world, sub, claudeId, "Deploy the docs site");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    // Codex and OpenCode conversations as the store keeps them (the capture of those formats is
    // tested with their adapters).
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const insert = store.db.prepare(
        `INSERT INTO conversations (key, agent, native_id, project_root, project_key, cwd, title,
           first_ts, last_ts, message_count, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 2, 100)`,
      );
      const p = projectOf(project);
      insert.run(
        "codex:0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
        "codex",
        "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
        p.root,
        p.key,
        project,
        "Codex work",
        1,
        2,
      );
      insert.run(
        "opencode:ses_8f7e6d5c",
        "opencode",
        "ses_8f7e6d5c",
        p.root,
        p.key,
        sub,
        "OpenCode work",
        1,
        3,
      );
    } finally {
      store.close();
    }
    const { path, calls } = fakeAgents(world);
    const run = { ...vars, PATH: path };

    const printed = await runCli("resume", [claudeId.slice(0, 8), "--print"], run);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, `cd '${sub}' && claude --resume ${claudeId}\n`);

    for (const id of [claudeId, "codex:0199aaaa", "ses_8f7e"]) {
      const result = await runCli("resume", [id], run);
      assert.equal(result.code, 3, `the agent's exit status passes through: ${result.stderr}`);
    }
    assert.deepEqual(Deno.readTextFileSync(calls).trimEnd().split("\n"), [
      `claude|${sub}|--resume ${claudeId}`,
      `codex|${project}|resume 0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000`,
      `opencode|${sub}|--session ses_8f7e6d5c`,
    ]);

    const missing = await runCli("resume", [claudeId], { ...vars, PATH: "/nonexistent" });
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /\nerror: Cannot resume in Claude Code: "claude" is not on PATH\n$/,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a session's directory holding a secret: --print runs there, what resume says hides it", async () => {
  const world = await makeWorld();
  try {
    const cwd = await placeSecretPathSession(world);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { path, calls } = fakeAgents(world);
    const vars = { ...world.vars, PATH: path };
    // A command to run on this machine: with its directory as it is, or it would not run.
    const printed = await runCli("resume", [SECRET_PATH_SESSION, "--print"], vars);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, `cd ${cwd} && claude --resume ${SECRET_PATH_SESSION}\n`);
    const resumed = await runCli("resume", [SECRET_PATH_SESSION], vars);
    assert.equal(resumed.code, 3, resumed.stderr);
    assert.deepEqual(leaks(resumed.stderr), []);
    assert.ok(
      resumed.stderr.includes(`with: cd ${shownPath(cwd)} && claude --resume`),
      resumed.stderr,
    );
    assert.equal(
      Deno.readTextFileSync(calls),
      `claude|${cwd}|--resume ${SECRET_PATH_SESSION}\n`,
      "the agent runs in the directory itself",
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("resume without an id or a terminal is a usage error", async () => {
  const { world, vars } = await projectWorld();
  try {
    const result = await runCli("resume", [], vars);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^error: Missing the session id: /);
    const both = await runCli("resume", ["x", "-c"], vars);
    assert.equal(both.code, 2);
  } finally {
    await world.cleanup();
  }
});
