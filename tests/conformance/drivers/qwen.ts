// How the conformance suite drives qwen (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { DELEGATE, PROMPTS, START } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { capture } from "../_checks.ts";
import { logbook, parseCommandLine } from "../_rig.ts";
import {
  checkCapture,
  contains,
  files,
  ok,
  type ReportLine,
  resumeCommand,
  stepOf,
} from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Qwen Code ${version}: a chat, its resume and fork by the commands logbook gives, and a subagent are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const projects = join(rig.home, ".qwen", "projects");
  // Qwen Code offers no shell tool unless an approval mode allows one: the model reads the
  // notes with its file tool instead.
  const plans = rig.server.script.plans;
  const start = plans.findIndex((plan) => plan.id === START.id);
  plans[start] = { ...START, steps: [{ kind: "read", path: join(rig.project, "notes.txt") }] };
  let session = "";
  const chat = () => files(projects, (n) => n === `${session}.jsonl`)[0]!;
  const chats = () => files(projects, (n) => n.endsWith(".jsonl") && !n.startsWith("agent-"));
  const subagents = () => files(projects, (n) => n.startsWith("agent-") && n.endsWith(".jsonl"));
  await step("qwen <prompt> starts a chat that runs a tool", async () => {
    ok(await runAgent(rig, ["--auth-type", "openai", PROMPTS.start]), "qwen");
    const [path] = chats();
    assert.ok(path, "a chat was recorded");
    session = basename(path, ".jsonl");
    assert.equal(basename(dirname(path)), "chats");
    assert.ok(contains(chat(), "copperwhistle"), "the tool's output is in the chat");
  });
  // The argv `logbook resume <id> --print` gives, the prompt after it (a one-shot run).
  let resume: string[] = [];
  await step("the command resume --print gives continues the same chat", async () => {
    await capture(rig);
    const command = await resumeCommand(rig, `qwen:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    resume = command.argv.slice(1);
    const before = Deno.statSync(chat()).size;
    ok(await runAgent(rig, [...resume, PROMPTS.resume]), `qwen ${resume.join(" ")}`);
    assert.ok(Deno.statSync(chat()).size > before, "the chat grew");
    assert.equal(chats().length, 1, "no other chat");
    assert.ok(contains(chat(), "plumquartz"));
  });
  await step("the agent tool runs a subagent with a transcript of its own", async () => {
    ok(await runAgent(rig, [...resume, PROMPTS.delegate]), "qwen (subagent)");
    assert.equal(subagents().length, 1, "one subagent transcript");
    assert.ok(contains(subagents()[0]!, "tessellark"), "the subagent answered");
    assert.ok(contains(chat(), DELEGATE.answer), "the parent answered after it");
  });
  let fork = "";
  await step("the command fork --print gives copies the chat into a new one", async () => {
    await capture(rig);
    const printed = await logbook(rig, "fork", [`qwen:${session}`, "--print"], rig.home);
    ok(printed, "fork --print");
    const command = parseCommandLine(printed.stdout.trim(), rig.home);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    ok(await runAgent(rig, [...command.argv.slice(1), PROMPTS.fork]), "qwen (fork)");
    const forks = chats().filter((f) => basename(f, ".jsonl") !== session);
    assert.equal(forks.length, 1, "one new chat");
    fork = basename(forks[0]!, ".jsonl");
    assert.ok(contains(forks[0]!, '"forkedFrom"'), "its copies name the original");
    assert.ok(contains(forks[0]!, "amberloch"), "the fork's own turn");
  });
  const child = () => {
    const agent = /^agent-(.+)\.jsonl$/.exec(basename(subagents()[0]!))![1];
    return `qwen:${session}/agent-${agent}`;
  };
  await checkCapture(t, rig, line, {
    main: `qwen:${session}`,
    sources: () => [...chats(), ...subagents()],
    conversations: () => [
      ...chats().map((f) => `qwen:${basename(f, ".jsonl")}`),
      ...subagents().map((f) => `qwen:${session}/${basename(f, ".jsonl")}`),
    ],
    words: (sub) => ({
      quasarbeet: `qwen:${session}`,
      lanternfig: `qwen:${session}`,
      marmalith: `qwen:${session}`,
      cobaltwren: `qwen:${session}`,
      plumquartz: `qwen:${session}`,
      zephyrkiln: `qwen:${session}`,
      orchidvault: `qwen:${session}`,
      copperwhistle: `qwen:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      velvetcrag: `qwen:${fork}`,
      amberloch: `qwen:${fork}`,
    }),
    subagent: child,
    titles: (sub) => ({
      [`qwen:${session}`]: PROMPTS.start,
      // A subagent is titled from its `.meta.json`: its type and the task's description.
      [sub]: "general-purpose: Inspect the notes",
    }),
    // A fork names the chat it was copied from.
    parents: (sub) => ({
      [`qwen:${session}`]: null,
      [sub]: `qwen:${session}`,
      [`qwen:${fork}`]: `qwen:${session}`,
    }),
  });
  await step("the fork's copies are found once, in the original chat", async () => {
    for (const word of ["quasarbeet", "marmalith", "plumquartz", "orchidvault"]) {
      const out = await logbook(rig, "search", [word, "--agent", "qwen", "--json"]);
      ok(out, `search ${word}`);
      const hits = out.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation);
      assert.deepEqual(hits, [`qwen:${session}`], word);
    }
  });
}
