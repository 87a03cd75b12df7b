// How the conformance suite drives codex (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { join } from "node:path";
import { DELEGATE, PROMPTS } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { assertFilesExact, capture, driftOf, show, status } from "../_checks.ts";
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
  `Codex ${version}: a session, its resume, a subagent, a compaction and its archive are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const codexHome = join(rig.home, ".codex");
  const sessions = join(codexHome, "sessions");
  const exec = ["exec", "--strict-config", "--json", "--skip-git-repo-check"];
  let thread = "";
  const rollout = () => files(codexHome, (n) => n.startsWith("rollout-") && n.includes(thread))[0]!;
  await step("codex exec starts a session that runs a shell command", async () => {
    const ran = await runAgent(rig, [...exec, PROMPTS.start]);
    ok(ran, "codex exec");
    const started = ran.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    )
      .find((e) => e.type === "thread.started");
    thread = started.thread_id;
    assert.ok(contains(rollout(), "copperwhistle"), "the command's output is in the rollout");
  });
  await step("codex exec resume <id> continues the same rollout", async () => {
    const before = Deno.statSync(rollout()).size;
    ok(await runAgent(rig, [...exec, "resume", thread, PROMPTS.resume]), "codex exec resume");
    assert.ok(Deno.statSync(rollout()).size > before);
    assert.equal(files(sessions, (n) => n.startsWith("rollout-")).length, 1);
  });
  await step("spawn_agent runs a subagent in a rollout of its own", async () => {
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.delegate]),
      "codex exec resume (subagent)",
    );
    const rollouts = files(sessions, (n) => n.startsWith("rollout-"));
    assert.equal(rollouts.length, 2, "the subagent's rollout");
    const child = rollouts.find((f) => !f.includes(thread))!;
    assert.ok(contains(child, "tessellark"), "the subagent answered");
    assert.ok(contains(rollout(), DELEGATE.answer), "the parent answered after it");
  });
  await step("a turn over model_auto_compact_token_limit compacts the session", async () => {
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.heavy]),
      "codex exec resume (heavy)",
    );
    ok(
      await runAgent(rig, [...exec, "resume", thread, PROMPTS.afterCompaction]),
      "codex exec resume",
    );
    assert.ok(contains(rollout(), `"type":"compacted"`), "a compacted line");
    assert.ok(contains(rollout(), "ivorytrench"));
  });
  const child = () => {
    const file = files(sessions, (n) => n.startsWith("rollout-") && !n.includes(thread))[0]!;
    return `codex:${/([0-9a-f-]{36})\.jsonl/.exec(file)![1]}`;
  };
  const own = [
    "quasarbeet",
    "lanternfig",
    "copperwhistle",
    "marmalith",
    "cobaltwren",
    "plumquartz",
    "zephyrkiln",
    "orchidvault",
    "saffronloom",
    "quillmarsh",
    "ivorytrench",
  ];
  const expect = {
    main: `codex:${thread}`,
    sources: () => files(codexHome, (n) => n.startsWith("rollout-")),
    conversations: () =>
      files(codexHome, (n) => n.startsWith("rollout-")).map((f) =>
        `codex:${/([0-9a-f-]{36})\.jsonl/.exec(f)![1]}`
      ),
    words: (sub: string) => ({
      ...Object.fromEntries(own.map((w) => [w, `codex:${thread}`])),
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
    }),
    subagent: child,
    titles: () => ({ [`codex:${thread}`]: PROMPTS.start }),
    // The subagent's rollout names the thread that spawned it.
    parents: (sub: string) => ({ [`codex:${thread}`]: null, [sub]: `codex:${thread}` }),
  };
  await checkCapture(t, rig, line, expect);
  await resumeInTerminal(t, rig, `codex:${thread}`, rollout, "TUI under tmux");
  await step(
    "codex archive moves the rollout; logbook keeps it and marks it archived",
    async () => {
      const ran = await runAgent(rig, ["archive", thread]);
      ok(ran, "codex archive");
      assert.ok(
        rollout().includes(`${join(codexHome, "archived_sessions")}`),
        `archived: ${rollout()}`,
      );
      await capture(rig);
      const shown = await show(rig, `codex:${thread}`);
      assert.equal(shown.conversation.archived, true);
      assertFilesExact([shown], [rollout()]);
      assert.deepEqual(driftOf(await status(rig), "codex"), []);
    },
  );
}
