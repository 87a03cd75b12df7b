// Tests for lib/sessions/fork.ts: a logbook session forked from another agent's conversation
// through the gate.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../../commands/reindex.ts";
import { loadContext } from "../../../lib/context.ts";
import { createGate } from "../../../lib/gate/gate.ts";
import { projectOf } from "../../../lib/paths.ts";
import { forkConversation } from "../../../lib/sessions/fork.ts";
import { findRow, pickerRows, withHistoryStore } from "../../../lib/sessions/resume.ts";
import { SessionStore } from "../../../lib/sessions/records.ts";
import { captureIo } from "../../_helpers.ts";
import { world, writeClaudeSession } from "./_world.ts";

const KEY = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);
const gate = createGate();
const redact = (text: string) => gate.redactText(text);

Deno.test("forking another agent's conversation builds a logbook session through the gate", async () => {
  const { world: w, project } = await world();
  try {
    const sid = "44444444-4444-4444-8444-444444444444";
    writeClaudeSession(w, project, sid, [
      [`Deploy with ${KEY} on staging`, "Done, deployed."],
      ["Now roll back", "Rolled back."],
    ]);
    assert.equal(await reindex(["--quiet"], captureIo(), w.env), 0);
    const ctx = loadContext({ env: w.env });
    for (const incognito of [true, false]) {
      const sessions = new SessionStore(ctx.paths, { incognito });
      const fork = withHistoryStore(ctx, (store) => {
        const row = findRow(
          pickerRows(sessions, projectOf(project), { store, redact }).rows,
          sid,
          "fork",
        );
        return forkConversation({
          sessions,
          store: store!,
          row,
          gate: createGate(),
          now: Date.now(),
        });
      });
      assert.equal(fork.forkedFrom, `claude:${sid}`);
      assert.match(fork.title, /^Deploy with \[REDACTED:openai-key\] on staging \(fork\)$/);
      assert.deepEqual(fork.messages.map((m) => [m.role, m.content]), [
        ["user", "Deploy with [REDACTED:openai-key] on staging"],
        ["assistant", "Done, deployed."],
        ["user", "Now roll back"],
        ["assistant", "Rolled back."],
      ]);
      assert.equal(fork.cwd, project);
      const dir = join(ctx.paths.sessions, projectOf(project).key);
      if (incognito) {
        assert.throws(() => Deno.statSync(ctx.paths.sessions), Deno.errors.NotFound);
        continue;
      }
      const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
      assert.deepEqual(files, [`${fork.id}.audit.jsonl`, `${fork.id}.json`]);
      for (const f of files) assert.ok(!Deno.readTextFileSync(join(dir, f)).includes(KEY));
      const trail = JSON.parse(Deno.readTextFileSync(join(dir, `${fork.id}.audit.jsonl`)));
      assert.equal(trail.event, "fork");
      assert.equal(trail.from, `claude:${sid}`);
      // The message's key; the title's was redacted when the conversation was captured.
      assert.deepEqual(trail.disk.redacted, { "openai-key": 1 });
    }
  } finally {
    await w.cleanup();
  }
});
