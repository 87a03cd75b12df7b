// The text index's scrub after a forget (lib/store/scrub.ts): a forget that leaves it for later is
// found by no search at once, but its words stay in the index's segments until the scrub, which
// leaves them in no file; a scrub stopped between steps is finished by the next one or by the
// next capture; a rebuild, which empties the index, unmarks the store.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { main as reindex } from "../../../commands/reindex.ts";
import { main as search } from "../../../commands/search.ts";
import { main as status } from "../../../commands/status.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { forget } from "../../../lib/store/forget.ts";
import { tryShared } from "../../../lib/lock.ts";
import {
  FORGET_LOCK,
  scrubIndex,
  scrubIndexYielding,
  scrubPendingSince,
} from "../../../lib/store/scrub.ts";
import { writeClaudeCorpus } from "../../_corpus.ts";
import {
  captureIo,
  makeWorld,
  runCli,
  startCliUntil,
  startUntilLine,
  withStore,
  type World,
} from "../../_helpers.ts";

const redact = (text: string) => text;

/** Sessions of their own, each with one word no other holds (`xylophone<letters>`). */
const WORDS = ["quintessentialxylophonealpha", "quintessentialxylophonebravo"];

function writeSession(world: World, n: number): string {
  const id = `0000000${n}-aaaa-4bbb-8ccc-dddddddddddd`;
  const cwd = "/home/dev/src/scrubbed";
  const dir = join(world.claude, "projects", cwd.replaceAll("/", "-"));
  Deno.mkdirSync(dir, { recursive: true });
  const lines = [0, 1, 2].map((i) =>
    JSON.stringify({
      type: i % 2 ? "assistant" : "user",
      sessionId: id,
      cwd,
      uuid: `${n}${i}000000-aaaa-4bbb-8ccc-dddddddddddd`,
      timestamp: `2026-06-0${n + 1}T10:00:0${i}.000Z`,
      message: i % 2
        ? { id: `msg_${n}_${i}`, role: "assistant", content: [{ type: "text", text: "noted" }] }
        : { role: "user", content: `please keep ${WORDS[n]} in mind` },
    })
  );
  Deno.writeTextFileSync(join(dir, `${id}.jsonl`), lines.join("\n") + "\n");
  return `claude:${id}`;
}

/** True when the store's file or its log holds `text` (the tail of a word: see WORDS). */
function storeHolds(world: World, text: string): boolean {
  const needle = Buffer.from(text);
  for (const name of ["history.db", "history.db-wal"]) {
    try {
      if (readFileSync(join(world.data, name)).includes(needle)) return true;
    } catch {
      // absent
    }
  }
  return false;
}

async function hits(world: World, query: string): Promise<number> {
  const io = captureIo();
  return (await search([query, "--json"], io, world.env)) === 0
    ? io.stdout().trim().split("\n").length
    : 0;
}

async function captured(): Promise<{ world: World; keys: string[] }> {
  const world = await makeWorld();
  // Enough beside them for the index to have segments of several sizes.
  writeClaudeCorpus(world.claude, { sessions: 40, lines: 20 });
  const keys = WORDS.map((_, n) => writeSession(world, n));
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  return { world, keys };
}

function open(world: World): HistoryStore {
  return HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
}

function integrity(store: HistoryStore): void {
  store.db.exec("INSERT INTO fts (fts) VALUES ('integrity-check')");
}

Deno.test("a forget left for later: found by no search at once, its words gone from the file after the scrub", async () => {
  const { world, keys } = await captured();
  try {
    assert.ok(storeHolds(world, "xylophonealpha"), "the word is in the store first");
    const store = open(world);
    try {
      const result = forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" });
      assert.equal(result.indexScrubbed, false);
      assert.notEqual(scrubPendingSince(store), null, "the store is marked");
      assert.equal(await hits(world, WORDS[0]!), 0, "no search finds it");
      // Its record's bytes were zeroed; the index's segments still hold the word.
      assert.ok(storeHolds(world, "xylophonealpha"), "the index holds it until the scrub");
      const io = captureIo();
      assert.equal(await status([], io, world.env), 0);
      assert.match(
        io.stdout(),
        /^text index: still holds the words of what was forgotten at .*run "logbook forget --finish"/m,
      );

      const scrubbed = scrubIndex(store);
      assert.ok(scrubbed && scrubbed.steps >= 1, "the scrub ran");
      assert.equal(scrubPendingSince(store), null, "the mark is gone");
      assert.equal(storeHolds(world, "xylophonealpha"), false, "no file holds the word");
      const json = captureIo();
      assert.equal(await status(["--json"], json, world.env), 0);
      assert.equal(JSON.parse(json.stdout()).store.forgottenInIndexSince, null);
      integrity(store);
      assert.equal(scrubIndex(store), null, "nothing left to do");
    } finally {
      store.close();
    }
    assert.ok(await hits(world, WORDS[1]!) > 0, "the other conversation stays");
    assert.ok(storeHolds(world, "xylophonebravo"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a scrub stopped between steps keeps the mark; the next one, or the next capture, finishes it", async () => {
  const { world, keys } = await captured();
  try {
    const store = open(world);
    try {
      forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" });
      // One page a step, stopped after the first: what was merged stays merged.
      const stop = new AbortController();
      const stopped = scrubIndex(store, {
        pages: 1,
        onStep: () => stop.abort(),
        signal: stop.signal,
      });
      assert.equal(stopped, null);
      assert.notEqual(scrubPendingSince(store), null, "still marked");
      integrity(store);
      const done = scrubIndex(store, { pages: 1 });
      assert.ok(done && done.steps > 1, `finished in ${done?.steps} steps of a page`);
      assert.equal(storeHolds(world, "xylophonealpha"), false);
      integrity(store);

      // A forget whose scrub never ran (its process killed): the next capture does it.
      forget(store, { ids: [keys[1]!] }, { redact, scrub: "later" });
      assert.ok(storeHolds(world, "xylophonebravo"));
    } finally {
      store.close();
    }
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    withStore(world, (after) => {
      assert.equal(scrubPendingSince(after), null);
      integrity(after);
    });
    assert.equal(storeHolds(world, "xylophonebravo"), false);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a scrub waits between two steps while a forget elsewhere holds the forget lock, then ends the work of both", async () => {
  const { world, keys } = await captured();
  try {
    const place = { run: join(world.data, "run"), root: world.data };
    const store = open(world);
    const other = open(world);
    try {
      forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" });
      const steps: number[] = [];
      let waitedAfter: number | null = null;
      let held: ReturnType<typeof tryShared> = null;
      const scrubbed = await scrubIndexYielding(store, {
        pages: 1,
        forgets: place,
        // After its first step, a forget in another process begins (it holds the lock shared).
        onStep: (n) => {
          steps.push(n);
          if (n === 1) held = tryShared(place.run, place.root, FORGET_LOCK);
        },
        // The scrub waits before its second step; the forget runs meanwhile, with no step
        // beside it, and lets the lock go.
        onWait: () => {
          waitedAfter = steps.length;
          forget(other, { ids: [keys[1]!] }, { redact, scrub: "later" });
          held!.release();
        },
      });
      assert.notEqual(held, null, "the forget took the lock");
      assert.equal(waitedAfter, 1, "the scrub waited after its first step");
      assert.ok(scrubbed && scrubbed.steps > 1, `went on after the wait: ${scrubbed?.steps}`);
      assert.equal(scrubPendingSince(store), null);
      integrity(store);
    } finally {
      other.close();
      store.close();
    }
    // Both forgets' words are out of the index: the one before the scrub and the one during it.
    assert.equal(storeHolds(world, "xylophonealpha"), false);
    assert.equal(storeHolds(world, "xylophonebravo"), false);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget --finish says it waits for a forget running beside it, and finishes once it ends", async () => {
  const { world, keys } = await captured();
  try {
    withStore(world, (store) => forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" }));
    const held = tryShared(join(world.data, "run"), world.data, FORGET_LOCK);
    assert.ok(held, "the lock is free to take");
    const child = await startCliUntil(
      "forget",
      ["--finish", "--json"],
      world.vars,
      /Waiting for a forget running beside this to finish\n/,
    );
    let result;
    try {
      assert.ok(child.said, "it said it waits");
      withStore(world, (store) => assert.notEqual(scrubPendingSince(store), null, "not yet"));
    } finally {
      held.release();
      result = await child.finish();
    }
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).pending, true);
    withStore(world, (store) => assert.equal(scrubPendingSince(store), null));
    assert.equal(storeHolds(world, "xylophonealpha"), false);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a rebuild empties the index, and with it what a forget left there: the mark goes", async () => {
  const { world, keys } = await captured();
  try {
    withStore(world, (store) => forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" }));
    assert.equal(await reindex(["--rebuild", "--quiet"], captureIo(), world.env), 0);
    withStore(world, (after) => {
      assert.equal(scrubPendingSince(after), null);
      integrity(after);
    });
    assert.equal(storeHolds(world, "xylophonealpha"), false);
    assert.ok(await hits(world, WORDS[1]!) > 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a scrub killed inside a step (SIGKILL) loses nothing: the store is whole and marked, and forget --finish ends it", async () => {
  const { world, keys } = await captured();
  try {
    withStore(world, (store) => forget(store, { ids: [keys[0]!] }, { redact, scrub: "later" }));
    const child = await startUntilLine(join(import.meta.dirname!, "_scrub_child.ts"), world.vars);
    await child.kill();
    assert.equal(child.line, "holding after 2\n", "killed inside its third step");

    withStore(world, (killed) => {
      integrity(killed);
      assert.notEqual(scrubPendingSince(killed), null, "still marked");
    });
    const finished = await runCli("forget", ["--finish", "--json"], world.vars);
    assert.equal(finished.code, 0, finished.stderr);
    const result = JSON.parse(finished.stdout);
    assert.equal(result.pending, true);
    assert.ok(result.steps >= 1);
    withStore(world, (after) => {
      integrity(after);
      assert.equal(scrubPendingSince(after), null);
    });
    assert.equal(storeHolds(world, "xylophonealpha"), false);
    assert.ok(await hits(world, WORDS[1]!) > 0);
  } finally {
    await world.cleanup();
  }
});
