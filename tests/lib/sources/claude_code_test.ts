// The Claude Code adapter on the shapes real transcripts have: inline sidechains of 1.0/2.0,
// copies that repeat their parent (compaction and side-question helpers), subagent titles from
// `.meta.json`, summary-only files, and the record types of current releases (no drift).

import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { Buffer } from "node:buffer";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { parentHolds, scanUuids } from "../../../lib/sources/_claude_files.ts";
import { NO_RECALL, type Recall } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { findConversation, pageConversation } from "../../../lib/store/conversations.ts";
import { TextDeriver } from "../../../lib/store/records.ts";
import { search, type SearchOptions } from "../../../lib/store/search.ts";
import { FLAG_INDEXED, FLAG_STREAMED } from "../../../lib/store/schema.ts";
import { cutTitle } from "../../../lib/store/text.ts";
import { emptySources } from "../../../lib/store/status.ts";
import {
  captureWorld,
  CORPUS,
  corpusPresent,
  FIXTURES,
  makeWorld,
  manifest,
  runCli,
  runPass,
  withStore,
  type World,
} from "../../_helpers.ts";

interface Entry {
  path: string;
  case: string;
  sessionId: string;
  conversation: string;
  parent: string | null;
  phrases: string[];
  lines: number;
  children?: string[];
  sidechainPhrases?: Record<string, string>;
  sharedPhrases?: string[];
  copiedLines?: number;
  title?: string;
  titles?: Record<string, string>;
  notIndexedTypes?: string[];
}

const ENTRIES = manifest<Entry>("claude");

function entries(name: string): Entry[] {
  const found = ENTRIES.filter((e) => e.case === name);
  if (found.length === 0) throw new Error(`No claude fixture case "${name}"`);
  return found;
}

function hits(world: World, query: string, options: Partial<SearchOptions> = {}) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, ...options }).hits,
  );
}

function conversation(world: World, key: string) {
  return withStore(world, (store) =>
    store.db.prepare(
      "SELECT key, title, parent_key, subagent, message_count FROM conversations WHERE key = ?",
    ).get(key) as
      | {
        key: string;
        title: string | null;
        parent_key: string | null;
        subagent: number;
        message_count: number;
      }
      | undefined);
}

async function captured(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    return world;
  } catch (err) {
    await world.cleanup();
    throw err;
  }
}

Deno.test("inline sidechains of Claude Code 1.0/2.0 are child conversations of their session", async (t) => {
  const world = await captured();
  const [main] = entries("inline-sidechain");
  try {
    await t.step(
      "each sidechain is a subagent of the session, the session keeps its own turns",
      () => {
        for (const child of main!.children!) {
          const row = conversation(world, child);
          assert.ok(row, child);
          assert.equal(row.parent_key, main!.conversation);
          assert.equal(row.subagent, 1);
          assert.equal(row.message_count, 2);
        }
        assert.equal(conversation(world, main!.conversation)!.subagent, 0);
      },
    );

    await t.step("a subagent's words are found in its sidechain, not in the session", () => {
      for (const [phrase, child] of Object.entries(main!.sidechainPhrases!)) {
        const messages = hits(world, `"${phrase}"`, { kind: "message" });
        assert.deepEqual(messages.map((h) => h.conversation), [child], phrase);
      }
    });

    await t.step("--role user finds the person's prompt and no subagent's as theirs", () => {
      const person = hits(world, '"heron-abacus"', { role: "user", subagents: false });
      assert.deepEqual(person.map((h) => h.conversation), [main!.conversation]);
      const prompt = hits(world, '"quill-meridian"', { role: "user", subagents: false });
      assert.deepEqual(prompt, [], "the Task prompt is not the person's");
      const asSubagent = hits(world, '"quill-meridian"', { role: "user" });
      assert.deepEqual(asSubagent.map((h) => h.conversation), [
        main!.sidechainPhrases!["quill-meridian"],
      ]);
    });

    await t.step("--no-subagents leaves the sidechains out", () => {
      assert.deepEqual(hits(world, '"lantern-fjord"', { subagents: false }), []);
      assert.equal(hits(world, '"lantern-fjord"').length, 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a copy keeps its raw bytes but indexes only what is new in it", async (t) => {
  const world = await captured();
  const [parent, ...rest] = entries("copies");
  const copies = rest.filter((e) => e.copiedLines);
  try {
    await t.step("the parent's words are found once, in the parent", () => {
      for (const phrase of parent!.phrases) {
        assert.deepEqual(hits(world, `"${phrase}"`).map((h) => h.conversation), [
          parent!.conversation,
        ], phrase);
      }
    });

    await t.step("each copy's own words are found, in the copy", () => {
      for (const copy of copies) {
        const found = hits(world, `"${copy.phrases[0]}"`);
        assert.ok(found.length > 0, copy.phrases[0]);
        assert.ok(found.every((h) => h.conversation === copy.conversation), copy.phrases[0]);
      }
    });

    await t.step("every byte of a copy is kept and shown, copied lines not indexed", () => {
      withStore(world, (store, ctx) => {
        const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
        for (const copy of copies) {
          const page = pageConversation(store, deriver, findConversation(store, copy.conversation));
          assert.equal(page.records.length, copy.lines);
          const raw = Buffer.concat(page.records.map((r) => Buffer.from(r.raw, "base64")));
          assert.ok(raw.equals(readFileSync(join(world.claude, copy.path))), copy.path);
          const flags = store.db.prepare(
            `SELECT r.flags FROM records r JOIN conversations c ON c.id = r.conversation_id
             WHERE c.key = ? ORDER BY r.offset`,
          ).all(copy.conversation) as { flags: number }[];
          const indexed = flags.map((f) => (f.flags & FLAG_INDEXED) !== 0);
          assert.deepEqual(
            indexed,
            indexed.map((_, i) => i >= copy.copiedLines!),
            `only the copy's own lines are indexed: ${copy.path}`,
          );
          // What the copy repeats is still shown as text.
          assert.ok(page.records[0]!.text.includes(parent!.phrases[0]!));
        }
      });
    });

    await t.step("a rebuild indexes the copies the same way", async () => {
      await captureWorld(world, { rebuild: true });
      for (const phrase of parent!.phrases) assert.equal(hits(world, `"${phrase}"`).length, 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a copied line too long to hold leaves the index once it is known for a copy", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const [parent, ...rest] = entries("copies");
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      // Every line longer than 600 bytes takes the streaming path, copies included.
      await runPass(store, ctx, { limits: { maxLine: 600 } });
      const streamed = store.db.prepare(
        `SELECT count(*) AS n FROM records r JOIN conversations c ON c.id = r.conversation_id
         WHERE c.key = ? AND (r.flags & ${FLAG_STREAMED}) != 0`,
      ).get(rest[0]!.conversation) as { n: number };
      assert.ok(streamed.n > 0, "some copied lines were streamed");
    } finally {
      store.close();
    }
    for (const phrase of parent!.phrases) {
      assert.deepEqual(hits(world, `"${phrase}"`).map((h) => h.conversation), [
        parent!.conversation,
      ], phrase);
    }
    for (const copy of rest.filter((e) => e.copiedLines)) {
      assert.ok(hits(world, `"${copy.phrases[0]}"`).length > 0, copy.phrases[0]);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a subagent's .meta.json gives its title and type", async () => {
  const world = await captured();
  try {
    const [meta] = entries("subagent-meta");
    const row = conversation(world, meta!.conversation)!;
    assert.equal(row.title, meta!.title);
    assert.equal(row.parent_key, meta!.parent);
    const type = () =>
      withStore(
        world,
        (store) =>
          store.db.prepare("SELECT agent_type FROM conversations WHERE key = ?")
            .get(meta!.conversation) as { agent_type: string | null },
      );
    assert.equal(type().agent_type, "Explore");
    // `show --json` names it with the conversation's other facts.
    const shown = await runCli("show", [meta!.conversation, "--json"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const page = JSON.parse(shown.stdout);
    assert.equal(page.conversation.agentType, "Explore");
    assert.equal(page.conversation.subagent, true);
    await captureWorld(world, { rebuild: true });
    assert.equal(type().agent_type, "Explore", "derived again by a rebuild");
    // A subagent without one keeps its first prompt as its title, and has no type.
    const [, copy] = entries("copies");
    assert.doesNotMatch(conversation(world, copy!.conversation)!.title ?? "", /^Explore/);
    const main = await runCli("show", [copy!.parent!, "--json"], world.vars);
    assert.equal(JSON.parse(main.stdout).conversation.agentType, null);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a summary-only file titles the session its summary names, not an empty one", async () => {
  const world = await captured();
  try {
    const [session, summaries] = entries("summary-only");
    assert.equal(conversation(world, session!.conversation)!.title, session!.title);
    // The summary-only file's own conversation holds only the summary no file matches.
    const own = conversation(world, `claude:${summaries!.sessionId}`);
    assert.ok(own, "the unmatched summary stays in the file's own conversation");
    assert.equal(own.message_count, 0);
    const found = hits(world, '"cobble-vesper"', { kind: "summary" });
    assert.deepEqual(found.map((h) => h.conversation), [session!.conversation]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("current record types are recognised: no drift on the fixtures it does not expect", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    // A session continued on the web leaves a stub locally: one teleported-from line, no cwd.
    const stubDir = join(world.claude, "projects", "-home-dev-src-lambda");
    mkdirSync(stubDir, { recursive: true });
    const stub = join(stubDir, "0f6c2b1e-4a7d-4c3e-9b8a-2d5e6f7a8b9c.jsonl");
    Deno.writeTextFileSync(
      stub,
      '{"type":"teleported-from","remoteSessionId":"session_01HqkT3vJx8WmN4pR7sY2cZa","messageCount":3}\n',
    );
    const summary = await captureWorld(world);
    assert.ok(!summary.empty.includes(stub), "a teleported-from stub is not an empty source");
    const [current] = entries("current-types");
    const drift = withStore(world, (store) =>
      store.db.prepare(
        `SELECT s.locator, d.detail, d.count FROM drift d JOIN sources s ON s.id = d.source_id`,
      ).all() as { locator: string; detail: string; count: number }[]);
    const expected = ENTRIES.filter((e) =>
      ["unknown-type", "malformed-mixed", "malformed-only"].includes(e.case)
    ).map((e) => join(world.claude, e.path));
    assert.deepEqual(drift.filter((d) => !expected.includes(d.locator)), []);
    const file = join(world.claude, current!.path);
    assert.ok(!summary.empty.includes(file), "the teleported session yielded its conversation");
    withStore(world, (store) => assert.ok(!emptySources(store).includes(file)));
    assert.equal(hits(world, '"osprey-thimble"').length, 1);
    // The request records repeat the prompt: it is found once, as the person's message.
    const prompt = hits(world, '"ferrule-quasar"');
    assert.deepEqual(prompt.map((h) => [h.kind, h.role]), [["message", "user"]]);
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "real Claude Code samples: every record type recognised, a copy-free helper indexed",
  ignore: !corpusPresent(),
  fn: async () => {
    const world = await makeWorld();
    try {
      cpSync(join(CORPUS, "claude", "projects"), join(world.claude, "projects"), {
        recursive: true,
      });
      const loose = join(world.claude, "projects", "-home-dev-samples");
      mkdirSync(loose, { recursive: true });
      cpSync(
        join(CORPUS, "claude", "schema-coverage.jsonl"),
        join(loose, "5b0c7a52-5d0e-4f7e-9a51-000000000001.jsonl"),
      );
      const summary = await captureWorld(world);
      assert.deepEqual(summary.drift, []);
      assert.deepEqual(summary.empty, []);
      // The 2.1.39 compaction helper repeats nothing of its parent: its reply is indexed.
      const helper = hits(world, '"Chronologically analyze each message"');
      assert.ok(helper.length >= 1);
      assert.ok(helper.every((h) => h.conversation.includes("/agent-acompact-")));
    } finally {
      await world.cleanup();
    }
  },
});

Deno.test("a pass keeps the uuids of the parents it read last, and reads one let go again", () => {
  const encoder = new TextEncoder();
  const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  const reads = new Map<string, number>();
  const pass = (): Recall => ({
    ...NO_RECALL,
    chunks: (locator) => {
      reads.set(locator, (reads.get(locator) ?? 0) + 1);
      const i = Number(locator.match(/(\d+)\.jsonl$/)![1]);
      return [{ bytes: encoder.encode(`{"uuid":"${uuidOf(i)}"}\n`), start: true }];
    },
  });
  const parent = (i: number) => `/p/s${i}.jsonl`;
  const recall = pass();
  // A parent's copies, one after another, read it once; the four read last are kept.
  for (const i of [0, 0, 0, 1, 2, 3, 0]) assert.ok(parentHolds(recall, parent(i), uuidOf(i)));
  assert.equal(parentHolds(recall, parent(3), uuidOf(2)), false);
  assert.deepEqual([0, 1, 2, 3].map((i) => reads.get(parent(i))), [1, 1, 1, 1]);
  // A fifth lets go of the one asked about longest ago (1: 0 and 3 were asked about since).
  assert.ok(parentHolds(recall, parent(4), uuidOf(4)));
  assert.ok(parentHolds(recall, parent(0), uuidOf(0)));
  assert.equal(reads.get(parent(0)), 1);
  assert.ok(parentHolds(recall, parent(1), uuidOf(1)));
  assert.equal(reads.get(parent(1)), 2, "read again once let go");
  // Another pass reads afresh.
  assert.ok(parentHolds(pass(), parent(0), uuidOf(0)));
  assert.equal(reads.get(parent(0)), 2);
});

Deno.test("a parent's uuids are read as fields, wherever the stored chunks cut them", () => {
  const encoder = new TextEncoder();
  const uuid = "3f2a9c1e-5b7d-4e8f-a0b1-c2d3e4f5a6b7";
  const field = `"uuid":"${uuid}"`;
  const found = (chunks: Uint8Array[]) => {
    const uuids: string[] = [];
    scanUuids(chunks.map((bytes, i) => ({ bytes, start: i === 0 })), (u) => void uuids.push(u));
    return uuids;
  };
  for (const cut of [0, 1, 7, 8, 20, 43, 44, 45]) {
    // The field starts `cut` bytes before the first 64 KiB chunk of the line ends.
    const chunk = 64 * 1024;
    const head = '{"pad":"';
    const line = `${head}${"x".repeat(chunk - cut - head.length - 2)}",${field}}\n` +
      `{"uuid":"0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D"}\n`;
    assert.equal(line.indexOf(field), chunk - cut);
    const bytes = encoder.encode(line);
    const chunks = [bytes.subarray(0, chunk), bytes.subarray(chunk)];
    assert.deepEqual(found(chunks), [uuid, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"], `cut ${cut}`);
  }
  // Escapes cut anywhere: an escaped backslash ends a string, an escaped quote does not.
  const escapes = encoder.encode(`{"t":"a\\\\","q":"\\",\\"uuid\\":\\"x",${field}}\n`);
  for (let cut = 1; cut < escapes.length; cut++) {
    assert.deepEqual(
      found([escapes.subarray(0, cut), escapes.subarray(cut)]),
      [uuid],
      `cut ${cut}`,
    );
  }
  // A cut inside a multi-byte character does not hide the field after it.
  const accented = encoder.encode(`{"t":"é",${field}}\n`);
  assert.deepEqual(found([accented.subarray(0, 7), accented.subarray(7)]), [uuid]);
  assert.deepEqual(found([]), []);
  // Spaced, escaped, last in the line: read as JSON reads it. A nested field, or one in a
  // string, is not the line's.
  const lines = [
    JSON.stringify({ type: "user", message: { content: "hi" }, uuid }, null, 1)
      .replaceAll("\n", " "),
    `{ "type" : "assistant" , "\\u0075uid" : "${uuid.toUpperCase().replace("-", "\\u002d")}" }`,
    `{"message": {"uuid": "11111111-1111-4111-8111-111111111111"}, "text": "\\"uuid\\":\\"x\\""}`,
  ].join("\n");
  const spaced = encoder.encode(lines);
  for (const cut of [1, 5, 30, 90]) {
    assert.deepEqual(found([spaced.subarray(0, cut), spaced.subarray(cut)]), [uuid, uuid]);
  }
});

Deno.test("a transcript written as spaced JSON is read by its fields: copies once, summaries titled", async (t) => {
  const world = await makeWorld();
  try {
    cpSync(join(FIXTURES, "spaced_json", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    const session = "claude:9fca650e-c4d4-4601-8350-b8ea11fbd1ea";
    const titled = "claude:36f54ca4-bbb6-4b59-87a8-459b18d91eaf";
    const found = () => {
      for (const phrase of ["ferret-lattice", "sable-quarry"]) {
        assert.deepEqual(hits(world, `"${phrase}"`).map((h) => h.conversation), [session], phrase);
      }
      for (
        const [phrase, copy] of [["kiln-parapet", "acompact-bd10ba"], [
          "osprey-ledger",
          "aside_question-8685694c2bcf7b75",
        ]]
      ) {
        const own = hits(world, `"${phrase}"`);
        assert.ok(
          own.length > 0 && own.every((h) => h.conversation === `${session}/agent-${copy}`),
          phrase,
        );
      }
      assert.equal(conversation(world, titled)!.title, "Rename tinder-cobalt flag to --dry-run");
      const summary = hits(world, '"tinder-cobalt"', { kind: "summary" });
      assert.deepEqual(summary.map((h) => h.conversation), [titled]);
    };
    await t.step("captured", async () => {
      await captureWorld(world);
      found();
    });
    await t.step("rebuilt", async () => {
      await captureWorld(world, { rebuild: true });
      found();
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a helper's copy is titled after its session, whenever that title comes or changes", async (t) => {
  const world = await makeWorld();
  const session = "9fca650e-c4d4-4601-8350-b8ea11fbd1ea";
  const folder = join(world.claude, "projects", "-home-dev-src-lattice");
  const parentFile = join(folder, `${session}.jsonl`);
  const compaction = `claude:${session}/agent-acompact-bd10ba`;
  const aside = `claude:${session}/agent-aside_question-8685694c2bcf7b75`;
  const titles = () => [compaction, aside].map((key) => conversation(world, key)?.title);
  const asked = "Why does the ferret-lattice ledger sync retry forever when the upstream…";
  try {
    cpSync(join(FIXTURES, "spaced_json", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    const held = join(world.dir, "parent.jsonl");
    renameSync(parentFile, held);

    await t.step("captured before its session: named by the session's short id", async () => {
      await captureWorld(world);
      assert.deepEqual(titles(), [
        "Compaction of claude:9fca650e",
        "Side question in claude:9fca650e",
      ]);
    });

    await t.step("its session captured after it: its title", async () => {
      renameSync(held, parentFile);
      await captureWorld(world);
      const parent = conversation(world, `claude:${session}`)!.title;
      assert.equal(parent, asked);
      assert.deepEqual(titles(), [
        cutTitle(`Compaction of ${asked}`),
        cutTitle(`Side question in ${asked}`),
      ]);
    });

    await t.step("its session renamed: the new title", async () => {
      const rename = {
        type: "custom-title",
        customTitle: "Ledger sync backoff",
        sessionId: session,
      };
      Deno.writeTextFileSync(parentFile, JSON.stringify(rename) + "\n", { append: true });
      await captureWorld(world);
      assert.deepEqual(titles(), [
        "Compaction of Ledger sync backoff",
        "Side question in Ledger sync backoff",
      ]);
    });

    await t.step("rebuilt, shown and found with it", async () => {
      await captureWorld(world, { rebuild: true });
      assert.deepEqual(titles(), [
        "Compaction of Ledger sync backoff",
        "Side question in Ledger sync backoff",
      ]);
      const shown = await runCli("show", [compaction], world.vars);
      assert.equal(shown.code, 0, shown.stderr);
      assert.ok(shown.stdout.startsWith("Compaction of Ledger sync backoff\n"), shown.stdout);
      const found = hits(world, '"kiln-parapet"');
      assert.deepEqual(found.map((h) => h.title), ["Compaction of Ledger sync backoff"]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a copy is searched once after its parent's transcript is gone", async (t) => {
  const [parent, ...rest] = entries("copies");
  const copies = rest.filter((e) => e.copiedLines);
  const foundOnce = (world: World) => {
    for (const phrase of parent!.phrases) {
      assert.deepEqual(hits(world, `"${phrase}"`).map((h) => h.conversation), [
        parent!.conversation,
      ], phrase);
    }
    for (const copy of copies) {
      const own = hits(world, `"${copy.phrases[0]}"`);
      assert.ok(own.length > 0 && own.every((h) => h.conversation === copy.conversation));
    }
  };

  await t.step("captured with its parent, the parent deleted, the store rebuilt", async () => {
    const world = await captured();
    try {
      rmSync(join(world.claude, parent!.path));
      await captureWorld(world, { rebuild: true });
      foundOnce(world);
    } finally {
      await world.cleanup();
    }
  });

  await t.step("first captured after the parent, captured earlier, was deleted", async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    const held = join(world.dir, "held");
    try {
      mkdirSync(held);
      for (const copy of copies) {
        renameSync(join(world.claude, copy.path), join(held, basename(copy.path)));
      }
      await captureWorld(world);
      rmSync(join(world.claude, parent!.path));
      for (const copy of copies) {
        renameSync(join(held, basename(copy.path)), join(world.claude, copy.path));
      }
      await captureWorld(world);
      foundOnce(world);
      await captureWorld(world, { rebuild: true });
      foundOnce(world);
    } finally {
      await world.cleanup();
    }
  });
});

Deno.test("a summary-only file titles its session from the store once the files are gone", async (t) => {
  const [session, summaries] = entries("summary-only");
  const titled = (world: World) => {
    assert.equal(conversation(world, session!.conversation)!.title, session!.title);
    const found = hits(world, '"cobble-vesper"', { kind: "summary" });
    assert.deepEqual(found.map((h) => h.conversation), [session!.conversation]);
  };

  await t.step("captured with its session, both files deleted, the store rebuilt", async () => {
    const world = await captured();
    try {
      rmSync(join(world.claude, session!.path));
      rmSync(join(world.claude, summaries!.path));
      await captureWorld(world, { rebuild: true });
      titled(world);
    } finally {
      await world.cleanup();
    }
  });

  await t.step("first captured after the session, captured earlier, was deleted", async () => {
    const world = await makeWorld({ fixtures: ["claude"] });
    const held = join(world.dir, basename(summaries!.path));
    try {
      renameSync(join(world.claude, summaries!.path), held);
      await captureWorld(world);
      rmSync(join(world.claude, session!.path));
      renameSync(held, join(world.claude, summaries!.path));
      await captureWorld(world);
      titled(world);
      await captureWorld(world, { rebuild: true });
      titled(world);
    } finally {
      await world.cleanup();
    }
  });
});

Deno.test("a summary-only file found before its session titles it, captured and rebuilt alike", async () => {
  // A pass reads a summary-only file after the others, but numbers new sources in the order
  // found, and a rebuild derives them in that order: here the summary-only file comes first.
  const [session, summaries] = entries("summary-only");
  const world = await makeWorld({ fixtures: ["claude"] });
  const first = join(
    world.claude,
    "projects/-home-dev-src-iota/0a000000-0000-4000-8000-000000000000.jsonl",
  );
  const derived = () =>
    withStore(world, (store) => ({
      conversations: store.db.prepare(
        `SELECT key, title, parent_key, subagent, message_count FROM conversations ORDER BY key`,
      ).all(),
      records: store.db.prepare(
        `SELECT s.locator, r.offset, r.kind, r.role, r.flags, c.key
         FROM records r JOIN sources s ON s.id = r.source_id
         LEFT JOIN conversations c ON c.id = r.conversation_id ORDER BY s.locator, r.offset`,
      ).all(),
    }));
  try {
    renameSync(join(world.claude, summaries!.path), first);
    await captureWorld(world);
    const ids = withStore(
      world,
      (store) =>
        [first, join(world.claude, session!.path)].map((locator) =>
          (store.db.prepare("SELECT id FROM sources WHERE locator = ?").get(locator) as {
            id: number;
          })
            .id
        ),
    );
    assert.ok(ids[0]! < ids[1]!, `the summary-only file is numbered first (${ids})`);
    assert.equal(conversation(world, session!.conversation)!.title, session!.title);
    const captured = derived();
    await captureWorld(world, { rebuild: true });
    assert.equal(conversation(world, session!.conversation)!.title, session!.title);
    assert.deepEqual(derived(), captured);
  } finally {
    await world.cleanup();
  }
});

Deno.test("toolOf gives a Claude Code call its id, tool and input, and a result the id it answers", () => {
  const path = join(
    FIXTURES,
    "tool_heavy/claude/projects/-home-dev-src-forge/b71c4e20-5d3a-4f8e-9a61-7e2d0c9f4a13.jsonl",
  );
  const ref = { agent: "claude", locator: path, path, format: "jsonl" } as const;
  const adapter = ADAPTERS.find((a) => a.agent === "claude" && !a.claims)!;
  const tools = readFileSync(path, "utf8").trimEnd().split("\n")
    .map((line) => adapter.toolOf!(new TextEncoder().encode(line), ref))
    .filter((parts) => parts !== null);
  assert.equal(tools.length, 16, "eight calls and eight results; nothing else");
  assert.deepEqual(tools[0]!.calls, [{
    id: "toolu_01GantryBash0001",
    name: "Bash",
    input: "gh run view 4411 --log | grep -n 'step' | head -40\nRead the CI step timings",
  }]);
  assert.deepEqual(tools[1]!.calls.map((c) => c.name), ["Read"]);
  // The two parallel calls' results follow both calls, each naming its own.
  assert.deepEqual(tools[2]!.results, [{ id: "toolu_01GantryBash0001", error: false }]);
  assert.deepEqual(tools[3]!.results, [{ id: "toolu_01GantryRead0002", error: false }]);
});
