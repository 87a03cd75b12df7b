// How the conformance suite drives Cline (lib/agents.ts pins its version). `cline "<prompt>"`
// runs one turn; its resume (`cline --id <id>`) opens the terminal UI, so it runs under tmux.
// Cline leaves a hub daemon running, started with the project as its cwd: the rig's clean-up
// ends it by pid.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DELEGATE, PROMPTS, RESUME, START, subtask } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { capture, show } from "../_checks.ts";
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
  `Cline ${version}: a session, its resume in the terminal and a subagent are captured, each message once`;

const handed = DELEGATE.steps[0]!;
const subtaskPrompt = handed.kind === "subagent" ? handed.prompt : "";

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const sessions = join(rig.home, ".cline", "data", "sessions");
  // Cline's tools are `read_files` and `run_commands`: the model reads the file.
  rig.server.script.plans = [
    { ...START, steps: [{ kind: "read", path: join(rig.project, "notes.txt") }] },
    RESUME,
    DELEGATE,
    subtask(rig.project),
  ];
  let session = "";
  const messages = () => join(sessions, session, `${session}.messages.json`);
  const agents = () => files(join(sessions, session), (n) => n.startsWith("agent_"));
  const child = () => {
    const name = agents()[0]!.split("/").at(-1)!.replace(/\.messages\.json$/, "");
    return `cline:${session}__${name}`;
  };
  await step("cline <prompt> starts a session that runs a tool", async () => {
    ok(await runAgent(rig, [PROMPTS.start]), "cline");
    const ids = [...Deno.readDirSync(sessions)].filter((e) => e.isDirectory).map((e) => e.name);
    assert.equal(ids.length, 1);
    session = ids[0]!;
    assert.ok(contains(messages(), "copperwhistle"));
  });
  let resumed = 0;
  await step("the command resume --print gives continues it in the terminal (tmux)", async () => {
    await capture(rig);
    const before = (await show(rig, `cline:${session}`)).records.length;
    const command = await resumeCommand(rig, `cline:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.deepEqual(command.argv, ["cline", "--id", session]);
    // One terminal session for both turns, as a person resumes and goes on.
    const screen = await inTerminal(rig, command.argv, command.cwd, [
      { text: PROMPTS.resume, done: () => contains(messages(), "plumquartz") },
      { text: PROMPTS.delegate, done: () => contains(messages(), "orchidvault") },
    ]);
    assert.equal(screen.ok, true, `no answer in the session; the screen:\n${screen.screen}`);
    assert.equal(agents().length, 1, "the subagent's messages document");
    await capture(rig);
    resumed = (await show(rig, `cline:${session}`)).records.length;
    assert.ok(resumed > before, "the conversation grew");
  });
  const key = () => `cline:${session}`;
  await checkCapture(t, rig, line, {
    main: key(),
    sources: () => [],
    conversations: () => [key(), child()],
    subagent: child,
    words: (sub) => ({
      quasarbeet: key(),
      lanternfig: key(),
      copperwhistle: key(),
      marmalith: key(),
      cobaltwren: key(),
      plumquartz: key(),
      zephyrkiln: key(),
      orchidvault: key(),
      glimmerfane: sub,
      driftmallow: sub,
    }),
    // A subagent is titled by its task: the prompt the model gave spawn_agent.
    titles: (sub) => ({ [key()]: PROMPTS.start, [sub]: subtaskPrompt }),
    parents: (sub) => ({ [key()]: null, [sub]: key() }),
  });
  await step("every message Cline kept is one record, equal to what it wrote", async () => {
    for (const [id, path] of [[key(), messages()], [child(), agents()[0]!]] as const) {
      const shown = await show(rig, id);
      const stored = shown.records.map((r) =>
        JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(r.raw), (c) => c.charCodeAt(0))))
      ).filter((row) => row.cline === "message").map((row) => row.message);
      const written = JSON.parse(Deno.readTextFileSync(path)).messages;
      assert.deepEqual(stored, written, id);
    }
  });
}

/**
 * Runs `argv` in `cwd` in a tmux pane with exactly the rig's environment, waits until Cline's
 * terminal UI shows the resumed session and its input box, then types each prompt and Enter and
 * waits for its answer in the session's files (at most two minutes each). Cline ignores an Enter
 * while it is still loading the session: a prompt still in the input box gets Enter again.
 */
async function inTerminal(
  rig: Rig,
  argv: string[],
  cwd: string,
  prompts: { text: string; done: () => boolean }[],
): Promise<{ ok: boolean; screen: string }> {
  const name = `conformance-cline-${Date.now()}`;
  const socket = join(rig.root, "tmux-cline.sock");
  const tmux = async (...args: string[]) =>
    new TextDecoder().decode(
      (await new Deno.Command("tmux", { args: ["-S", socket, ...args], stdout: "piped" })
        .output()).stdout,
    );
  const screen = () => tmux("capture-pane", "-p", "-t", name);
  const vars = Object.entries(rig.env).map(([k, v]) => `${k}=${v}`);
  const program = join(rig.installed.dir, "node_modules", ".bin", argv[0]!);
  await tmux(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    "160",
    "-y",
    "45",
    "-c",
    cwd,
    "env",
    "-i",
    ...vars,
    program,
    ...argv.slice(1),
  );
  const until = async (
    ready: (text: string) => boolean,
    ms: number,
    every?: () => Promise<void>,
  ) => {
    const deadline = Date.now() + ms;
    let polls = 0;
    while (Date.now() < deadline) {
      if (ready(await screen())) return true;
      await new Promise((r) => setTimeout(r, 500));
      if (every && ++polls % 20 === 0) await every();
    }
    return false;
  };
  try {
    // Loaded: the input box is there and the earlier turn is shown.
    const loaded = await until(
      (text) => text.includes("Ask anything") && text.includes("marmalith"),
      120_000,
    );
    if (!loaded) return { ok: false, screen: await screen() };
    for (const prompt of prompts) {
      await tmux("send-keys", "-t", name, "-l", prompt.text);
      await until((text) => text.includes(prompt.text), 10_000);
      await tmux("send-keys", "-t", name, "Enter");
      const waiting = async () => {
        const input = (await screen()).split("\n").find((l) => l.startsWith("❯ "));
        if (input?.includes(prompt.text)) await tmux("send-keys", "-t", name, "Enter");
      };
      if (!await until(() => prompt.done(), 120_000, waiting)) {
        return { ok: false, screen: await screen() };
      }
    }
    return { ok: true, screen: await screen() };
  } finally {
    await tmux("kill-server");
  }
}
