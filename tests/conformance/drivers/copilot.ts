// How the conformance suite drives GitHub Copilot CLI (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { join } from "node:path";
import { PROMPTS } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { capture } from "../_checks.ts";
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
  `GitHub Copilot CLI ${version}: a session, its resume and an inline subagent are captured exactly`;

/** One prompt, never asking: the flags every run adds to its argv. */
const PROMPT_FLAGS = ["--allow-all-tools", "--no-auto-update"];

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const states = join(rig.home, ".copilot", "session-state");
  const sessions = () =>
    [...Deno.readDirSync(states)].filter((e) => e.isDirectory && e.name[0] !== ".").map((e) =>
      e.name
    );
  let session = "";
  const events = () => join(states, session, "events.jsonl");
  /** Runs the argv `logbook resume <id> --print` gives, with one prompt. */
  const resumed = async (prompt: string) => {
    await capture(rig);
    const command = await resumeCommand(rig, `copilot:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    return await runAgent(rig, [...command.argv.slice(1), "-p", prompt, ...PROMPT_FLAGS]);
  };
  await step("copilot -p starts a session that runs a tool", async () => {
    ok(await runAgent(rig, ["-p", PROMPTS.start, ...PROMPT_FLAGS]), "copilot -p");
    const found = sessions();
    assert.equal(found.length, 1, `one session: ${found.join(", ")}`);
    session = found[0]!;
    assert.ok(contains(events(), "copperwhistle"), "the tool's output is in events.jsonl");
  });
  await step("the argv resume --print gives continues the same session", async () => {
    const before = Deno.statSync(events()).size;
    ok(await resumed(PROMPTS.resume), "copilot --resume");
    assert.ok(Deno.statSync(events()).size > before, "events.jsonl grew");
    assert.ok(contains(events(), "plumquartz"));
    assert.deepEqual(sessions(), [session], "no new session");
  });
  await step("the task tool runs a subagent inline in the session's events", async () => {
    ok(await resumed(PROMPTS.delegate), "copilot --resume (task)");
    assert.ok(contains(events(), "tessellark"), "the subagent answered");
    assert.ok(contains(events(), "orchidvault"), "the session answered after it");
    assert.deepEqual(sessions(), [session], "no new session");
  });
  const subagent = () => {
    const agentId = Deno.readTextFileSync(events()).split("\n").filter((l) => l.trim())
      .map((l) => JSON.parse(l)).find((r) => r.type === "subagent.started").agentId as string;
    return `copilot:${session}/agent-${agentId}`;
  };
  const main = () => `copilot:${session}`;
  await checkCapture(t, rig, line, {
    main: main(),
    sources: () => files(states, (n) => n === "events.jsonl"),
    conversations: () => [main(), subagent()],
    words: (sub) => ({
      quasarbeet: main(),
      lanternfig: main(),
      copperwhistle: main(),
      marmalith: main(),
      cobaltwren: main(),
      plumquartz: main(),
      zephyrkiln: main(),
      orchidvault: main(),
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
    }),
    subagent,
    // workspace.yaml names the session by its first prompt; the subagent by its task.
    titles: (sub) => ({ [main()]: PROMPTS.start, [sub]: "Inspect the notes" }),
    parents: (sub) => ({ [main()]: null, [sub]: main() }),
  });
}
