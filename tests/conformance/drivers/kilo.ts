// How the conformance suite drives the Kilo Code CLI (lib/agents.ts pins its version): one-shot
// `kilo run` turns, the resume with the arguments `resume --print` gives.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { agentSpec } from "../../../lib/agents.ts";
import { PROMPTS } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { capture } from "../_checks.ts";
import {
  checkCapture,
  ok,
  type ReportLine,
  resumeCommand,
  resumeInTerminal,
  stepOf,
} from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Kilo Code ${version}: a session, its resume, a subagent and a fork are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const database = join(rig.home, ".local", "share", "kilo", "kilo.db");
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
  const holds = (session: string, word: string) =>
    query("SELECT 1 FROM part WHERE session_id = ? AND data LIKE ?", session, `%${word}%`)
      .length > 0;
  // `kilo run` is the one-shot form of the terminal UI's arguments.
  const run = ["run", "--auto", "--format", "json"];
  let session = "";
  let fork = "";
  await step("kilo run starts a session that runs a tool", async () => {
    const ran = await runAgent(rig, [...run, PROMPTS.start]);
    ok(ran, "kilo run");
    session = sessionOf(ran);
    assert.match(session, /^ses_/);
    assert.ok(holds(session, "copperwhistle"), "the tool's output is in the session");
  });
  await step("kilo run with the arguments resume --print gives continues the session", async () => {
    // logbook resumes what it has captured.
    await capture(rig);
    const command = await resumeCommand(rig, `kilo:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.deepEqual(command.argv, ["kilo", ...agentSpec("kilo").cli.resume(session)]);
    ok(await runAgent(rig, [...run, ...command.argv.slice(1), PROMPTS.resume]), "kilo run -s");
    assert.equal(sessionsNow().length, 1);
    assert.ok(holds(session, "plumquartz"), "the resumed turn is in the same session");
  });
  await step("the task tool runs a subagent in a child session", async () => {
    ok(
      await runAgent(rig, [...run, "--session", session, PROMPTS.delegate]),
      "kilo run (task)",
    );
    const children = sessionsNow().filter((s) => s.parent_id === session);
    assert.equal(children.length, 1);
  });
  await step("kilo run with the fork arguments copies the session into a new one", async () => {
    const ran = await runAgent(rig, [
      ...run,
      ...agentSpec("kilo").cli.fork(session)!,
      PROMPTS.fork,
    ]);
    ok(ran, "kilo run --fork");
    fork = sessionOf(ran);
    assert.notEqual(fork, session);
    assert.ok(holds(fork, "amberloch"));
  });
  const child = () => sessionsNow().find((s) => s.parent_id === session)!.id;
  await checkCapture(t, rig, line, {
    main: `kilo:${session}`,
    sources: () => [],
    database,
    conversations: () => sessionsNow().map((s) => `kilo:${s.id}`),
    words: (sub) => ({
      quasarbeet: `kilo:${session}`,
      lanternfig: `kilo:${session}`,
      copperwhistle: `kilo:${session}`,
      marmalith: `kilo:${session}`,
      cobaltwren: `kilo:${session}`,
      plumquartz: `kilo:${session}`,
      zephyrkiln: `kilo:${session}`,
      orchidvault: `kilo:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      velvetcrag: `kilo:${fork}`,
      amberloch: `kilo:${fork}`,
    }),
    subagent: () => `kilo:${child()}`,
    // Kilo's placeholder title gives way to the first prompt, as typed (not as `run` quoted it).
    titles: () =>
      Object.fromEntries(
        sessionsNow().flatMap((s) =>
          !/^(New|Child) session - /.test(s.title)
            ? [[`kilo:${s.id}`, s.title]]
            : s.id === session
            ? [[`kilo:${s.id}`, PROMPTS.start]]
            : []
        ),
      ),
    parents: () =>
      Object.fromEntries(
        sessionsNow().map((s) => [`kilo:${s.id}`, s.parent_id ? `kilo:${s.parent_id}` : null]),
      ),
  });
  // On a loaded machine Kilo's terminal UI stops on a question ("It is taking a long time to
  // initialize the snapshot system… Do you want to disable Snapshots for this repository?") and
  // sends nothing: its turn runs with snapshots off (`snapshot: false`, Kilo's and OpenCode's).
  const config = JSON.parse(rig.env.KILO_CONFIG_CONTENT!);
  rig.env.KILO_CONFIG_CONTENT = JSON.stringify({ ...config, snapshot: false });
  await resumeInTerminal(
    t,
    rig,
    `kilo:${session}`,
    () => database,
    "TUI under tmux",
    () => holds(session, "saltmoraine"),
  );
}
