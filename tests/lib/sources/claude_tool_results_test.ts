// Claude Code's persisted tool output (`<session>/tool-results/<id>.txt`): each file captured as
// a source of its own, byte for byte, its text found as a tool result of the session, and kept
// when Claude Code deletes the session's folder.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { claudeToolResults } from "../../../lib/sources/claude_tool_results.ts";
import { claudeCode } from "../../../lib/sources/claude_code.ts";
import { namingRecord } from "../../../lib/sources/_claude_files.ts";
import type { Recall } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { decodedRow } from "../../../lib/store/raw.ts";
import { search } from "../../../lib/store/search.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  manifest,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

interface Sidecar {
  path: string;
  toolUseId: string;
  bytes: number;
  endsWithNewline: boolean;
  fullOutputPhrases: string[];
}

interface Entry {
  path: string;
  case: string;
  conversation: string;
  cwd: string;
  sidecars?: Sidecar[];
}

const ENTRY = manifest<Entry>("claude").find((e) => e.case === "persisted-output")!;
const SIDECAR = ENTRY.sidecars![0]!;
const PHRASE = SIDECAR.fullOutputPhrases[0]!;

function find(world: World, query: string, filters: Record<string, unknown> = {}) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, ...filters }).hits,
  );
}

/** The stored chunks of one source, joined: the bytes capture kept of it. */
function storedBytes(world: World, locator: string): Buffer {
  return withStore(world, (store) => {
    const rows = store.db.prepare(
      `SELECT r.raw, r.flags FROM records r JOIN sources s ON s.id = r.source_id
       WHERE s.locator = ? ORDER BY r.generation, r.offset`,
    ).all(locator) as { raw: Uint8Array; flags: number }[];
    return Buffer.concat(rows.map((r) => Buffer.from(decodedRow(r).raw)));
  });
}

Deno.test("the fixture's transcript keeps only a preview; the sidecar holds the phrase", () => {
  const transcript = readFileSync(join(FIXTURES, "claude", ENTRY.path), "utf8");
  assert.match(transcript, /<persisted-output>\\nOutput too large \(\d+\.\dKB\)\. Full output/);
  assert.ok(transcript.includes(`tool-results/${SIDECAR.path.split("/").pop()}`));
  assert.ok(!transcript.includes(PHRASE), "the phrase is past the preview");
  const sidecar = readFileSync(join(FIXTURES, "claude", SIDECAR.path));
  assert.equal(sidecar.length, SIDECAR.bytes);
  assert.ok(sidecar.toString("utf8").includes(PHRASE));
});

Deno.test("a pass keeps of the record naming an output its time, uuid and directory only", () => {
  const transcript = join(FIXTURES, "claude", ENTRY.path);
  const lines = readFileSync(transcript, "utf8").split(/(?<=\n)/);
  const recall: Recall = {
    has: () => true,
    sources: () => [],
    sourcesOf: () => [],
    *chunks(locator) {
      if (locator !== transcript) return;
      for (const line of lines) yield { bytes: new TextEncoder().encode(line), start: true };
    },
  };
  const name = SIDECAR.path.split("/").pop()!;
  const naming = namingRecord(recall, [transcript], name)!;
  const record = lines.map((line) => JSON.parse(line)).find((r) =>
    JSON.stringify(r.message?.content ?? "").includes(name)
  );
  assert.ok(record, "the fixture names its output");
  // A pass holds the namings of every transcript it looked in until it ends: previews and all,
  // the whole records were 29 MB of heap at the end of a 10 GB capture.
  assert.deepEqual(naming.record, {
    cwd: record.cwd,
    timestamp: record.timestamp,
    uuid: record.uuid,
  });
  assert.equal(naming.toolUseId, SIDECAR.toolUseId);
  assert.equal(naming.transcript, transcript);
});

Deno.test("a persisted tool output is captured byte for byte and found as the session's tool result", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const file = join(world.claude, SIDECAR.path);
    const kept = storedBytes(world, file);
    assert.ok(kept.equals(readFileSync(file)), "raw bytes kept exactly, no final newline added");
    assert.equal(SIDECAR.endsWithNewline, false);

    const hits = find(world, PHRASE);
    assert.equal(hits.length, 1);
    assert.equal(hits[0]!.conversation, ENTRY.conversation);
    assert.equal(hits[0]!.kind, "tool_result");
    assert.equal(hits[0]!.project, ENTRY.cwd);
    assert.ok(hits[0]!.snippet.includes(PHRASE));
    assert.equal(find(world, PHRASE, { kind: "tool_result" }).length, 1);
    assert.equal(find(world, PHRASE, { role: "user" }).length, 0);

    // The session's pages hold the full output, as the transcript's records do.
    const texts = withStore(world, (store, ctx) => {
      const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
      const page = pageConversation(store, deriver, findConversation(store, ENTRY.conversation));
      return page.records.map((r) => r.text);
    });
    assert.ok(texts.some((t) => t.includes(PHRASE) && t.includes("FAILURES: 1 of 300")));

    const again = await captureWorld(world);
    assert.equal(again.records, 0, "an unchanged output file is not read again");
  } finally {
    await world.cleanup();
  }
});

Deno.test("the full output outlives the session folder and rebuilds from its raw bytes", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const transcript = join(world.claude, ENTRY.path);
    const sessionDir = dirname(dirname(join(world.claude, SIDECAR.path)));
    // Claude Code's clean-up removes the session's folder (and, later, the transcript).
    rmSync(sessionDir, { recursive: true });
    rmSync(transcript);
    const summary = await captureWorld(world);
    assert.equal(summary.gone, 2, "the transcript and the output file are marked gone");
    assert.equal(find(world, PHRASE).length, 1);
    assert.equal(find(world, PHRASE)[0]!.conversation, ENTRY.conversation);

    // `show` pages it, as a user runs it.
    const shown = await runCli("show", [ENTRY.conversation, "--json"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const page = JSON.parse(shown.stdout);
    assert.equal(page.conversation.sourceGone, true);
    assert.ok(
      page.records.some((r: { text: string }) => r.text.includes(PHRASE)),
      "show --json holds the full output",
    );

    await captureWorld(world, { rebuild: true });
    assert.equal(find(world, PHRASE).length, 1, "still found after a rebuild");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rewritten output file supersedes the older text; hook output and symlinks are left alone", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const file = join(world.claude, SIDECAR.path);
    writeFileSync(file, "rerun: all 300 passed, marten-obelisk lease acquired\n");
    const folder = dirname(file);
    writeFileSync(join(folder, "hook-7f3a.txt"), "hook said grebe-turbine\n");
    writeFileSync(join(dirname(folder), "..", "outside.txt"), "not a sidecar\n");
    const elsewhere = join(world.dir, "elsewhere.txt");
    writeFileSync(elsewhere, "linked wagtail-bellows\n");
    symlinkSync(elsewhere, join(folder, "linked.txt"));
    const summary = await captureWorld(world);
    assert.equal(summary.records, 1);
    assert.equal(find(world, "marten-obelisk").length, 1);
    assert.equal(find(world, PHRASE).length, 0, "the older text left the index");
    assert.equal(find(world, "grebe-turbine").length, 0);
    assert.equal(find(world, "wagtail-bellows").length, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("adapterOf gives a tool-results locator to its adapter and transcripts to Claude Code's", () => {
  const side = "/h/.claude/projects/-p/0b7d6d56-1a1e-4c89-9b0e-7b6c1f3d2e10/tool-results/x1.txt";
  const transcript = "/h/.claude/projects/-p/0b7d6d56-1a1e-4c89-9b0e-7b6c1f3d2e10.jsonl";
  assert.equal(adapterOf(ADAPTERS, "claude", side), claudeToolResults);
  assert.equal(adapterOf(ADAPTERS, "claude", transcript), claudeCode);
  assert.equal(
    adapterOf(ADAPTERS, "claude", "C:\\u\\p\\s\\tool-results\\x.txt"),
    claudeToolResults,
  );
});

Deno.test("a structured (.json) output is indexed by its strings", () => {
  const ref = {
    agent: "claude" as const,
    locator: "/p/0b7d6d56-1a1e-4c89-9b0e-7b6c1f3d2e10/tool-results/mcp-db-query-1.json",
    path: "/p/0b7d6d56-1a1e-4c89-9b0e-7b6c1f3d2e10/tool-results/mcp-db-query-1.json",
    format: "rows" as const,
  };
  const bytes = new TextEncoder().encode(
    JSON.stringify([{ type: "text", text: "rows: 3 (kestrel-ledger)" }]),
  );
  const derived = claudeToolResults.parseRow(bytes, {}, ref, () => null);
  assert.equal(derived.conversation?.key, "claude:0b7d6d56-1a1e-4c89-9b0e-7b6c1f3d2e10");
  assert.equal(derived.text, "rows: 3 (kestrel-ledger)");
  assert.equal(claudeToolResults.textOf(bytes, ref), derived.text);
  // No transcript record names it: it keeps the id Claude Code gave the file.
  assert.equal(derived.partId, "mcp-db-query-1");
  assert.equal(derived.messageId, null);
  assert.equal(derived.ts, null);
});

/** The tool result record of the transcript that names the output file (its preview). */
function previewRecord(): { uuid: string; timestamp: string } {
  const lines = readFileSync(join(FIXTURES, "claude", ENTRY.path), "utf8").trim().split("\n");
  const line = lines.find((l) => l.includes("<persisted-output>"))!;
  const record = JSON.parse(line);
  return { uuid: record.uuid, timestamp: record.timestamp };
}

interface ShownRecord {
  id: number;
  source: string;
  timestamp: string | null;
  kind: string;
  text: string;
  messageId: string | null;
  partId: string | null;
}

/** Checks the output file's record as search, the date filters and `show` see it. */
async function placedWithItsCall(world: World): Promise<void> {
  const preview = previewRecord();
  const hits = find(world, PHRASE, { since: Date.parse("2026-10-01T00:00:00Z") });
  assert.equal(hits.length, 1, "the date filters find it");
  assert.equal(hits[0]!.timestamp, preview.timestamp, "timed as the record that names it");
  assert.equal(find(world, PHRASE, { until: Date.parse("2026-10-01T00:00:00Z") }).length, 0);
  // Words of the 2 KB preview are in the full output too: found once, in the full output.
  const early = find(world, '"ledger_012 round-trips its fixture"');
  assert.equal(early.length, 1, "the preview is not a second hit");
  assert.ok(early[0]!.snippet.includes("ledger_012"));

  const shown = await runCli("show", [ENTRY.conversation, "--json"], world.vars);
  assert.equal(shown.code, 0, shown.stderr);
  const records: ShownRecord[] = JSON.parse(shown.stdout).records;
  const at = records.findIndex((r) => r.source.endsWith(SIDECAR.path.split("/").pop()!));
  assert.ok(at > 0, "show lists the output file");
  const output = records[at]!;
  assert.equal(output.timestamp, preview.timestamp);
  assert.equal(output.messageId, preview.uuid, "of the message whose preview names it");
  assert.equal(output.partId, SIDECAR.toolUseId, "linked to its tool use");
  const before = records[at - 1]!;
  assert.equal(before.kind, "tool_result");
  assert.ok(before.text.startsWith("<persisted-output>"), "right after the preview");
  assert.equal(before.partId, SIDECAR.toolUseId);
  const call = records.find((r) => r.kind === "tool_call")!;
  assert.equal(call.partId, SIDECAR.toolUseId, "the call carries the same part id");
  assert.ok(records.indexOf(call) < at);
  assert.equal(records.at(-1)!.source.endsWith(".jsonl"), true, "the reply comes after it");

  // The human view shows it timed, between the call and the reply.
  const human = await runCli("show", [ENTRY.conversation, "--no-pager"], world.vars);
  assert.equal(human.code, 0, human.stderr);
  const full = human.stdout.indexOf("Task test:integration deno test");
  const reply = human.stdout.indexOf("One test fails out of 300");
  assert.ok(full > 0 && full < reply, human.stdout);
}

Deno.test("a persisted output is timed and shown as its tool call's result, the preview found once", async (t) => {
  await t.step("captured with its transcript", async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    try {
      await captureWorld(world);
      await placedWithItsCall(world);
    } finally {
      await world.cleanup();
    }
  });

  await t.step("its transcript and folder gone, the store rebuilt", async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    try {
      await captureWorld(world);
      rmSync(dirname(dirname(join(world.claude, SIDECAR.path))), { recursive: true });
      rmSync(join(world.claude, ENTRY.path));
      await captureWorld(world, { rebuild: true });
      await placedWithItsCall(world);
    } finally {
      await world.cleanup();
    }
  });

  await t.step("first captured after its transcript, captured earlier, was deleted", async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    const file = join(world.claude, SIDECAR.path);
    const held = join(world.dir, "held.txt");
    try {
      renameSync(file, held);
      await captureWorld(world);
      rmSync(join(world.claude, ENTRY.path));
      renameSync(held, file);
      // The preview was captured first: the output file takes it out of the index as it comes.
      await captureWorld(world);
      await placedWithItsCall(world);
      await captureWorld(world, { rebuild: true });
      await placedWithItsCall(world);
    } finally {
      await world.cleanup();
    }
  });
});
