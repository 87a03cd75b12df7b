// A store derived by older adapters (or by a build before derivations were recorded) is derived
// again by the next capture, in bounded transactions that a stop or a kill leaves whole, and then
// answers exactly as a fresh capture of the same files: searches, conversation rows, records, the
// index, keys and drift. Project mirrors follow through `record_changes`.

import { derivationOf } from "../../../lib/capture/derivation.ts";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { passOptions, runCapture } from "../../../lib/capture/run.ts";
import { rederive } from "../../../lib/capture/rederive.ts";
import { watch } from "../../../lib/capture/watch.ts";
import type { Progress } from "../../../lib/capture/progress.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import type { Adapter, LineAdapter } from "../../../lib/sources/adapter.ts";
import { claudeCode } from "../../../lib/sources/claude_code.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { listMirrors, wantMirror } from "../../../lib/store/mirror.ts";
import { search } from "../../../lib/store/search.ts";
import { projectOf } from "../../../lib/paths.ts";
import { derivedState, makeStoreUnversioned } from "../../_old_store.ts";
import { addInvisible } from "../../_invisible.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  startUntilLine,
  withStore,
  type World,
} from "../../_helpers.ts";

/**
 * The adapters of a build whose Claude Code adapter (derivation `version`) indexed what today's
 * does not: the records a copy repeats from its parent, and a tool output's preview whose whole
 * output is a file of its own; nor did it know a subagent's type.
 */
function olderClaude(version: number): Adapter[] {
  const older: LineAdapter<unknown> = {
    ...(claudeCode as LineAdapter<unknown>),
    derivation: version,
    parseLine(line, state, source, recall) {
      const derived = claudeCode.parseLine(line, state as never, source, recall);
      const conversation = derived.conversation && { ...derived.conversation, agentType: null };
      if (!derived.copied) return { ...derived, conversation };
      const text = claudeCode.textOf(line.bytes, source);
      return { ...derived, conversation, copied: false, joined: false, text };
    },
  };
  return ADAPTERS.map((a) => (a === claudeCode ? older as Adapter : a));
}

/** Today's adapters with the Claude Code adapter's derivation raised to `version`. */
function claudeAt(version: number): Adapter[] {
  return ADAPTERS.map((a) => (a === claudeCode ? { ...claudeCode, derivation: version } : a));
}

/** Words the fixtures hold: in copies and their parent, in a preview and its output, elsewhere. */
const TERMS = [
  "mistral-bobbin",
  "tallow-gantry",
  "gossamer-pylon",
  "pumice-ledger",
  "zephyr-cartograph",
  "ember-tributary",
  "juniper-caravel",
  "password",
  "midnight",
  "overflow",
  "the",
];

/** What `adapters` find in the world's store for each term: the conversation of every hit. */
function answers(world: World, adapters: readonly Adapter[], data = world.data) {
  const ctx = loadContext({ env: envFrom({ ...world.vars, LOGBOOK_DATA_DIR: data }) });
  const store = openStore(ctx, { readOnly: true });
  try {
    return TERMS.map((term) => {
      const hits = search(store, adapters, redactorFor(ctx), { query: term, limit: 1000 }).hits;
      return `${term}: ${hits.map((h) => `${h.conversation}#${h.kind}`).sort().join(" ")}`;
    });
  } finally {
    store.close();
  }
}

/** The derived state of the store in `data` (the world's own by default). */
function stateOf(world: World, data = world.data): Record<string, string[]> {
  const store = HistoryStore.open({ path: join(data, "history.db"), root: data });
  try {
    return derivedState(store, world.dir);
  } finally {
    store.close();
  }
}

/** Captures the world's files with `adapters` into a fresh store of its own; returns its dir. */
async function freshCapture(world: World, adapters: readonly Adapter[]): Promise<string> {
  const data = join(world.dir, "fresh");
  const vars = { ...world.vars, LOGBOOK_DATA_DIR: data };
  const ctx = loadContext({ env: envFrom(vars) });
  const store = openStore(ctx);
  try {
    const result = await runCapture({ ctx, store, redact: redactorFor(ctx), adapters });
    assert.equal(result.status, "captured");
  } finally {
    store.close();
  }
  return data;
}

/** How many of the world's Claude Code sources record `derivation`. */
function derivedWith(world: World, derivation: string): number {
  return withStore(
    world,
    (store) =>
      (store.db.prepare(
        "SELECT count(*) AS n FROM sources WHERE agent = 'claude' AND derivation = ?",
      ).get(
        derivation,
      ) as {
        n: number;
      }).n,
  );
}

Deno.test("a store an older adapter derived is derived again and answers as a fresh capture", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    await captureWorld(world, { adapters: olderClaude(1) });
    const today = claudeAt(2);
    const before = answers(world, today);
    const fresh = await freshCapture(world, today);
    const expected = answers(world, today, fresh);
    assert.notDeepEqual(before, expected, "the older derivation answers otherwise");

    const events: Progress[] = [];
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const result = await runCapture({
        ctx,
        store,
        redact: redactorFor(ctx),
        adapters: today,
        onProgress: (p) => events.push(p),
      });
      assert.equal(result.status === "captured" && result.rederived > 0, true);
      const claudeSources = (store.db.prepare(
        "SELECT count(*) AS n FROM sources WHERE agent = 'claude' AND locator NOT LIKE '%history.jsonl' AND locator NOT LIKE '%.txt'",
      ).get() as { n: number }).n;
      assert.equal(result.status === "captured" && result.rederived, claudeSources);
    } finally {
      store.close();
    }
    assert.deepEqual(answers(world, today), expected);
    assert.deepEqual(stateOf(world), stateOf(world, fresh));

    // Progress: the phase, every stale source counted, bytes and sources only ever growing.
    const rederiving = events.filter((e) => e.phase === "rederiving");
    assert.ok(rederiving.length > 0, "progress events while deriving again");
    const total = rederiving[0]!.sourcesTotal;
    assert.ok(total > 0 && rederiving.every((e) => e.sourcesTotal === total));
    for (let i = 1; i < rederiving.length; i++) {
      assert.ok(rederiving[i]!.sourcesDone >= rederiving[i - 1]!.sourcesDone);
      assert.ok(rederiving[i]!.bytesDone >= rederiving[i - 1]!.bytesDone);
    }
    assert.equal(rederiving.at(-1)!.sourcesDone, total);
    assert.ok(rederiving.at(-1)!.bytesDone <= rederiving[0]!.bytesTotal);

    // Derived as today: the next run has nothing to derive again.
    const again = await captureWorld(world, { adapters: today });
    assert.equal(again.records, 0);
    assert.deepEqual(stateOf(world), stateOf(world, fresh));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store captured before derivations were recorded is derived again whole, as a fresh capture", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  addInvisible(world);
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => makeStoreUnversioned(store, redactorFor(ctx)));
    const fresh = await freshCapture(world, ADAPTERS);
    const expected = answers(world, ADAPTERS, fresh);
    assert.ok(expected.some((a) => a.startsWith("password: claude:")), "found in a fresh store");
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const all = (store.db.prepare("SELECT count(*) AS n FROM sources").get() as { n: number }).n;
      const result = await runCapture({ ctx, store, redact: redactorFor(ctx) });
      assert.equal(result.status === "captured" && result.rederived, all, "every source");
    } finally {
      store.close();
    }
    assert.deepEqual(answers(world, ADAPTERS), expected);
    assert.deepEqual(stateOf(world), stateOf(world, fresh));
  } finally {
    await world.cleanup();
  }
});

Deno.test("watch() derives a store again before it captures, and says so", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world, { adapters: olderClaude(1) });
    // A transcript new since: the watcher's first capture stores it, once the store is derived
    // again (the first thing it says is which happened first).
    addInvisible(world);
    const today = claudeAt(2);
    const fresh = await freshCapture(world, today);
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    const controller = new AbortController();
    // What the watcher says and does, in order, until its first capture.
    const events: string[] = [];
    let captured!: () => void;
    const capture = new Promise<void>((resolve) => captured = resolve);
    const watching = watch({
      ctx,
      store,
      redact: redactorFor(ctx),
      adapters: today,
      signal: controller.signal,
      timings: { rediscoverMs: 3_600_000 },
      onNote: (note) => events.push(note),
      onCapture: (summary) => {
        events.push(`captured ${summary.records} records`);
        captured();
      },
    });
    try {
      await capture;
      assert.match(events[0] ?? "", /^derived \d+ stored sources again/);
      assert.match(events.at(-1)!, /^captured \d+ records/);
    } finally {
      controller.abort();
      await watching;
      store.close();
    }
    assert.deepEqual(stateOf(world), stateOf(world, fresh));
  } finally {
    await world.cleanup();
  }
});

Deno.test("deriving again stopped midway leaves whole sources and searches working, and goes on from there", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world, { adapters: olderClaude(1) });
    const today = claudeAt(2);
    const fresh = await freshCapture(world, today);
    const conversationsBefore = stateOf(world).conversations;

    // Stopped inside the third transaction (a source each): two sources are done.
    const controller = new AbortController();
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    let first: Awaited<ReturnType<typeof rederive>>;
    try {
      first = await rederive({
        ...passOptions(ctx, store, redactorFor(ctx), today),
        limits: { rawBudget: 1 },
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === "rederiving" && p.sourcesDone >= 2 && store.db.isTransaction) {
            controller.abort();
          }
        },
      });
    } finally {
      store.close();
    }
    assert.deepEqual(first, { sources: 2, done: false });
    assert.equal(derivedWith(world, "1.2"), 2, "two sources derived as today");
    // Meanwhile searches answer, and conversation rows are as they were until the end.
    assert.equal(answers(world, today).length, TERMS.length);
    assert.deepEqual(stateOf(world).conversations, conversationsBefore);

    // The next run goes on from there and ends as a fresh capture.
    const summary = await captureWorld(world, { adapters: today });
    assert.equal(summary.complete, true);
    assert.deepEqual(stateOf(world), stateOf(world, fresh));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a run killed while deriving again loses nothing: the next one finishes the work", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => makeStoreUnversioned(store, redactorFor(ctx)));
    const raw = () =>
      withStore(
        world,
        (store) =>
          store.db.prepare("SELECT id, raw FROM records ORDER BY id").all().map((r) =>
            `${r.id}:${(r.raw as Uint8Array).join(",")}`
          ).join(";"),
      );
    const rawBefore = raw();
    const fresh = await freshCapture(world, ADAPTERS);

    // A child derives again a source per transaction, and stops dead inside the second.
    const child = await startUntilLine(
      join(import.meta.dirname!, "_rederive_child.ts"),
      world.vars,
    );
    await child.kill();
    const held = /^holding after (\d+)\n$/.exec(child.line);
    assert.ok(held, `the child said: ${child.line}`);

    assert.equal(raw(), rawBefore, "raw bytes as they were");
    const done = Number(held[1]);
    assert.ok(done >= 1);
    assert.equal(
      derivedWith(world, derivationOf(claudeCode as Adapter)),
      done,
      "the transactions committed, and only them",
    );
    const summary = await captureWorld(world);
    assert.equal(summary.complete, true);
    assert.equal(raw(), rawBefore);
    assert.deepEqual(stateOf(world), stateOf(world, fresh));
  } finally {
    await world.cleanup();
  }
});

Deno.test("records a project mirror holds are noted as changed, and the mirror answers as the store", async () => {
  const world = await makeWorld();
  try {
    // The fixture's session with its copies, moved into a project whose mirror is on.
    const project = join(world.dir, "spindle");
    await Deno.mkdir(project, { recursive: true });
    const folder = join(world.claude, "projects", project.replaceAll("/", "-"));
    cpSync(join(FIXTURES, "claude", "projects", "-home-dev-src-theta"), folder, {
      recursive: true,
    });
    for (const path of walk(folder)) {
      if (!path.endsWith(".jsonl")) continue;
      writeFileSync(
        path,
        readFileSync(path, "utf8").replaceAll('"/home/dev/src/theta"', JSON.stringify(project)),
      );
    }
    withStore(world, (store) => wantMirror(store, projectOf(project).root, true, 0));
    await captureWorld(world, { adapters: olderClaude(1) });
    const mirror = withStore(world, (store) => listMirrors(store)[0]!);
    assert.equal(mirror.state, "current");
    const today = claudeAt(2);
    const redact = redactorFor(loadContext({ env: world.env }));
    const find = (path: string, root: string, query: string) => {
      const store = HistoryStore.open({ path, root });
      try {
        return search(store, today, redact, { query, limit: 50 }).hits.map((h) => h.record)
          .sort();
      } finally {
        store.close();
      }
    };
    const main = (query: string) => find(join(world.data, "history.db"), world.data, query);
    const copy = (query: string) => find(mirror.path, join(project, ".logbook"), query);
    assert.equal(copy("mistral-bobbin").length, 3, "the older derivation indexed both copies");

    let noted: number[] = [];
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      // Counted before the capture's own mirror sync trims them.
      const result = await rederive(passOptions(ctx, store, redactorFor(ctx), today));
      assert.equal(result.done, true);
      noted =
        (store.db.prepare("SELECT DISTINCT record_id FROM record_changes ORDER BY 1").all() as {
          record_id: number;
        }[]).map((r) => r.record_id);
    } finally {
      store.close();
    }
    // Every record of the sources derived again that sits in the mirrored project.
    const expected = withStore(world, (store) =>
      (store.db.prepare(
        `SELECT r.id FROM records r JOIN sources s ON s.id = r.source_id
         JOIN conversations c ON c.id = r.conversation_id
         WHERE s.derivation = '1.2' AND c.project_root = ? ORDER BY r.id`,
      ).all(projectOf(project).root) as { id: number }[]).map((r) => r.id));
    assert.ok(expected.length > 0);
    assert.deepEqual(noted, expected);

    await captureWorld(world, { adapters: today });
    for (const term of ["mistral-bobbin", "tallow-gantry", "zephyr-cartograph"]) {
      assert.equal(main(term).length, 1, `${term}: found once, in the parent or the output file`);
    }
    for (const term of ["mistral-bobbin", "tallow-gantry", "zephyr-cartograph", "pumice-ledger"]) {
      assert.deepEqual(copy(term), main(term), term);
    }
  } finally {
    await world.cleanup();
  }
});

function* walk(dir: string): Iterable<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else yield path;
  }
}
