// How the conformance suite drives the Continue CLI, `cn` (lib/agents.ts pins its version).
// `cn` offers no subagent tool and records no version of itself; it keeps each session as one
// JSON document it rewrites whole, which logbook stores as rows (lib/sources/continue_text.ts):
// byte-exact here means every item of every document is a record's bytes, exactly.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { historySpans } from "../../../lib/sources/continue.ts";
import { PROMPTS } from "../_script.ts";
import { continueConfig, logbook, parseCommandLine, type Rig, runAgent } from "../_rig.ts";
import { capture, show } from "../_checks.ts";
import {
  checkCapture,
  contains,
  files,
  ok,
  type ReportLine,
  resumeCommand,
  resumeInTerminal,
  stepOf,
} from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Continue CLI ${version}: a session, its resume (the newest) and a fork are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const sessions = join(rig.home, ".continue", "sessions");
  const documents = () => files(sessions, (n) => n.endsWith(".json") && n !== "sessions.json");
  const idOf = (path: string) => /([0-9a-f-]{36})\.json$/.exec(path)![1]!;
  const headless = (prompt: string) => ["--config", continueConfig(rig), "-p", prompt, "--auto"];
  let session = "";
  let fork = "";
  const document = () => join(sessions, `${session}.json`);
  await step("cn -p starts a session whose model reads a file with a tool", async () => {
    ok(await runAgent(rig, headless(PROMPTS.start)), "cn -p");
    assert.equal(documents().length, 1);
    session = idOf(documents()[0]!);
    assert.ok(contains(document(), "copperwhistle"), "the tool's output is in the document");
  });
  await step("the command resume --print gives continues the same session", async () => {
    await capture(rig);
    const command = await resumeCommand(rig, `continue:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.deepEqual(command.argv, [rig.installed.pin.bin, "--resume"]);
    ok(await runAgent(rig, [...command.argv.slice(1), ...headless(PROMPTS.resume)]), "cn resume");
    assert.equal(documents().length, 1, "no new session");
    assert.ok(contains(document(), "plumquartz"), "the resumed turn is in the same document");
  });
  await step("the command fork --print gives forks it into a new session", async () => {
    await capture(rig);
    const out = await logbook(rig, "fork", [`continue:${session}`, "--print"], rig.home);
    ok(out, "fork --print");
    const command = parseCommandLine(out.stdout.trim(), rig.home);
    assert.deepEqual(command.argv, [rig.installed.pin.bin, "--fork", session]);
    ok(await runAgent(rig, [...command.argv.slice(1), ...headless(PROMPTS.fork)]), "cn --fork");
    assert.equal(documents().length, 2);
    fork = idOf(documents().find((d) => idOf(d) !== session)!);
  });
  await checkCapture(t, rig, line, {
    main: `continue:${session}`,
    // Documents are stored as rows, checked below.
    sources: () => [],
    conversations: () => documents().map((d) => `continue:${idOf(d)}`),
    words: () => ({
      quasarbeet: `continue:${session}`,
      lanternfig: `continue:${session}`,
      copperwhistle: `continue:${session}`,
      marmalith: `continue:${session}`,
      cobaltwren: `continue:${session}`,
      plumquartz: `continue:${session}`,
      velvetcrag: `continue:${fork}`,
      amberloch: `continue:${fork}`,
    }),
    // `-p` sessions stay "Untitled Session": their first prompt names them.
    titles: () => ({
      [`continue:${session}`]: PROMPTS.start,
      [`continue:${fork}`]: PROMPTS.fork,
    }),
    // A fork names nothing of its parent; logbook tells it by the items it copied.
    parents: () => ({
      [`continue:${session}`]: null,
      [`continue:${fork}`]: `continue:${session}`,
    }),
    agentVersion: null,
  });
  await step("every item of every document is a record's bytes, exactly", async () => {
    for (const path of documents()) {
      const shown = await show(rig, `continue:${idOf(path)}`);
      const raws = shown.records.map((r) => Buffer.from(r.raw, "base64"));
      const file = Deno.readFileSync(path);
      const spans = historySpans(file);
      assert.ok(spans, `"${path}" has a history`);
      for (const [start, end] of spans.items) {
        const item = Buffer.from(file.subarray(start, end));
        assert.ok(
          raws.some((raw) => raw.subarray(raw.length - 2 - item.length, -2).equals(item)),
          `"${path}": an item at ${start} is no record's bytes`,
        );
      }
    }
  });
  await step(
    "the session that is not cn's newest is resumed in a fork (cn --resume cannot name it)",
    async () => {
      const command = await resumeCommand(rig, `continue:${session}`);
      assert.deepEqual(command.argv, [rig.installed.pin.bin, "--fork", session]);
    },
  );
  // The terminal UI finds no --config: it reads the default config.yaml instead, and asks for an
  // Anthropic API key until `.onboarding_complete` says it was set up.
  await Deno.copyFile(continueConfig(rig), join(rig.home, ".continue", "config.yaml"));
  await Deno.writeTextFile(join(rig.home, ".continue", ".onboarding_complete"), "");
  await resumeInTerminal(
    t,
    rig,
    `continue:${fork}`,
    () => join(sessions, `${fork}.json`),
    "TUI under tmux, the newest session",
  );
}
