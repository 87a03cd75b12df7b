// `show --format` round trips: every message text of every fixture conversation, and of one
// conversation longer than an export's page (500 records, 512 KiB), is in each format.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { main as show } from "../../commands/show.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { captureIo, makeWorld, runCli, withStore, type World } from "../_helpers.ts";
import { allRecords, type ShownRecord, unescapeHtml, unescapeMarkdown } from "./_show.ts";
import { CONTEXT_SESSION, placeCodexContextRollout } from "../_codex_context.ts";

const FORMATS = ["md", "html", "json", "text"] as const;

/** The lines of a message's text that an export must hold (blank lines aside). */
function linesOf(text: string): string[] {
  return text.split("\n").map((line) => line.trim()).filter((line) => line.length > 0);
}

/** Asserts every line of every message text is in each export of `id`; returns the exports. */
async function assertRoundTrip(
  world: World,
  id: string,
  export_: (format: string) => Promise<string>,
): Promise<number> {
  const records = await allRecords(world, id);
  const messages = records.filter((r) => r.kind === "message" && r.text.trim());
  for (const format of FORMATS) {
    const out = await export_(format);
    if (format === "json") {
      const page = JSON.parse(out);
      assert.equal(page.next, null, `${id}: one JSON document`);
      assert.deepEqual(page.records.map((r: ShownRecord) => r.id), records.map((r) => r.id));
      assert.deepEqual(
        page.records.filter((r: ShownRecord) => r.kind === "message" && r.text.trim())
          .map((r: ShownRecord) => r.text),
        messages.map((m) => m.text),
      );
      continue;
    }
    const readable = format === "html"
      ? unescapeHtml(out)
      : format === "md"
      ? unescapeMarkdown(out)
      : out;
    for (const message of messages) {
      for (const line of linesOf(message.text)) {
        assert.ok(readable.includes(line), `${id} as ${format}: record ${message.id}: ${line}`);
      }
    }
  }
  return messages.length;
}

Deno.test("show --format holds every message text of every fixture conversation, in each format", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const ids = withStore(
      world,
      (store) =>
        (store.stmt("SELECT key FROM conversations ORDER BY key").all() as { key: string }[])
          .map((row) => row.key),
    );
    assert.ok(ids.length >= 20, `fixture conversations: ${ids.length}`);
    let checked = 0;
    for (const id of ids) {
      checked += await assertRoundTrip(world, id, async (format) => {
        const io = captureIo();
        assert.equal(await show([id, "--format", format], io, world.env), 0, io.stderr());
        return new TextDecoder().decode(io.bytes());
      });
    }
    assert.ok(checked >= 100, `message records checked: ${checked}`);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --format exports a conversation longer than one page whole (a real subprocess)", async () => {
  const world = await makeWorld();
  try {
    const session = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
    const cwd = join(world.dir, "work", "long");
    // 300 turns, 600 message records, about 1.3 MB: several of the export's 500-record pages.
    const turns = Array.from({ length: 300 }, (_, i) =>
      [
        `question ${i} about shard-${i}-vole`,
        `answer ${i}: shard-${i}-vole is fine. ${"the rotation stays bounded. ".repeat(70)}`,
      ] as const);
    await placeClaudeTranscript(world, cwd, session, claudeTranscript(session, cwd, turns));
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const id = `claude:${session}`;
    const checked = await assertRoundTrip(world, id, async (format) => {
      const result = await runCli("show", [id, "--format", format], world.vars);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    });
    assert.equal(checked, 600);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --format md folds what Codex told the model as context, not as the user's words", async () => {
  const world = await makeWorld();
  try {
    placeCodexContextRollout(world, "/home/dev/src/atlas");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const result = await runCli("show", [`codex:${CONTEXT_SESSION}`, "--format", "md"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    const outsideFences = result.stdout.replace(/\n(`{3,})text\n[\s\S]*?\n\1\n/g, "\n");
    assert.doesNotMatch(outsideFences, /AGENTS\.md|environment_context/, "no heading of its own");
    assert.match(result.stdout, /<summary>context · [^<]+<\/summary>\n\n```text\n# AGENTS\.md/);
    assert.match(result.stdout, /<summary>context · [^<]+<\/summary>\n\n```text\n<environment_/);
    assert.match(result.stdout, /<summary>developer · /);
    const users = [...result.stdout.matchAll(/^### user[^\n]*\n\n(.*)$/gm)].map((m) => m[1]);
    assert.equal(users.length, 1, "the prompt alone is the user's");
    assert.match(users[0]!, /importer drop the rows/);
  } finally {
    await world.cleanup();
  }
});
