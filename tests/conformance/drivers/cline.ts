// How the conformance suite drives Cline (lib/agents.ts pins its version). `cline "<prompt>"`
// runs one turn; its resume (`cline --id <id>`) opens the terminal UI, so it runs under tmux.
// Cline leaves a hub daemon running, started with the project as its cwd: the rig's clean-up
// ends it by pid.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DELEGATE, PROMPTS, RESUME, START, subtask } from "../_script.ts";
import { driveTui, type Rig, runAgent } from "../_rig.ts";
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
    const driven = await driveTui(
      rig,
      command.argv,
      command.cwd,
      PROMPTS.resume,
      () => contains(messages(), "plumquartz"),
    );
    assert.ok(driven.ok, `no answer in the session; the screen:\n${driven.screen}`);
    const again = await driveTui(
      rig,
      command.argv,
      command.cwd,
      PROMPTS.delegate,
      () => contains(messages(), "orchidvault"),
    );
    assert.ok(again.ok, `no answer in the session; the screen:\n${again.screen}`);
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
    titles: () => ({ [key()]: PROMPTS.start }),
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
