// How the conformance suite drives opencode (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { PROMPTS } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { checkCapture, ok, type ReportLine, resumeInTerminal, stepOf } from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `OpenCode ${version}: a session, a subagent, a fork and a compaction are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
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
