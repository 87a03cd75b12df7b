// How the conformance suite drives claude (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { DELEGATE, PROMPTS, START, TITLE } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import {
  checkCapture,
  contains,
  files,
  ok,
  type ReportLine,
  resumeInTerminal,
  stepOf,
} from "../_harness.ts";

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Claude Code ${version}: sessions, a subagent and a compaction are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const projects = join(rig.home, ".claude", "projects");
  const allowed = ["--allowedTools", "Bash Read Agent"];
  let session = "";
  const transcript = () => files(projects, (n) => n === `${session}.jsonl`)[0]!;
  await step("claude -p starts a session that runs a tool", async () => {
    const ran = await runAgent(rig, [
      "-p",
      ...allowed,
      "--output-format",
      "json",
      "--name",
      TITLE,
      PROMPTS.start,
    ]);
    ok(ran, "claude -p");
    const result = JSON.parse(ran.stdout.trim().split("\n").at(-1)!);
    session = result.session_id;
    assert.match(session, /^[0-9a-f-]{36}$/);
    assert.equal(result.result, START.answer);
    assert.ok(contains(transcript(), "copperwhistle"), "the tool's output is in the transcript");
  });
  await step("claude --resume <id> -p continues the same transcript", async () => {
    const before = Deno.statSync(transcript()).size;
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, PROMPTS.resume]),
      "claude --resume -p",
    );
    assert.ok(Deno.statSync(transcript()).size > before);
    assert.equal(files(projects, (n) => /^[0-9a-f-]{36}\.jsonl$/.test(n)).length, 1);
  });
  await step("the Agent (Task) tool spawns a subagent with a transcript of its own", async () => {
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, PROMPTS.delegate]),
      "claude -p (subagent)",
    );
    const subagents = files(projects, (n) => n.startsWith("agent-") && n.endsWith(".jsonl"));
    assert.equal(subagents.length, 1, "one subagent transcript");
    assert.ok(contains(subagents[0]!, "tessellark"));
    assert.ok(contains(transcript(), DELEGATE.answer));
  });
  await step("/compact in -p compacts the session", async () => {
    ok(
      await runAgent(rig, ["-p", ...allowed, "--resume", session, "/compact"]),
      "claude -p /compact",
    );
    assert.ok(contains(transcript(), "compact_boundary"));
    assert.ok(contains(transcript(), "quillmarsh"));
  });
  await checkCapture(t, rig, line, {
    main: `claude:${session}`,
    sources: () => files(projects, (n) => n.endsWith(".jsonl")),
    conversations: () =>
      files(projects, (n) => n.endsWith(".jsonl")).map((f) => {
        const agent = /^agent-(.+)\.jsonl$/.exec(basename(f));
        return agent ? `claude:${session}/agent-${agent[1]}` : `claude:${basename(f, ".jsonl")}`;
      }),
    words: (sub) => ({
      quasarbeet: `claude:${session}`,
      lanternfig: `claude:${session}`,
      copperwhistle: `claude:${session}`,
      marmalith: `claude:${session}`,
      cobaltwren: `claude:${session}`,
      plumquartz: `claude:${session}`,
      zephyrkiln: `claude:${session}`,
      orchidvault: `claude:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      quillmarsh: `claude:${session}`,
    }),
    titles: (sub) => {
      const meta = JSON.parse(
        Deno.readTextFileSync(files(projects, (n) => n.endsWith(".meta.json"))[0]!),
      );
      return { [`claude:${session}`]: TITLE, [sub]: `${meta.agentType}: ${meta.description}` };
    },
    parents: (sub) => ({ [`claude:${session}`]: null, [sub]: `claude:${session}` }),
  });
  await resumeInTerminal(t, rig, `claude:${session}`, transcript, "TUI under tmux");
}
