// The Codex adapter against the fixtures and the real samples: every rollout captured byte for
// byte, each phrase found once per indexed copy, forks and subagents in the conversation tree.

import assert from "node:assert/strict";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { zstdDecompressSync } from "node:zlib";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import {
  type DiscoverContext,
  NO_RECALL,
  type Recall,
  type SourceRef,
} from "../../../lib/sources/adapter.ts";
import { codex, codexAdapter, type CodexState } from "../../../lib/sources/codex.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { FLAG_INDEXED, FLAG_STREAMED } from "../../../lib/store/schema.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import type { RecordJson } from "../../../lib/store/conversations.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { search } from "../../../lib/store/search.ts";
import {
  captureWorld,
  CORPUS,
  corpusPresent,
  FIXTURES,
  makeWorld,
  manifest,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";

interface CodexEntry {
  path: string;
  case: string;
  id: string;
  conversation: string;
  parent: string | null;
  cwd: string;
  cliVersion: string | null;
  phrases: string[];
  duplicatedPhrase?: string;
  sharedPhrases?: string[];
  unindexedPhrases?: string[];
  occurrences: Record<string, string[]>;
  decompressedBytes?: number;
  decompressedSha256?: string;
}

const ENTRIES = (manifest("codex") as unknown as { files: CodexEntry[] }).files;
/** Sessions known only from the prompt history file (their rollouts are gone). */
const HISTORY_ONLY = new Set(
  (manifest("codex") as unknown as {
    history: { prompts: { sessionId: string; transcript: string }[] };
  }).history.prompts.filter((p) => p.transcript === "absent").map((p) => p.sessionId),
).size;

function entry(name: string): CodexEntry {
  const found = ENTRIES.find((e) => e.case === name);
  if (!found) throw new Error(`No codex fixture case "${name}"`);
  return found;
}

function find(world: World, query: string) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query }).hits,
  );
}

/**
 * Every record of one conversation from its rollout, paged as `show --json` pages it (the
 * prompt history's copy of a typed prompt joins the same session from another file).
 */
function records(world: World, key: string): RecordJson[] {
  return withStore(world, (store, ctx) => {
    const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
    const conversation = findConversation(store, key);
    const out: RecordJson[] = [];
    let after: number | undefined;
    do {
      const page = pageConversation(
        store,
        deriver,
        conversation,
        after === undefined ? { limit: 7 } : { after, limit: 7 },
      );
      out.push(...page.records);
      after = page.next ?? undefined;
    } while (after !== undefined);
    return out.filter((r) => r.kind !== "prompt");
  });
}

function conversationRow(world: World, key: string) {
  return withStore(world, (store) =>
    store.db.prepare(
      `SELECT key, parent_key, subagent, archived, cwd, branch, title, agent_version
       FROM conversations WHERE key = ?`,
    ).get(key) as {
      key: string;
      parent_key: string | null;
      subagent: number;
      archived: number | null;
      cwd: string | null;
      branch: string | null;
      title: string | null;
      agent_version: string | null;
    } | undefined);
}

/** The bytes capture is expected to hold: decompressed, up to the last complete line. */
function expectedBytes(world: World, e: CodexEntry): Uint8Array {
  const file = readFileSync(join(world.codex, e.path));
  const bytes = e.path.endsWith(".zst") ? zstdDecompressSync(file) : file;
  return bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
}

function fixtureLines(e: CodexEntry): string[] {
  const world = { codex: join(import.meta.dirname!, "../../../fixtures/codex") } as World;
  return new TextDecoder().decode(expectedBytes(world, e)).split("\n");
}

/** A world whose `$CODEX_HOME/sessions` is a copy of `fixtures/<fixture>/sessions`. */
async function rolloutsWorld(fixture: string): Promise<World> {
  const world = await makeWorld();
  cpSync(join(FIXTURES, fixture, "sessions"), join(world.codex, "sessions"), { recursive: true });
  return world;
}

/**
 * How many search hits a phrase should give in its own rollout: one per `response_item` (or
 * older bare item) holding it, and a compaction when its summary does; never the `event_msg`
 * copies, unparsable lines or lines of unknown type.
 */
function indexedCopies(e: CodexEntry, phrase: string): number {
  const lines = fixtureLines(e);
  return (e.occurrences[phrase] ?? []).filter((where) => {
    const [, n, what] = /^line (\d+): (.+)$/.exec(where)!;
    if (what!.startsWith("response_item/") || what === "bare message") return true;
    if (what === "compacted") {
      return JSON.parse(lines[Number(n) - 1]!).payload.message.includes(phrase);
    }
    return false;
  }).length;
}

Deno.test("every Codex fixture is captured and found by its own phrases, once per indexed copy", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    const summary = await captureWorld(world);
    assert.equal(summary.conversations, ENTRIES.length + HISTORY_ONLY);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(summary.empty, []);
    for (const e of ENTRIES) {
      assert.ok(conversationRow(world, e.conversation), `conversation of ${e.case}`);
      for (const phrase of e.phrases) {
        const hits = find(world, phrase);
        const expected = indexedCopies(e, phrase);
        assert.ok(expected >= 1, `${phrase} has an indexed copy in the manifest`);
        assert.equal(hits.length, expected, `hits for ${phrase} (${e.case})`);
        for (const hit of hits) {
          assert.equal(hit.conversation, e.conversation, phrase);
          assert.equal(hit.agent, "codex");
          assert.equal(hit.cwd, e.cwd);
          assert.match(hit.snippet, new RegExp(phrase));
        }
      }
      for (const phrase of e.unindexedPhrases ?? []) {
        assert.equal(find(world, phrase).length, 0, `${phrase} is kept raw, not indexed`);
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("text Codex writes as a response_item and again as events is found exactly once", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const current = entry("current");
    const duplicated = find(world, current.duplicatedPhrase!);
    assert.equal(duplicated.length, 1);
    assert.deepEqual([duplicated[0]!.kind, duplicated[0]!.role], ["message", "user"]);
    // The final answer is written three times: response_item, agent_message, task_complete.
    assert.equal(current.occurrences["ochre-pinwheel"]!.length, 3);
    const answer = find(world, "ochre-pinwheel");
    assert.deepEqual(answer.map((h) => [h.kind, h.role]), [["message", "assistant"]]);
    // A reasoning summary and its agent_reasoning event.
    assert.deepEqual(find(world, "basalt-origami").map((h) => h.kind), ["reasoning"]);
    // A compaction's summary is a summary; its replacement_history copies are not indexed.
    assert.deepEqual(find(world, "cinder-kestrel").map((h) => h.kind), ["summary"]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forks and subagents are child conversations of the rollout they came from", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    for (const e of ENTRIES) {
      const row = conversationRow(world, e.conversation)!;
      assert.equal(row.parent_key, e.parent, `parent of ${e.case}`);
      assert.equal(row.subagent, e.case === "subagent" ? 1 : 0, `subagent flag of ${e.case}`);
      assert.equal(row.cwd, e.cwd, `cwd of ${e.case}`);
      assert.equal(row.agent_version, e.cliVersion, `version of ${e.case}`);
      assert.equal(row.archived, e.case === "archived" ? 1 : 0, `archived flag of ${e.case}`);
    }
    const current = conversationRow(world, entry("current").conversation)!;
    assert.equal(current.branch, "feat/webhook-backoff");
    // The title is the first real prompt, not the AGENTS.md or environment context Codex injects.
    assert.match(current.title!, /^The webhook dispatcher hammers receivers/);
    assert.match(conversationRow(world, entry("subagent").conversation)!.title!, /^Read internal/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork's copy of its parent's history is shown in the fork but found only in the parent", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const fork = entry("forked");
    const parent = entry("current");
    for (const phrase of fork.sharedPhrases!) {
      const hits = find(world, phrase);
      assert.equal(hits.length, indexedCopies(parent, phrase), phrase);
      assert.ok(hits.every((h) => h.conversation === parent.conversation), phrase);
    }
    const shown = records(world, fork.conversation);
    assert.equal(shown.length, fixtureLines(fork).length - 1, "every line of the fork is shown");
    assert.ok(shown.some((r) => r.kind === "message" && r.text.includes("juniper-abacus")));
    // The fork's own title is its own first prompt, not the copied one.
    assert.match(conversationRow(world, fork.conversation)!.title!, /^Different approach/);
  } finally {
    await world.cleanup();
  }
});

const ORPHAN_FORK = "codex:01a06665-2966-7e55-a0c3-5d8b1f2e4c69";

/** A world holding a fork whose parent's rollout was never here (fixtures/codex_orphan_fork). */
function orphanForkWorld(): Promise<World> {
  return rolloutsWorld("codex_orphan_fork");
}

Deno.test("a fork whose parent's rollout the store lacks is found by the history it copied", async (t) => {
  const found = (world: World) => {
    const where = (phrase: string) =>
      find(world, phrase).map((h) => [h.conversation, h.kind, h.role]);
    // Once each: the copied prompt and answer, not their events.
    assert.deepEqual(where("sorrel-gazebo"), [[ORPHAN_FORK, "message", "user"]]);
    assert.deepEqual(where("tamarind-oculus"), [[ORPHAN_FORK, "message", "assistant"]]);
    assert.equal(where("wicker-nautilus").length, 2);
    const row = conversationRow(world, ORPHAN_FORK)!;
    assert.equal(row.parent_key, "codex:01a06651-8059-7a1c-9d2e-4b7f6a1c3e58");
    // Still titled by its own first prompt, not by the copied one.
    assert.match(row.title!, /^Stream the upload/);
  };

  await t.step("captured, and rebuilt", async () => {
    const world = await orphanForkWorld();
    try {
      await captureWorld(world);
      found(world);
      await captureWorld(world, { rebuild: true });
      found(world);
    } finally {
      await world.cleanup();
    }
  });

  await t.step("its lines too long to hold, streamed", async () => {
    const world = await orphanForkWorld();
    try {
      const ctx = loadContext({ env: world.env });
      const store = openStore(ctx);
      try {
        // Every line longer than 300 bytes takes the streaming path, the copied ones included.
        await runPass(store, ctx, { limits: { maxLine: 300 } });
        const streamed = store.db.prepare(
          `SELECT count(*) AS n FROM records WHERE (flags & ${FLAG_STREAMED}) != 0`,
        ).get() as { n: number };
        assert.ok(streamed.n > 0, "some lines were streamed");
      } finally {
        store.close();
      }
      // A streamed line is indexed whole, whatever its kind: its events are found too.
      for (const phrase of ["sorrel-gazebo", "tamarind-oculus"]) {
        const hits = find(world, phrase);
        assert.ok(hits.length > 0 && hits.every((h) => h.conversation === ORPHAN_FORK), phrase);
      }
    } finally {
      await world.cleanup();
    }
  });
});

Deno.test("a fork's copied history is found in the parent whenever the store has its rollout", async (t) => {
  const fork = entry("forked");
  const parent = entry("current");
  /** The conversations a shared phrase is found in, each once. */
  const holders = (world: World, phrase: string) =>
    [...new Set(find(world, phrase).map((h) => h.conversation))].sort();

  await t.step("the parent's rollout deleted before logbook ran: found in the fork", async () => {
    const world = await makeWorld({ fixtures: ["codex"] });
    try {
      rmSync(join(world.codex, parent.path));
      await captureWorld(world);
      for (const phrase of fork.sharedPhrases!) {
        assert.ok(holders(world, phrase).includes(fork.conversation), phrase);
      }
    } finally {
      await world.cleanup();
    }
  });

  await t.step("captured with its parent, the parent deleted, the store rebuilt", async () => {
    const world = await makeWorld({ fixtures: ["codex"] });
    try {
      await captureWorld(world);
      rmSync(join(world.codex, parent.path));
      await captureWorld(world, { rebuild: true });
      for (const phrase of fork.sharedPhrases!) {
        assert.deepEqual(holders(world, phrase), [parent.conversation], phrase);
      }
    } finally {
      await world.cleanup();
    }
  });

  await t.step("the parent captured after the fork: in both until a rebuild", async () => {
    const world = await makeWorld({ fixtures: ["codex"] });
    const held = join(world.dir, basename(parent.path));
    try {
      renameSync(join(world.codex, parent.path), held);
      await captureWorld(world);
      renameSync(held, join(world.codex, parent.path));
      await captureWorld(world);
      // Nothing takes a fork's indexed copy back when its parent comes: a duplicate, not a loss.
      for (const phrase of fork.sharedPhrases!) {
        assert.deepEqual(holders(world, phrase), [parent.conversation, fork.conversation].sort());
      }
      await captureWorld(world, { rebuild: true });
      for (const phrase of fork.sharedPhrases!) {
        assert.deepEqual(holders(world, phrase), [parent.conversation], phrase);
      }
    } finally {
      await world.cleanup();
    }
  });
});

Deno.test("every line of a current rollout has the kind and role its type means", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("current");
    const expected = [
      "meta", // session_meta
      "event", // task_started
      "message/developer",
      "message/user", // AGENTS.md and environment context
      "meta", // turn_context
      "meta", // world_state
      "message/user",
      "event", // user_message
      "reasoning/assistant",
      "event", // agent_reasoning
      "tool_call/assistant", // function_call
      "event", // token_count
      "tool_result", // function_call_output
      "event", // exec_command_end
      "message/assistant",
      "meta", // agent_message: a copy of the message above
      "event", // token_count
      "event", // task_complete
      "event", // task_started
      "summary", // compacted
      "event", // context_compacted
      "meta", // turn_context
      "message/user",
      "event", // user_message
      "reasoning/assistant",
      "event", // agent_reasoning
      "tool_call/assistant", // custom_tool_call
      "event", // patch_apply_end
      "tool_result", // custom_tool_call_output
      "tool_call/assistant", // local_shell_call
      "tool_result", // its function_call_output
      "tool_call/assistant", // web_search_call
      "event", // web_search_end
      "tool_call/assistant", // view_image function_call
      "tool_result", // array output with an image
      "tool_call/assistant", // spawn_agent
      "event", // collab_agent_spawn_end
      "tool_result",
      "message/assistant",
      "meta", // agent_message: a copy of the message above
      "event", // token_count with info null
      "meta", // hologram_state: unknown, kept raw
      "event", // task_complete
    ];
    const shown = records(world, e.conversation);
    assert.deepEqual(shown.map((r) => r.role ? `${r.kind}/${r.role}` : r.kind), expected);

    // Calls and their results carry the same call_id, so they can be folded together.
    const lines = fixtureLines(e).map((l) => l && JSON.parse(l));
    shown.forEach((r, i) => {
      const callId = lines[i].payload?.call_id;
      if (r.kind === "tool_call" || r.kind === "tool_result") {
        assert.equal(r.messageId, callId ?? null, `messageId of line ${i + 1}`);
      }
    });
    const calls = shown.filter((r) => r.kind === "tool_call" && r.messageId?.startsWith("call_"));
    assert.equal(calls.length, 5);
    for (const call of calls) {
      assert.equal(
        shown.filter((r) => r.kind === "tool_result" && r.messageId === call.messageId).length,
        1,
      );
    }
    // No payload reaches the text: images, encrypted reasoning and compaction blobs stay out.
    for (const r of shown) assert.doesNotMatch(r.text, /gAAAA|base64,|iVBORw0KGgo/);
    assert.match(shown[34]!.text, /docs\/backoff-curve\.png/);
    // Event copies are not indexed (and show no text of their own).
    for (const [i, r] of shown.entries()) {
      if (r.kind === "event") assert.equal(r.text, "", `text of event line ${i + 1}`);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("captured Codex bytes are exact, the zst rollout as its decompressed bytes", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    for (const e of ENTRIES) {
      const shown = records(world, e.conversation);
      const file = join(world.codex, e.path);
      assert.ok(shown.every((r) => r.source === file && r.generation === 1), e.case);
      const sorted = [...shown].sort((a, b) => a.offset - b.offset);
      let expectedOffset = 0;
      for (const r of sorted) {
        assert.equal(r.offset, expectedOffset, `records of ${e.case} are contiguous`);
        expectedOffset += Buffer.from(r.raw, "base64").length;
      }
      const rebuilt = Buffer.concat(sorted.map((r) => Buffer.from(r.raw, "base64")));
      assert.ok(rebuilt.equals(Buffer.from(expectedBytes(world, e))), `bytes of ${e.case}`);
      if (e.decompressedSha256) {
        assert.equal(createHash("sha256").update(rebuilt).digest("hex"), e.decompressedSha256);
        assert.equal(rebuilt.length, e.decompressedBytes);
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a compressed rollout is read through zstd and recorded as such", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("zst");
    const format = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT format FROM sources WHERE locator = ?").get(
          join(world.codex, e.path),
        ) as { format: string }).format,
    );
    assert.equal(format, "jsonl.zst");
    const hits = find(world, "fennel-odyssey");
    assert.deepEqual(hits.map((h) => h.conversation), [e.conversation]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("without a zstd decoder compressed rollouts are not yielded but counted as skipped", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    const list = async (zstd: boolean) => {
      const ctx: DiscoverContext = { env: world.env, extraRoots: {}, skipped: new Map() };
      const found: SourceRef[] = [];
      for await (const ref of codexAdapter({ zstdAvailable: () => zstd }).discover(ctx)) {
        found.push(ref);
      }
      return { found, skipped: Object.fromEntries(ctx.skipped) };
    };
    const without = await list(false);
    assert.equal(without.found.length, ENTRIES.length - 1);
    assert.ok(without.found.every((r) => r.format === "jsonl" && !r.path.endsWith(".zst")));
    assert.deepEqual(without.skipped, { "zstd decoder unavailable": 1 });
    const withZstd = await list(true);
    assert.equal(withZstd.found.length, ENTRIES.length);
    assert.deepEqual(withZstd.skipped, {});

    // While Codex compresses a rollout both files exist for a moment: the plain one is read.
    const zst = join(world.codex, entry("zst").path);
    writeFileSync(zst.slice(0, -4), expectedBytes(world, entry("zst")));
    const both = await list(true);
    assert.equal(both.found.filter((r) => r.path.startsWith(zst.slice(0, -4))).length, 1);
    assert.ok(both.found.some((r) => r.path === zst.slice(0, -4) && r.format === "jsonl"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("Codex roots: CODEX_HOME, ~/.codex and config's extra roots, rollouts only", async () => {
  const world = await makeWorld();
  try {
    const extra = join(world.dir, "elsewhere");
    const at = (dir: string, name: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), "{}\n");
      return join(dir, name);
    };
    const a = at(join(world.codex, "sessions", "2026", "01", "02"), "rollout-a.jsonl");
    const b = at(join(world.home, ".codex", "archived_sessions"), "rollout-b.jsonl");
    const c = at(join(extra, "sessions", "2026", "01", "03"), "rollout-c.jsonl");
    at(join(world.codex, "sessions"), "history.jsonl");
    at(extra, "history.jsonl");
    const ctx: DiscoverContext = {
      env: world.env,
      extraRoots: { codex: [extra] },
      skipped: new Map(),
    };
    assert.deepEqual(codex.roots(ctx), [
      join(world.codex, "sessions"),
      join(world.codex, "archived_sessions"),
      join(world.home, ".codex", "sessions"),
      join(world.home, ".codex", "archived_sessions"),
      extra,
    ]);
    const found: string[] = [];
    for await (const ref of codex.discover(ctx)) found.push(ref.path);
    assert.deepEqual(found, [a, b, c]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a second capture finds nothing new; an appended Codex line is captured exactly once", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    assert.ok((await captureWorld(world)).records > 0);
    const second = await captureWorld(world);
    assert.equal(second.records, 0);
    assert.equal(second.changed, 0);
    const e = entry("current");
    appendFileSync(
      join(world.codex, e.path),
      JSON.stringify({
        timestamp: "2026-06-14T07:25:00.000Z",
        type: "response_item",
        payload: {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "one more: narwhal-bicycle" }],
        },
      }) + "\n",
    );
    const third = await captureWorld(world);
    assert.equal(third.records, 1);
    assert.deepEqual(find(world, "narwhal-bicycle").map((h) => h.conversation), [e.conversation]);
    assert.equal((await captureWorld(world)).records, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("the older mid-2025 format: bare header, bare items and state lines", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("older");
    const row = conversationRow(world, e.conversation)!;
    assert.equal(row.cwd, "/home/ravi/code/quillmate", "cwd from the environment context");
    assert.equal(row.branch, "fix/flaky-render-test");
    assert.equal(row.agent_version, null);
    assert.match(row.title!, /^tests\/test_render\.py::test_footer_timestamp fails/);
    const shown = records(world, e.conversation);
    const lines = fixtureLines(e);
    shown.forEach((r, i) => {
      if (lines[i]!.startsWith('{"record_type"')) assert.equal(r.kind, "meta");
    });
    assert.equal(shown[0]!.kind, "meta");
    assert.equal(shown[0]!.timestamp, "2025-07-02T14:03:11.512Z");
    const call = shown[6]!;
    assert.deepEqual([call.kind, call.messageId], ["tool_call", "call_ynj10Y2uzHC9WJEeAEJe5AA5"]);
    const result = shown[8]!;
    assert.deepEqual([result.kind, result.messageId], ["tool_result", call.messageId]);
    // The output is the text the command printed, not its JSON wrapper.
    assert.match(result.text, /AssertionError/);
    assert.doesNotMatch(result.text, /exit_code|duration_seconds/);
    assert.deepEqual(find(world, "moss-gyroscope").map((h) => h.role), ["assistant"]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a session killed mid-tool-call is captured as it is", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("interrupted");
    const shown = records(world, e.conversation);
    assert.equal(shown.length, fixtureLines(e).length - 1);
    const last = shown.at(-1)!;
    assert.deepEqual([last.kind, last.messageId], ["tool_call", "call_ZEv1qOobfDpZYpKip0UhJ3ft"]);
    assert.ok(!shown.some((r) => r.kind === "tool_result"));
    // Reasoning with only encrypted content has no text.
    assert.equal(shown.find((r) => r.kind === "reasoning")!.text, "");
    assert.deepEqual(find(world, "rustic-zeppelin").map((h) => h.conversation), [e.conversation]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("an archived rollout is captured and marked archived", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("archived");
    assert.equal(conversationRow(world, e.conversation)!.archived, 1);
    const hits = find(world, "glacier-tambourine");
    assert.deepEqual(hits.map((h) => [h.conversation, h.role]), [[e.conversation, "user"]]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("Codex format drift is reported with agent, version and count, and kept raw", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    const summary = await captureWorld(world);
    const drift = summary.drift
      .map((d) => `${d.agent} ${d.version} ${d.category} ${d.detail} ${d.count}`)
      .sort();
    assert.deepEqual(drift, [
      "codex 0.150.0 unknown_type hologram_state 1",
      "codex 0.151.2 missing_fields response_item/message without content 1",
      "codex 0.151.2 unknown_type event_msg/quantum_flux 1",
      "codex 0.151.2 unparsable invalid JSON 1",
    ]);
    // The malformed rollout's incomplete last line waits for its newline.
    const e = entry("malformed");
    const complete = fixtureLines(e).length - 1;
    assert.equal(records(world, e.conversation).length, complete);
    const flags = withStore(world, (store) =>
      store.db.prepare(
        "SELECT flags FROM records r JOIN sources s ON s.id = r.source_id WHERE s.locator = ? ORDER BY offset",
      ).all(join(world.codex, e.path)) as { flags: number }[]);
    assert.equal(flags[5]!.flags & FLAG_INDEXED, 0, "the unparsable line is not indexed");
  } finally {
    await world.cleanup();
  }
});

Deno.test("rebuild derives the same Codex conversations and index from the raw records", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.db.prepare(
          `SELECT key, title, parent_key, subagent, archived, cwd, branch, agent_version,
             message_count, record_count, first_ts, last_ts FROM conversations ORDER BY key`,
        ).all(),
        records: store.db.prepare(
          "SELECT id, kind, role, ts, message_id, flags FROM records ORDER BY id",
        ).all(),
        drift: store.db.prepare("SELECT * FROM drift ORDER BY source_id, detail").all(),
      }));
    const before = snapshot();
    const summary = await captureWorld(world, { rebuild: true });
    assert.equal(summary.records, 0);
    assert.deepEqual(snapshot(), before);
    assert.equal(find(world, "juniper-abacus").length, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("lines too long to hold in memory keep their conversation, parent and version", async () => {
  const normal = await makeWorld({ fixtures: ["codex"] });
  const streamed = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(normal);
    // A 600-byte limit streams every session_meta, turn_context and long item.
    const ctx = loadContext({ env: streamed.env });
    const store = openStore(ctx);
    try {
      await runPass(store, ctx, { limits: { maxLine: 600 } });
      const streamedLines = store.db.prepare(
        `SELECT count(*) AS n FROM records WHERE flags & ${FLAG_STREAMED}`,
      )
        .get() as { n: number };
      assert.ok(streamedLines.n > 20);
    } finally {
      store.close();
    }
    const tree = (world: World) =>
      withStore(world, (s) =>
        s.db.prepare(
          `SELECT key, parent_key, subagent, archived, cwd, branch, agent_version FROM conversations
           ORDER BY key`,
        ).all());
    assert.deepEqual(tree(streamed), tree(normal));
    const kinds = (world: World) =>
      withStore(world, (s) => s.db.prepare("SELECT kind, role FROM records ORDER BY id").all());
    assert.deepEqual(kinds(streamed), kinds(normal));
  } finally {
    await normal.cleanup();
    await streamed.cleanup();
  }
});

Deno.test("a fork's copied history ends at its first own turn, or at once when that is unclear", () => {
  const ref: SourceRef = {
    agent: "codex",
    locator: "/x/rollout-2026-06-14T09-16-40-019ec4fd-6348-7574-9d92-a7cec8ea9dc8.jsonl",
    path: "/x/rollout-2026-06-14T09-16-40-019ec4fd-6348-7574-9d92-a7cec8ea9dc8.jsonl",
    format: "jsonl",
  };
  const line = (value: unknown) => decodeLine(new TextEncoder().encode(JSON.stringify(value)));
  const meta = (id: string, extra = {}) =>
    line({
      timestamp: "2026-06-14T07:16:40.906Z",
      type: "session_meta",
      payload: { id, ...extra },
    });
  const turn = (turnId?: string) =>
    line({ type: "event_msg", payload: { type: "task_started", turn_id: turnId } });
  const prompt = (text: string) =>
    line({
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
  // The store holds the parent's rollout (archived, compressed: found by its name anywhere).
  const parent = "/y/archived_sessions/rollout-2026-06-14T09-12-05-" +
    "019ec4f9-2ec6-7da7-bbee-b6e59f34f595.jsonl.zst";
  const holding: Recall = { ...NO_RECALL, sourcesOf: (agent) => agent === "codex" ? [parent] : [] };
  const run = (turnIds: (string | undefined)[], recall = holding) => {
    const state: CodexState = codex.initialState(ref);
    codex.parseLine(
      meta("019ec4fd-6348-7574-9d92-a7cec8ea9dc8", { forked_from_id: "p" }),
      state,
      ref,
      recall,
    );
    codex.parseLine(meta("019ec4f9-2ec6-7da7-bbee-b6e59f34f595"), state, ref, recall);
    return turnIds.map((id, i) => {
      codex.parseLine(turn(id), state, ref, recall);
      return codex.parseLine(prompt(`prompt ${i}`), state, ref, recall).text;
    });
  };
  // Turns begun before the fork existed are the parent's; the next one is the fork's own.
  assert.deepEqual(
    run([
      "019ec4f9-3376-765d-a78c-0deca166c572",
      "019ec4fb-0000-7000-8000-000000000000",
      "019ec4fd-8670-7f7f-b48a-7b1cf92aae57",
    ]),
    ["", "", "prompt 2"],
  );
  // A turn whose time cannot be read ends the copy: a duplicate hit rather than a lost one.
  assert.deepEqual(run([undefined, "019ec4f9-3376-765d-a78c-0deca166c572"]), [
    "prompt 0",
    "prompt 1",
  ]);
  // A copy from a rollout the store lacks is indexed: nothing else holds its words.
  assert.deepEqual(
    run(
      ["019ec4f9-3376-765d-a78c-0deca166c572", "019ec4fd-8670-7f7f-b48a-7b1cf92aae57"],
      NO_RECALL,
    ),
    ["prompt 0", "prompt 1"],
  );
  // A name the user gave the thread outranks the first prompt as its title.
  const named = codex.parseLine(
    line({ type: "event_msg", payload: { type: "thread_name_updated", thread_name: "Backoff" } }),
    codex.initialState(ref),
    ref,
  );
  assert.deepEqual([named.kind, named.title], ["event", { text: "Backoff", rank: 3 }]);
  // textOf still gives the copied text, so show displays the fork whole.
  assert.equal(codex.textOf(prompt("copied words").bytes, ref), "copied words");
});

Deno.test({
  name: "real Codex samples each produce a conversation whose known phrases are found",
  ignore: !corpusPresent(),
  fn: async () => {
    const world = await makeWorld();
    try {
      cpSync(join(CORPUS, "codex", "sessions"), join(world.codex, "sessions"), { recursive: true });
      const coverageDir = join(world.codex, "sessions", "2026", "08", "03");
      mkdirSync(coverageDir, { recursive: true });
      cpSync(
        join(CORPUS, "codex", "schema-coverage.jsonl"),
        join(coverageDir, "rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl"),
      );
      const summary = await captureWorld(world);
      // Every shape of the 0.146 schema sample is recognised: no drift at all.
      assert.deepEqual(summary.drift, []);
      const real = "codex:019e1625-789d-76c0-80ab-3724b5ddb799";
      const row = conversationRow(world, real)!;
      assert.equal(row.agent_version, "0.125.0");
      assert.equal(row.cwd, "/Users/Sample_User/repos/codemie-ai/codemie-code");
      assert.equal(row.title, "show tools");
      const tools = find(world, '"Available tool groups in this session"');
      assert.deepEqual(tools.map((h) => [h.conversation, h.kind, h.role]), [
        [real, "message", "assistant"],
      ]);
      const coverage = "codex:019fc8be-3658-7ca3-9e29-000000000000";
      assert.equal(conversationRow(world, coverage)!.agent_version, "0.146.0");
      const files = find(world, '"Found 2 files"');
      assert.deepEqual(files.map((h) => [h.conversation, h.kind, h.role]), [
        [coverage, "message", "assistant"],
      ]);
    } finally {
      await world.cleanup();
    }
  },
});

/** A world holding the rollouts of interrupted turns (fixtures/codex_interrupted). */
function interruptedWorld(): Promise<World> {
  return rolloutsWorld("codex_interrupted");
}

const EVENT_FIRST = "codex:019e2a41-6c3d-7b80-9f12-3e4d5c6b7a89";
const ITEM_FIRST = "codex:019f3b52-7d4e-7c91-a023-4f5e6d7c8b9a";

Deno.test("an interrupted turn's reply, only in an agent_message event, is found once; a reply in both lines is found once", async () => {
  const world = await interruptedWorld();
  try {
    await captureWorld(world);
    // Only in the event (the turn was aborted before the response item was written).
    for (
      const [phrase, conversation] of [["amber-lattice", EVENT_FIRST], [
        "indigo-moraine",
        ITEM_FIRST,
      ]] as const
    ) {
      const hits = find(world, phrase);
      assert.equal(hits.length, 1, phrase);
      assert.equal(hits[0]!.conversation, conversation);
      assert.deepEqual([hits[0]!.kind, hits[0]!.role], ["message", "assistant"], phrase);
      assert.match(hits[0]!.snippet, new RegExp(phrase));
    }
    // In both lines, event first (0.125) or response item first (0.146): the item is the hit.
    for (
      const [phrase, conversation] of [["quartz-heron", EVENT_FIRST], [
        "cedar-pylon",
        ITEM_FIRST,
      ]] as const
    ) {
      const hits = find(world, phrase);
      assert.equal(hits.length, 1, phrase);
      const shown = records(world, conversation);
      const hit = shown.find((r) => r.id === hits[0]!.record)!;
      const line = JSON.parse(Buffer.from(hit.raw, "base64").toString("utf8"));
      assert.equal(line.type, "response_item", `${phrase}: the response item is indexed`);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("an interrupted reply is shown and counted once, and rebuild derives the same", async () => {
  const world = await interruptedWorld();
  try {
    await captureWorld(world);
    for (
      const [conversation, phrases] of [
        [EVENT_FIRST, ["quartz-heron", "amber-lattice"]],
        [ITEM_FIRST, ["cedar-pylon", "indigo-moraine"]],
      ] as const
    ) {
      const shown = records(world, conversation);
      for (const phrase of phrases) {
        // `show` renders no `meta` record: the event that repeats a response item is one.
        const with_ = shown.filter((r) => r.kind !== "meta" && r.text.includes(phrase));
        assert.deepEqual(
          with_.map((r) => `${r.kind}/${r.role}`),
          ["message/assistant"],
          `${phrase} has one record with text in show`,
        );
      }
      const counted = withStore(
        world,
        (store) =>
          store.db.prepare("SELECT message_count AS n FROM conversations WHERE key = ?")
            .get(conversation) as { n: number },
      );
      // Two prompts and two replies (the environment context is not a message).
      assert.equal(counted.n, 4, conversation);
    }
    const snapshot = () =>
      withStore(world, (store) => ({
        conversations: store.db.prepare(
          "SELECT key, message_count, record_count FROM conversations ORDER BY key",
        ).all(),
        records: store.db.prepare("SELECT id, kind, role, flags FROM records ORDER BY id").all(),
      }));
    const before = snapshot();
    await captureWorld(world, { rebuild: true });
    assert.deepEqual(snapshot(), before);
    for (const phrase of ["quartz-heron", "amber-lattice", "cedar-pylon", "indigo-moraine"]) {
      assert.equal(find(world, phrase).length, 1, `${phrase} after rebuild`);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("an event-first reply read in two captures is still indexed once", async () => {
  const world = await interruptedWorld();
  try {
    // The first capture ends right after the agent_message event: its response item arrives
    // in the next capture and must take the event's place in the index.
    const path = join(
      world.codex,
      "sessions/2026/05/20/rollout-2026-05-20T10-14-03-019e2a41-6c3d-7b80-9f12-3e4d5c6b7a89.jsonl",
    );
    const lines = readFileSync(path, "utf8").split(/(?<=\n)/);
    const cut = lines.findIndex((l) => l.includes('"type":"agent_message"')) + 1;
    writeFileSync(path, lines.slice(0, cut).join(""));
    await captureWorld(world);
    assert.equal(find(world, "quartz-heron").length, 1, "the event, while it is alone");
    appendFileSync(path, lines.slice(cut).join(""));
    await captureWorld(world);
    assert.equal(find(world, "quartz-heron").length, 1, "the response item, not both");
    assert.equal(find(world, "amber-lattice").length, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("the line types of Codex 0.169 are recognised: token_usage_record is not drift", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const e = entry("token-usage-record");
    const file = join(world.codex, e.path);
    const rows = withStore(world, (store) =>
      store.db.prepare(
        `SELECT d.detail FROM drift d JOIN sources s ON s.id = d.source_id WHERE s.locator = ?`,
      ).all(file) as { detail: string }[]);
    assert.deepEqual(rows, []);
    // Kept raw as meta, in the conversation, and shown.
    const shown = records(world, e.conversation);
    const usage = shown.filter((r) =>
      Buffer.from(r.raw, "base64").toString().includes('"type":"token_usage_record"')
    );
    assert.equal(usage.length, 2);
    assert.ok(usage.every((r) => r.kind === "meta"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a fork's copied line too long to hold is found only in the parent too", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      // Every line longer than 300 bytes takes the streaming path, the fork's copies included.
      await runPass(store, ctx, { limits: { maxLine: 300 } });
    } finally {
      store.close();
    }
    const fork = entry("forked");
    const parent = entry("current");
    for (const phrase of fork.sharedPhrases!) {
      const hits = find(world, phrase);
      assert.ok(hits.length > 0, phrase);
      assert.ok(hits.every((h) => h.conversation === parent.conversation), phrase);
    }
  } finally {
    await world.cleanup();
  }
});

const CODEX_0169 = "codex:019ed3a1-5c2b-7e40-8a91-2b3c4d5e6f70";

Deno.test("a Codex 0.169 rollout: no drift, each word once, item_completed events not indexed", async () => {
  const world = await makeWorld();
  try {
    cpSync(
      join(import.meta.dirname!, "../../../fixtures/codex_0169/sessions"),
      join(world.codex, "sessions"),
      { recursive: true },
    );
    const summary = await captureWorld(world);
    assert.deepEqual(summary.drift, []);
    const expected: [string, string[]][] = [
      ["gannet-rivulet", ["message/user", "tool_call/assistant", "tool_result/null"]],
      ["heron-spindle", ["message/assistant"]],
      ["osprey-lantern", ["summary/null"]],
      ["plover-quill", ["message/user"]],
      ["curlew-basin", ["message/assistant"]],
    ];
    for (const [phrase, kinds] of expected) {
      const hits = find(world, phrase);
      assert.deepEqual(hits.map((h) => `${h.kind}/${h.role}`).sort(), [...kinds].sort(), phrase);
      assert.ok(hits.every((h) => h.conversation === CODEX_0169), phrase);
    }
    const events = records(world, CODEX_0169).filter((r) =>
      Buffer.from(r.raw, "base64").toString().includes('"type":"item_completed"')
    );
    assert.equal(events.length, 5);
    assert.ok(events.every((r) => r.kind === "event" && r.text === ""), "repeats are not indexed");
    const conversation = withStore(world, (store) => findConversation(store, CODEX_0169));
    assert.equal(
      conversation.title,
      "Why does the tide table skip a row? Look for gannet-rivulet in the parser.",
    );
    assert.equal(conversation.cwd, "/home/mara/src/tidepool");
    assert.equal(conversation.message_count, 4);
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf names each Codex tool and gives the command as its input; outputs name their call", () => {
  const path = join(
    FIXTURES,
    "tool_heavy/codex/sessions/2026/10/07/rollout-2026-10-07T11-29-58-019fa1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl",
  );
  const ref = { agent: "codex", locator: path, path, format: "jsonl" } as const;
  const tools = readFileSync(path, "utf8").trimEnd().split("\n")
    .map((line) => codex.toolOf!(new TextEncoder().encode(line), ref))
    .filter((parts) => parts !== null);
  assert.deepEqual(
    tools.map((t) => [t.calls.map((c) => [c.id, c.name, c.input.split("\n")[0]]), t.results]),
    [
      [[["call_HarborShell001", "shell", 'rg -n "retry" src/upstream']], []],
      [[], [{ id: "call_HarborShell001", error: false }]],
      [[[null, "web_search", "exponential backoff full jitter formula"]], []],
      [[["call_HarborExec0002", "exec_command", "sed -n '30,60p' src/upstream/client.rs"]], []],
      [[], [{ id: "call_HarborExec0002", error: false }]],
      [[["call_HarborLocal003", "shell", "cargo test -p upstream backoff"]], []],
      [[], [{ id: "call_HarborLocal003", error: false }]],
    ],
  );
  const argv = (command: string[]) =>
    codex.toolOf!(
      new TextEncoder().encode(JSON.stringify({
        type: "response_item",
        payload: {
          type: "function_call",
          name: "shell",
          arguments: JSON.stringify({ command }),
          call_id: "c1",
        },
      })),
      ref,
    )!.calls[0]!.input;
  assert.equal(argv(["git", "log", "-n", "3", "--format=%h %s"]), "git log -n 3 '--format=%h %s'");
  const failed = codex.toolOf!(
    new TextEncoder().encode(JSON.stringify({
      type: "function_call_output",
      call_id: "c2",
      output: JSON.stringify({ output: "boom", metadata: { exit_code: 2 } }),
    })),
    ref,
  );
  assert.deepEqual(failed?.results, [{ id: "c2", error: true }], "the older format too");
});
