// What every agent's conformance test shares: the pinned agents installed (or why one was
// skipped), a rig and a model server per test, the steps' report, and the checks of what logbook
// captured. Each agent's driver is `drivers/<agent>.ts`; suite.ts runs one per pinned agent.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type AgentPin, PINNED } from "./agents.ts";
import { install, type Installed, latestVersion, type Skipped } from "./_install.ts";
import { startModelServer } from "./_model_server.ts";
import { PROMPTS, script } from "./_script.ts";
import { driveTui, logbook, makeRig, parseCommandLine, type Rig } from "./_rig.ts";
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

/** `LOGBOOK_CONFORMANCE_ONLY=gemini,kilo` runs those agents alone (while working on one). */
const ONLY = Deno.env.get("LOGBOOK_CONFORMANCE_ONLY")?.split(",");

/** True for an agent this run drives. */
export function chosen(agent: string): boolean {
  return !ONLY || ONLY.includes(agent);
}

async function pinsToRun(): Promise<(AgentPin | Skipped)[]> {
  const pins = PINNED.filter((pin) => chosen(pin.agent));
  if (!LATEST) return pins;
  return await Promise.all(pins.map(async (pin) => {
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

export function appendReport(line: ReportLine): void {
  if (REPORT) Deno.writeTextFileSync(REPORT, JSON.stringify(line) + "\n", { append: true });
}

export function readyFor(agent: AgentPin["agent"]): Installed | Skipped {
  return ready.find((r) => r.pin.agent === agent)!;
}

/** Runs one agent's conformance test: set up, drive, check, report. */
export async function conformance(
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

export type Step = (name: string, fn: () => Promise<void>) => Promise<boolean>;
export const stepOf = (t: Deno.TestContext) => (t as unknown as { step: Step }).step;

export function ok(ran: { code: number; stdout: string; stderr: string }, what: string): void {
  assert.equal(
    ran.code,
    0,
    `${what} exited ${ran.code}:\n${ran.stdout.slice(-2000)}\n${ran.stderr.slice(-2000)}`,
  );
}

/** Checks drift and the types seen, and puts both in the report. */
export async function checkDrift(rig: Rig, shown: Shown[], line: ReportLine): Promise<void> {
  const state = await status(rig);
  line.types = typesSeen(shown, line.agent);
  const drift = driftOf(state, line.agent);
  line.newTypes = drift;
  assert.deepEqual(drift, [], "status reports drift");
  assert.deepEqual(state.empty, [], "no source yielded nothing");
  assert.deepEqual(state.errors, [], "no source failed");
}

/** `resume <id> --print`: the directory and argv logbook would run. */
export async function resumeCommand(
  rig: Rig,
  id: string,
): Promise<{ cwd: string; argv: string[] }> {
  const out = await logbook(rig, "resume", [id, "--print"], rig.home);
  ok(out, "resume --print");
  return parseCommandLine(out.stdout.trim(), rig.home);
}

export function files(dir: string, match: (name: string) => boolean): string[] {
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

export function contains(path: string, word: string): boolean {
  try {
    return Deno.readTextFileSync(path).includes(word);
  } catch {
    return false;
  }
}

// ---- shared checks ----

export interface Expect {
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
  /** The version the agent records, when it is not the pinned one (Droid records its format's). */
  version?: string;
}

export async function checkCapture(
  t: Deno.TestContext,
  rig: Rig,
  line: ReportLine,
  expect: Expect,
) {
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
      const version = expect.version ?? rig.installed.pin.version;
      assert.equal(c.agentVersion, version, `${c.id}: agent version`);
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
export async function resumeInTerminal(
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
export async function capturedCount(rig: Rig): Promise<number> {
  const counts = (await status(rig)).conversations as { agent: string; count: number }[];
  return counts.find((c) => c.agent === rig.installed.pin.agent)?.count ?? 0;
}

/** The conversations the agent has recorded now, for "no new one appeared". */
export function countRecorded(rig: Rig): Promise<number> {
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
