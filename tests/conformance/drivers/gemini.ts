// How the conformance suite drives gemini (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { DELEGATE, PROMPTS, RESUME, START } from "../_script.ts";
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

/** The prompt the parent hands its subagent: the subagent's first prompt, and its title. */
const SUBTASK = "Subtask glimmerfane: read the notes and report.";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Gemini CLI ${version}: a session, its resumes and a subagent are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  // Gemini CLI offers no shell tool in -p mode: the model reads the notes with its file tool.
  const read = { kind: "read", path: join(rig.project, "notes.txt") } as const;
  rig.server.script.plans = rig.server.script.plans.map((plan) =>
    plan.id === START.id ? { ...START, steps: [read] } : plan
  );
  const tmp = join(rig.home, ".gemini", "tmp");
  const logs = () => files(tmp, (n) => n.endsWith(".jsonl"));
  const sessionOf = (log: string) =>
    JSON.parse(Deno.readTextFileSync(log).split("\n")[0]!).sessionId as string;
  let session = "";
  /** The session's own log: the one whose turns hold the first prompt. */
  const log = () =>
    logs().find((f) => basename(f).startsWith("session-") && contains(f, "quasarbeet"))!;
  const child = () => logs().find((f) => basename(dirname(f)) === session);
  /** `gemini` with the argv `logbook resume <id> --print` gives, one prompt, then it exits. */
  const resumed = async (prompt: string, what: string) => {
    // logbook resumes what it has captured.
    await capture(rig);
    const command = await resumeCommand(rig, `gemini:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    ok(
      await runAgent(rig, [...command.argv.slice(1), "-p", prompt, "--output-format", "text"]),
      what,
    );
  };
  await step("gemini -p starts a session that reads a file", async () => {
    ok(
      await runAgent(rig, ["-p", PROMPTS.start, "--output-format", "text"]),
      "gemini -p",
    );
    session = sessionOf(log());
    assert.ok(
      contains(log(), "copperwhistle"),
      `the tool's output is in the log:\n${Deno.readTextFileSync(log())}`,
    );
  });
  await step("the resume command logbook gives continues the same session", async () => {
    await resumed(PROMPTS.resume, "gemini --resume");
    assert.ok(contains(log(), "plumquartz"), "the resumed turn is in the session's log");
    assert.deepEqual([...new Set(logs().map(sessionOf))], [session], "no other session");
  });
  await step("invoke_agent runs a subagent in a log of its own", async () => {
    await resumed(PROMPTS.delegate, "gemini --resume (subagent)");
    assert.ok(child(), "the subagent's log");
    assert.ok(contains(child()!, "tessellark"), "the subagent answered");
    assert.ok(contains(log(), DELEGATE.answer), "the parent answered after it");
  });
  const sub = () => `gemini:${sessionOf(child()!)}`;
  const main = () => `gemini:${session}`;
  await checkCapture(t, rig, line, {
    main: main(),
    // Every log, the resumes' stray files (a header and the session context) included.
    sources: logs,
    conversations: () => [...new Set(logs().map((f) => `gemini:${sessionOf(f)}`))],
    words: (subagent) => ({
      quasarbeet: main(),
      lanternfig: main(),
      copperwhistle: main(),
      marmalith: main(),
      cobaltwren: main(),
      plumquartz: main(),
      zephyrkiln: main(),
      orchidvault: main(),
      glimmerfane: subagent,
      driftmallow: subagent,
      tessellark: subagent,
    }),
    subagent: sub,
    titles: (subagent) => ({ [main()]: PROMPTS.start, [subagent]: SUBTASK }),
    // The subagent's log is in a folder named after the session that ran it.
    parents: (subagent) => ({ [main()]: null, [subagent]: main() }),
    // Gemini CLI's logs record no version of the CLI that wrote them.
    agentVersion: null,
  });
  await step(
    "show gives each message of the session once, in order, across both resumes",
    async () => {
      const shown = await show(rig, main());
      const messages =
        (shown.records as unknown as { kind: string; role: string | null; text: string }[])
          .filter((r) => r.kind === "message" && r.text.trim() !== "")
          .map((r) => `${r.role}: ${r.text}`);
      assert.deepEqual(messages, [
        `user: ${PROMPTS.start}`,
        `assistant: ${START.answer}`,
        `user: ${PROMPTS.resume}`,
        `assistant: ${RESUME.answer}`,
        `user: ${PROMPTS.delegate}`,
        `assistant: ${DELEGATE.answer}`,
      ]);
    },
  );
}
