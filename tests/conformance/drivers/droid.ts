// How the conformance suite drives Factory Droid (lib/agents.ts pins its version). `droid exec`
// runs offline against a custom model; its resume does not (`exec -s` fetches the session from
// Factory's API, the terminal UI asks for a login first), so the resume command `resume --print`
// gives is checked, not run.

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { PROMPTS, RESUME, START } from "../_script.ts";
import { DROID_MODEL, type Rig, runAgent } from "../_rig.ts";
import { checkCapture, files, ok, type ReportLine, resumeCommand, stepOf } from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Factory Droid ${version}: a session with a tool call is captured exactly; its resume command is printed`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const sessions = join(rig.home, ".factory", "sessions");
  // `droid exec` offers no shell the model server knows by name: the model reads the file.
  rig.server.script.plans = [
    { ...START, steps: [{ kind: "read", path: join(rig.project, "notes.txt") }] },
    RESUME,
  ];
  let session = "";
  const transcript = () => files(sessions, (n) => n === `${session}.jsonl`)[0]!;
  await step("droid exec starts a session that runs a tool", async () => {
    ok(await runAgent(rig, ["exec", "-m", DROID_MODEL, PROMPTS.start]), "droid exec");
    const found = files(sessions, (n) => n.endsWith(".jsonl"));
    assert.equal(found.length, 1);
    session = basename(found[0]!, ".jsonl");
    assert.match(Deno.readTextFileSync(transcript()), /copperwhistle/);
  });
  const key = () => `droid:${session}`;
  await checkCapture(t, rig, line, {
    main: key(),
    sources: () => [transcript()],
    conversations: () => [key()],
    subagent: () => key(),
    words: () => ({
      quasarbeet: key(),
      lanternfig: key(),
      copperwhistle: key(),
      marmalith: key(),
    }),
    titles: () => ({ [key()]: PROMPTS.start }),
    parents: () => ({ [key()]: null }),
    // Droid's session files name their format's version, not the program's.
    agentVersion: "session-v2",
  });
  await step("resume --print gives droid --resume <id> in the session's directory", async () => {
    const command = await resumeCommand(rig, `droid:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.deepEqual(command.argv, ["droid", "--resume", session]);
  });
}
