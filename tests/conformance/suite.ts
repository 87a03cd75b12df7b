// The conformance suite: the real Claude Code, Codex and OpenCode, installed from npm at the
// versions in agents.ts (or the newest, with LOGBOOK_CONFORMANCE_VERSIONS=latest), each driven
// in a throw-away home against the local model server; then logbook captures what they wrote
// and must show it byte for byte, find every word, link and title it as the agent did, report
// no drift, and hand back a resume command the agent accepts. Run it with `deno task
// conformance` (not part of `deno task test`: the installs are large).

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type AgentPin, PINNED } from "./agents.ts";
import { install, type Installed, latestVersion, type Skipped } from "./_install.ts";
import { startModelServer } from "./_model_server.ts";
import { DELEGATE, PROMPTS, script, START, TITLE } from "./_script.ts";
import { driveTui, logbook, makeRig, parseCommandLine, type Rig, runAgent } from "./_rig.ts";
import {
  assertFilesExact,
  assertFound,
  assertRowsExact,
  capture,
  driftOf,
  show,
  type Shown,
  status,
  typesSeen,
} from "./_checks.ts";

const LATEST = Deno.env.get("LOGBOOK_CONFORMANCE_VERSIONS") === "latest";
const REPORT = Deno.env.get("LOGBOOK_CONFORMANCE_REPORT");

/** One agent's line of the drift canary's table. */
export interface ReportLine {
  agent: string;
  version: string;
  types: string[];
  newTypes: string[];
  failed: string[];
  skipped?: string;
}

async function pinsToRun(): Promise<(AgentPin | Skipped)[]> {
  if (!LATEST) return [...PINNED];
  return await Promise.all(PINNED.map(async (pin) => {
    const version = await latestVersion(pin.package);
    return /^\d+\.\d+\.\d+/.test(version) ? { ...pin, version } : { pin, reason: version };
  }));
}

const ready: (Installed | Skipped)[] = await Promise.all(
  (await pinsToRun()).map((p) => ("reason" in p ? p : install(p))),
);
for (const r of ready) {
  if ("reason" in r) {
    console.log(`conformance: skipping ${r.pin.agent} ${r.pin.version}: ${r.reason}`);
    appendReport({
      agent: r.pin.agent,
      version: r.pin.version,
      types: [],
      newTypes: [],
      failed: [],
      skipped: r.reason,
    });
  } else if (r.seconds > 0) {
    console.log(
      `conformance: installed ${r.pin.package}@${r.pin.version} in ${r.seconds.toFixed(1)} s`,
    );
  }
}

function appendReport(line: ReportLine): void {
  if (REPORT) Deno.writeTextFileSync(REPORT, JSON.stringify(line) + "\n", { append: true });
}

function readyFor(agent: AgentPin["agent"]): Installed | Skipped {
  return ready.find((r) => r.pin.agent === agent)!;
}

/** Runs one agent's conformance test: set up, drive, check, report. */
async function conformance(
  t: Deno.TestContext,
  installed: Installed,
  drive: (t: Deno.TestContext, rig: Rig, line: ReportLine) => Promise<void>,
): Promise<void> {
  const line: ReportLine = {
    agent: installed.pin.agent,
    version: installed.pin.version,
    types: [],
    newTypes: [],
    failed: [],
  };
  const log = Deno.env.get("LOGBOOK_CONFORMANCE_LOG");
  const root = await Deno.makeTempDir({ prefix: "logbook-conformance-script-" });
  const server = startModelServer(
    script(root),
    log ? `${log}.${installed.pin.agent}.jsonl` : undefined,
  );
  const rig = await makeRig(installed, server);
  server.script.plans = script(rig.project, installed.pin.agent).plans;
  const step = async (name: string, fn: () => Promise<void>) => {
    const ok = await t.step(name, fn);
    if (!ok) line.failed.push(name);
    return ok;
  };
  try {
    await drive(Object.assign(Object.create(t), { step }), rig, line);
    await step("the agent reached no host but the model server (through its settings)", () => {
      const unavoidable = installed.pin.unavoidable;
      const stray = server.strayConnections.filter((c) => !(c in unavoidable));
      assert.deepEqual(stray, [], "connections to other hosts (refused by the suite's proxy)");
      for (const c of new Set(server.strayConnections)) {
        console.log(
          `conformance: ${installed.pin.agent} tried "${c}" (refused): ${unavoidable[c]}`,
        );
      }
      return Promise.resolve();
    });
  } finally {
    appendReport(line);
    await server.close();
    await rig.cleanup();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

type Step = (name: string, fn: () => Promise<void>) => Promise<boolean>;
const stepOf = (t: Deno.TestContext) => (t as unknown as { step: Step }).step;

function ok(ran: { code: number; stdout: string; stderr: string }, what: string): void {
  assert.equal(
    ran.code,
    0,
    `${what} exited ${ran.code}:\n${ran.stdout.slice(-2000)}\n${ran.stderr.slice(-2000)}`,
  );
}

/** Checks drift and the types seen, and puts both in the report. */
async function checkDrift(rig: Rig, shown: Shown[], line: ReportLine): Promise<void> {
  const state = await status(rig);
  line.types = typesSeen(shown, line.agent);
  const drift = driftOf(state, line.agent);
  line.newTypes = drift;
  assert.deepEqual(drift, [], "status reports drift");
  assert.deepEqual(state.empty, [], "no source yielded nothing");
  assert.deepEqual(state.errors, [], "no source failed");
}

/** `resume <id> --print`: the directory and argv logbook would run. */
async function resumeCommand(rig: Rig, id: string): Promise<{ cwd: string; argv: string[] }> {
  const out = await logbook(rig, "resume", [id, "--print"], rig.home);
  ok(out, "resume --print");
  return parseCommandLine(out.stdout.trim(), rig.home);
}

function files(dir: string, match: (name: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory) walk(path);
      else if (e.isFile && match(e.name)) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

function contains(path: string, word: string): boolean {
  try {
    return Deno.readTextFileSync(path).includes(word);
  } catch {
    return false;
  }
}

// ---- Claude Code ----

const claude = readyFor("claude");
Deno.test({
  name:
    `Claude Code ${claude.pin.version}: sessions, a subagent and a compaction are captured exactly`,
  ignore: "reason" in claude,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: (t) => conformance(t, claude as Installed, driveClaude),
});

async function driveClaude(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const projects = join(rig.home, ".claude", "projects");
  const allowed = ["--allowedTools", "Bash Read Agent"];
  let session = "";
  const transcript = () => files(projects, (n) => n === `${session}.jsonl`)[0]!;
  await step("claude -p starts a session that runs a tool", async () => {
    const ran = await runAgent(rig, [
      "-p",
      ...allowed,
      "--output-format",
      "json",
      "--name",
      TITLE,
      PROMPTS.start,
    ]);
    ok(ran, "claude -p");
    const result = JSON.parse(ran.stdout.trim().split("\n").at(-1)!);
    session = result.session_id;
    assert.match(session, /^[0-9a-f-]{36}$/);
    assert.equal(result.result, START.answer);
    assert.ok(contains(transcript(), "copperwhistle"), "the tool's output is in the transcript");
  });
  await step("claude --resume <id> -p continues the same transcript", async () => {
    const before = Deno.statSync(transcript()).size;
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, PROMPTS.resume]),
      "claude --resume -p",
    );
    assert.ok(Deno.statSync(transcript()).size > before);
    assert.equal(files(projects, (n) => /^[0-9a-f-]{36}\.jsonl$/.test(n)).length, 1);
  });
  await step("the Agent (Task) tool spawns a subagent with a transcript of its own", async () => {
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, PROMPTS.delegate]),
      "claude -p (subagent)",
    );
    const subagents = files(projects, (n) => n.startsWith("agent-") && n.endsWith(".jsonl"));
    assert.equal(subagents.length, 1, "one subagent transcript");
    assert.ok(contains(subagents[0]!, "tessellark"));
    assert.ok(contains(transcript(), DELEGATE.answer));
  });
  await step("/compact in -p compacts the session", async () => {
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, "/compact"]),
      "claude -p /compact",
    );
    assert.ok(contains(transcript(), "compact_boundary"));
    assert.ok(contains(transcript(), "quillmarsh"));
  });
  await checkCapture(t, rig, line, {
    main: `claude:${session}`,
    sources: () => files(projects, (n) => n.endsWith(".jsonl")),
    conversations: () =>
      files(projects, (n) => n.endsWith(".jsonl")).map((f) => {
        const agent = /^agent-(.+)\.jsonl$/.exec(basename(f));
        return agent ? `claude:${session}/agent-${agent[1]}` : `claude:${basename(f, ".jsonl")}`;
      }),
    words: (sub) => ({
      quasarbeet: `claude:${session}`,
      lanternfig: `claude:${session}`,
      copperwhistle: `claude:${session}`,
      marmalith: `claude:${session}`,
      cobaltwren: `claude:${session}`,
      plumquartz: `claude:${session}`,
      zephyrkiln: `claude:${session}`,
      orchidvault: `claude:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      quillmarsh: `claude:${session}`,
    }),
    titles: (sub) => {
      const meta = JSON.parse(
        Deno.readTextFileSync(files(projects, (n) => n.endsWith(".meta.json"))[0]!),
      );
      return { [`claude:${session}`]: TITLE, [sub]: `${meta.agentType}: ${meta.description}` };
    },
    parents: (sub) => ({ [`claude:${session}`]: null, [sub]: `claude:${session}` }),
  });
  await resumeInTerminal(t, rig, `claude:${session}`, transcript, "TUI under tmux");
}

// ---- Codex ----

const codex = readyFor("codex");
Deno.test({
  name:
    `Codex ${codex.pin.version}: a session, its resume, a subagent, a compaction and its archive are captured exactly`,
  ignore: "reason" in codex,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: (t) => conformance(t, codex as Installed, driveCodex),
});

async function driveCodex(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const codexHome = join(rig.home, ".codex");
  const sessions = join(codexHome, "sessions");
  const exec = ["exec", "--strict-config", "--json", "--skip-git-repo-check"];
  let thread = "";
  const rollout = () => files(codexHome, (n) => n.startsWith("rollout-") && n.includes(thread))[0]!;
  await step("codex exec starts a session that runs a shell command", async () => {
    const ran = await runAgent(rig, [...exec, PROMPTS.start]);
    ok(ran, "codex exec");
    const started = ran.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    )
      .find((e) => e.type === "thread.started");
    thread = started.thread_id;
    assert.ok(contains(rollout(), "copperwhistle"), "the command's output is in the rollout");
  });
  await step("codex exec resume <id> continues the same rollout", async () => {
    const before = Deno.statSync(rollout()).size;
    ok(await runAgent(rig, [...exec, "resume", thread, PROMPTS.resume]), "codex exec resume");
    assert.ok(Deno.statSync(rollout()).size > before);
    assert.equal(files(sessions, (n) => n.startsWith("rollout-")).length, 1);
  });
  await step("spawn_agent runs a subagent in a rollout of its own", async () => {
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.delegate]),
      "codex exec resume (subagent)",
    );
    const rollouts = files(sessions, (n) => n.startsWith("rollout-"));
    assert.equal(rollouts.length, 2, "the subagent's rollout");
    const child = rollouts.find((f) => !f.includes(thread))!;
    assert.ok(contains(child, "tessellark"), "the subagent answered");
    assert.ok(contains(rollout(), DELEGATE.answer), "the parent answered after it");
  });
  await step("a turn over model_auto_compact_token_limit compacts the session", async () => {
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.heavy]),
      "codex exec resume (heavy)",
    );
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.afterCompaction]),
      "codex exec resume",
    );
    assert.ok(contains(rollout(), `"type":"compacted"`), "a compacted line");
    assert.ok(contains(rollout(), "ivorytrench"));
  });
  const child = () => {
    const file = files(sessions, (n) => n.startsWith("rollout-") && !n.includes(thread))[0]!;
    return `codex:${/([0-9a-f-]{36})\.jsonl/.exec(file)![1]}`;
  };
  const own = [
    "quasarbeet",
    "lanternfig",
    "copperwhistle",
    "marmalith",
    "cobaltwren",
    "plumquartz",
    "zephyrkiln",
    "orchidvault",
    "saffronloom",
    "quillmarsh",
    "ivorytrench",
  ];
  const expect = {
    main: `codex:${thread}`,
    sources: () => files(codexHome, (n) => n.startsWith("rollout-")),
    conversations: () =>
      files(codexHome, (n) => n.startsWith("rollout-")).map((f) =>
        `codex:${/([0-9a-f-]{36})\.jsonl/.exec(f)![1]}`
      ),
    words: (sub: string) => ({
      ...Object.fromEntries(own.map((w) => [w, `codex:${thread}`])),
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
    }),
    subagent: child,
    titles: () => ({ [`codex:${thread}`]: PROMPTS.start }),
    // The subagent's rollout names the thread that spawned it.
    parents: (sub: string) => ({ [`codex:${thread}`]: null, [sub]: `codex:${thread}` }),
  };
  await checkCapture(t, rig, line, expect);
  await resumeInTerminal(t, rig, `codex:${thread}`, rollout, "TUI under tmux");
  await step(
    "codex archive moves the rollout; logbook keeps it and marks it archived",
    async () => {
      const ran = await runAgent(rig, ["archive", thread]);
      ok(ran, "codex archive");
      assert.ok(
        rollout().includes(`${join(codexHome, "archived_sessions")}`),
        `archived: ${rollout()}`,
      );
      await capture(rig);
      const shown = await show(rig, `codex:${thread}`);
      assert.equal(shown.conversation.archived, true);
      assertFilesExact([shown], [rollout()]);
      assert.deepEqual(driftOf(await status(rig), "codex"), []);
    },
  );
}

// ---- OpenCode ----

const opencode = readyFor("opencode");
Deno.test({
  name:
    `OpenCode ${opencode.pin.version}: a session, a subagent, a fork and a compaction are captured exactly`,
  ignore: "reason" in opencode,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: (t) => conformance(t, opencode as Installed, driveOpencode),
});

async function driveOpencode(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const database = join(rig.home, ".local", "share", "opencode", "opencode.db");
  const query = <T>(sql: string, ...args: string[]): T[] => {
    const db = new DatabaseSync(database, { readOnly: true });
    try {
      return db.prepare(sql).all(...args) as T[];
    } finally {
      db.close();
    }
  };
  const sessionsNow = () =>
    query<{ id: string; parent_id: string | null; title: string }>(
      "SELECT id, parent_id, title FROM session ORDER BY time_created",
    );
  const sessionOf = (ran: { stdout: string }) =>
    ran.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
      .find((e) => typeof e.sessionID === "string")?.sessionID as string;
  let session = "";
  let fork = "";
  await step("opencode run starts a session that runs a tool", async () => {
    const ran = await runAgent(rig, ["run", "--format", "json", PROMPTS.start]);
    ok(ran, "opencode run");
    session = sessionOf(ran);
    assert.match(session, /^ses_/);
    assert.equal(
      query("SELECT 1 FROM part WHERE session_id = ? AND data LIKE '%copperwhistle%'", session)
        .length,
      1,
    );
  });
  await step("opencode run --session <id> continues the same session", async () => {
    ok(
      await runAgent(rig, ["run", "--format", "json", "--session", session, PROMPTS.resume]),
      "opencode run --session",
    );
    assert.equal(sessionsNow().length, 1);
  });
  await step("the task tool runs a subagent in a child session", async () => {
    ok(
      await runAgent(rig, ["run", "--format", "json", "--session", session, PROMPTS.delegate]),
      "opencode run (task)",
    );
    const children = sessionsNow().filter((s) => s.parent_id === session);
    assert.equal(children.length, 1);
  });
  await step("a turn over the model's context limit compacts the session", async () => {
    ok(
      await runAgent(rig, ["run", "--format", "json", "--session", session, PROMPTS.heavy]),
      "opencode run (heavy)",
    );
    ok(
      await runAgent(rig, [
        "run",
        "--format",
        "json",
        "--session",
        session,
        PROMPTS.afterCompaction,
      ]),
      "opencode run",
    );
    assert.ok(
      query("SELECT 1 FROM part WHERE session_id = ? AND data LIKE '%\"compaction\"%'", session)
        .length > 0,
    );
  });
  await step("opencode run --session <id> --fork forks it", async () => {
    const ran = await runAgent(rig, [
      "run",
      "--format",
      "json",
      "--session",
      session,
      "--fork",
      PROMPTS.fork,
    ]);
    ok(ran, "opencode run --fork");
    fork = sessionOf(ran);
    assert.notEqual(fork, session);
  });
  const child = () => sessionsNow().find((s) => s.parent_id === session)!.id;
  await checkCapture(t, rig, line, {
    main: `opencode:${session}`,
    sources: () => [],
    database,
    conversations: () => sessionsNow().map((s) => `opencode:${s.id}`),
    words: (sub) => ({
      quasarbeet: `opencode:${session}`,
      lanternfig: `opencode:${session}`,
      copperwhistle: `opencode:${session}`,
      marmalith: `opencode:${session}`,
      plumquartz: `opencode:${session}`,
      orchidvault: `opencode:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      quillmarsh: `opencode:${session}`,
      ivorytrench: `opencode:${session}`,
      velvetcrag: `opencode:${fork}`,
      amberloch: `opencode:${fork}`,
    }),
    subagent: () => `opencode:${child()}`,
    titles: () => Object.fromEntries(sessionsNow().map((s) => [`opencode:${s.id}`, s.title])),
    // A fork records no parent (its title says "(fork #1)"); a subagent's session does.
    parents: () =>
      Object.fromEntries(
        sessionsNow().map((
          s,
        ) => [`opencode:${s.id}`, s.parent_id ? `opencode:${s.parent_id}` : null]),
      ),
  });
  await resumeInTerminal(
    t,
    rig,
    `opencode:${session}`,
    () => database,
    "TUI under tmux",
    () =>
      query("SELECT 1 FROM part WHERE session_id = ? AND data LIKE '%saltmoraine%'", session)
        .length > 0,
  );
}

// ---- shared checks ----

interface Expect {
  main: string;
  /** The transcript files that must be captured byte for byte. */
  sources: () => string[];
  /** OpenCode's database, whose rows must be captured as the adapter defines raw. */
  database?: string;
  /** Every conversation the agent recorded, as logbook ids. */
  conversations: () => string[];
  /** The subagent's conversation id, when the agent wrote one. */
  subagent?: () => string;
  words: (subagent: string) => Record<string, string>;
  titles: (subagent: string) => Record<string, string>;
  parents: (subagent: string) => Record<string, string | null>;
}

async function checkCapture(t: Deno.TestContext, rig: Rig, line: ReportLine, expect: Expect) {
  const step = stepOf(t);
  let shown: Shown[] = [];
  const ids = () => expect.conversations();
  const sub = () =>
    expect.subagent?.() ?? ids().find((id) => id.includes("/agent-")) ?? expect.main;
  await step("logbook captures every conversation the agent recorded", async () => {
    await capture(rig);
    shown = [];
    for (const id of ids()) shown.push(await show(rig, id));
    assert.ok(shown.length >= 1);
  });
  await step("every source is byte-exact through show --json", () => {
    const all = [...expect.sources()];
    assertFilesExact(shown, all);
    if (expect.database) assert.ok(assertRowsExact(shown, expect.database) > 0);
    return Promise.resolve();
  });
  await step(
    "every word of every turn is found by search",
    () => assertFound(rig, line.agent, expect.words(sub())),
  );
  await step("project, cwd, parent links and titles are as the agent recorded them", () => {
    const project = rig.project;
    const titles = expect.titles(sub());
    const parents = expect.parents(sub());
    for (const s of shown) {
      const c = s.conversation;
      assert.equal(c.project, project, `${c.id}: project`);
      assert.equal(c.cwd, project, `${c.id}: cwd`);
      if (c.id in titles) assert.equal(c.title, titles[c.id], `${c.id}: title`);
      if (c.id in parents) assert.equal(c.parent, parents[c.id], `${c.id}: parent`);
      assert.equal(c.agentVersion, rig.installed.pin.version, `${c.id}: agent version`);
    }
    for (const id of Object.keys(parents)) {
      assert.ok(shown.some((s) => s.conversation.id === id), `${id} was captured`);
    }
    return Promise.resolve();
  });
  await step(
    "zero drift: every record type of this version is recognised",
    () => checkDrift(rig, shown, line),
  );
}

/**
 * Runs the command `logbook resume <id> --print` gives, in its directory, in a terminal (tmux):
 * types a prompt, waits for the answer in the transcript, quits; then the same conversation has
 * grown and no new one appeared.
 */
async function resumeInTerminal(
  t: Deno.TestContext,
  rig: Rig,
  id: string,
  transcript: () => string,
  how: string,
  answered: () => boolean = () => contains(transcript(), "saltmoraine"),
) {
  const step = stepOf(t);
  await step(`the command resume --print gives continues the conversation (${how})`, async () => {
    const before = await show(rig, id);
    const recorded = await countRecorded(rig);
    const captured = await capturedCount(rig);
    const command = await resumeCommand(rig, id);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    const driven = await driveTui(rig, command.argv, command.cwd, PROMPTS.terminal, answered);
    assert.ok(driven.ok, `no answer in the transcript; the screen:\n${driven.screen}`);
    await capture(rig);
    const after = await show(rig, id);
    assert.ok(after.records.length > before.records.length, "the conversation grew");
    await assertFound(rig, rig.installed.pin.agent, { saltmoraine: id, juniperveil: id });
    assert.equal(await countRecorded(rig), recorded, "the agent recorded no new conversation");
    assert.equal(await capturedCount(rig), captured, "logbook found no new conversation");
  });
}

/** How many conversations of this agent logbook holds. */
async function capturedCount(rig: Rig): Promise<number> {
  const counts = (await status(rig)).conversations as { agent: string; count: number }[];
  return counts.find((c) => c.agent === rig.installed.pin.agent)?.count ?? 0;
}

/** The conversations the agent has recorded now, for "no new one appeared". */
function countRecorded(rig: Rig): Promise<number> {
  switch (rig.installed.pin.agent) {
    case "claude":
      return Promise.resolve(
        files(join(rig.home, ".claude", "projects"), (n) => n.endsWith(".jsonl")).length,
      );
    case "codex":
      return Promise.resolve(
        files(join(rig.home, ".codex"), (n) => n.startsWith("rollout-")).length,
      );
    case "opencode": {
      const db = new DatabaseSync(join(rig.home, ".local", "share", "opencode", "opencode.db"), {
        readOnly: true,
      });
      try {
        return Promise.resolve(
          (db.prepare("SELECT count(*) AS n FROM session").get() as { n: number }).n,
        );
      } finally {
        db.close();
      }
    }
    default:
      throw new TypeError(`No count of recorded conversations for "${rig.installed.pin.agent}"`);
  }
}
