// A pass keeps only the sources whose files changed since they were read, and still tells every
// file it found (what `status` shows of them) as it is on disk; with folder listings kept from
// the last run, every change to a file or a folder is still found; and a pass that finds its files
// while a worker reads the store's sources sees what one that read them first does.

import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { discoverSources, type SeenFiles } from "../../../lib/capture/discover.ts";
import { loadSources, loadSourcesAside } from "../../../lib/capture/identity.ts";
import { DEFAULT_LIMITS } from "../../../lib/capture/limits.ts";
import { discoverContext, runCapture } from "../../../lib/capture/run.ts";
import { type KnownSource, lookAt, NOT_FOUND } from "../../../lib/capture/source.ts";
import { type Context, loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { type Adapter, pathOfLocator, type SourceRef } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";
import { makeWorld, runPass } from "../../_helpers.ts";

Deno.test("a pass tells every file it found as it is on disk, read again or not", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    await runPass(store, ctx);
    const files = store.stmt(
      "SELECT locator FROM sources WHERE format = 'jsonl' ORDER BY id",
    ).all() as { locator: string }[];
    assert.ok(files.length > 2, "sources were captured");
    const asOnDisk = (path: string) => {
      const stat = Deno.lstatSync(path);
      return { size: stat.size, mtimeMs: stat.mtime!.getTime() };
    };
    const asSeen = (seen: SeenFiles, path: string) => {
      const file = seen.get(path);
      return file && { size: file.size, mtimeMs: file.mtimeMs };
    };

    let seen: SeenFiles | undefined;
    const idle = await runPass(store, ctx, { onFound: (found) => (seen = found) });
    assert.equal(idle.changed, 0);
    assert.equal(seen!.size, idle.sources);
    for (const { locator } of files) assert.deepEqual(asSeen(seen!, locator), asOnDisk(locator));
    assert.equal(seen!.get(`${files[0]!.locator}.not-there`), undefined);

    const grown = files[1]!.locator;
    appendFileSync(grown, "\n");
    const next = await runPass(store, ctx, { onFound: (found) => (seen = found) });
    assert.equal(next.changed, 1);
    for (const { locator } of files) assert.deepEqual(asSeen(seen!, locator), asOnDisk(locator));
  } finally {
    store.close();
    await world.cleanup();
  }
});

/** Every folder under `root` (and it) with its mtime an hour ago, as folders long settled are. */
function settle(root: string): void {
  const past = new Date(Date.now() - 3_600_000);
  const folders = [root];
  for (let i = 0; i < folders.length; i++) {
    for (const entry of Deno.readDirSync(folders[i]!)) {
      if (entry.isDirectory) folders.push(`${folders[i]}/${entry.name}`);
    }
  }
  for (const folder of folders.reverse()) Deno.utimeSync(folder, past, past);
}

Deno.test("a run with the folder listings of the last finds every change to files and folders", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  const redact = redactorFor(ctx);
  const run = async () => {
    const result = await runCapture({ ctx, store, redact });
    assert.equal(result.status, "captured");
    return result.status === "captured" ? result.summary : assert.fail("not captured");
  };
  const line = (session: string, text: string) =>
    JSON.stringify({
      type: "user",
      sessionId: session,
      uuid: crypto.randomUUID(),
      timestamp: "2026-01-01T00:00:00Z",
      message: { role: "user", content: text },
    }) + "\n";
  try {
    settle(world.claude);
    const first = await run();
    assert.ok(first.sources > 2, "sources were captured");
    assert.ok(store.getMeta("folder_listings"), "the run kept its folder listings");
    const files = store.stmt("SELECT locator FROM sources WHERE format = 'jsonl' ORDER BY id")
      .all() as { locator: string }[];
    const folder = files[0]!.locator.replace(/\/[^/]*$/, "");
    const session = "5b0c1a52-0d3e-4c8a-9f1e-2a7c3d4e5f60";
    const records = () =>
      (store.stmt("SELECT count(*) AS n FROM records").get() as { n: number }).n;

    await t.step("nothing changed: nothing read", async () => {
      assert.equal((await run()).changed, 0);
    });
    await t.step("a file appended to, its folder as it was: read", async () => {
      const before = records();
      appendFileSync(files[0]!.locator, line(session, "appended in a settled folder"));
      assert.equal((await run()).changed, 1);
      assert.equal(records(), before + 1);
    });
    await t.step("a file rewritten in place at the same size: a new generation", async () => {
      const path = files[1]!.locator;
      const text = Deno.readTextFileSync(path);
      writeFileSync(path, text.replace(/"(user|assistant)"/, (m) => m.toUpperCase()));
      const summary = await run();
      assert.equal(summary.changed, 1);
      assert.equal(summary.generations.length, 1);
    });
    await t.step("a new file in an old folder: found", async () => {
      settle(world.claude);
      await run();
      writeFileSync(`${folder}/${session}.jsonl`, line(session, "a new file in an old folder"));
      const summary = await run();
      assert.equal(summary.sources, first.sources + 1);
      assert.equal(summary.changed, 1);
    });
    await t.step("a file deleted: its source gone", async () => {
      settle(world.claude);
      await run();
      Deno.removeSync(`${folder}/${session}.jsonl`);
      const summary = await run();
      assert.equal(summary.sources, first.sources);
      assert.equal(summary.gone, 1);
    });
  } finally {
    store.close();
    await world.cleanup();
  }
});

/** Runs `fn` on the store of a world of every fixture agent once captured, then removes both. */
async function withCaptured(fn: (store: HistoryStore, ctx: Context) => Promise<void>) {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  const ctx = loadContext({ env: world.env });
  const store = openStore(ctx);
  try {
    await runPass(store, ctx);
    await fn(store, ctx);
  } finally {
    store.close();
    await world.cleanup();
  }
}

Deno.test("the store's sources, and their files, as a worker reads them and looks at them", async () => {
  const withoutIndex = (rows: Map<string, KnownSource>) =>
    new Map([...rows].map(([locator, { flatIndex: _, ...known }]) => [locator, known]));
  await withCaptured(async (store) => {
    const inline = loadSources(store);
    assert.ok(inline.size > 2, "sources were captured");
    assert.ok([...inline.values()].some((row) => row.fingerprint !== null), "a row source");
    assert.ok([...inline.values()].some((row) => row.dev !== null), "a file's stat");
    const gone = [...inline.values()].find((row) => row.locator.endsWith(".jsonl"))!;
    Deno.removeSync(gone.locator);

    const aside = loadSourcesAside(store, 0);
    assert.equal(aside.rows, null, "read by a worker");
    assert.ok(aside.working);
    const rows = await aside.known;
    assert.ok([...rows.values()].every((row) => row.flatIndex !== undefined), "the worker's rows");
    assert.deepEqual(withoutIndex(rows), withoutIndex(inline));
    await aside.looked;
    assert.ok(!aside.working, "done looking");
    for (const row of rows.values()) {
      const path = pathOfLocator(row.locator);
      assert.deepEqual(aside.seen(row, path), lookAt(path), path);
      assert.equal(aside.seen(row, `${path}.elsewhere`), undefined);
    }
    assert.equal(aside.seen(rows.get(gone.locator)!, gone.locator), NOT_FOUND);
    aside.stop();

    // Fewer sources than it takes: read inline, nothing looked at aside.
    const few = loadSourcesAside(store, DEFAULT_LIMITS.knownAsideFrom);
    assert.deepEqual(few.rows, inline);
    assert.ok(!few.working);
    assert.equal(few.seen(gone, gone.locator), undefined);
    // A store the worker cannot open (moved under the open connection): read inline.
    const moved = `${store.path}.moved`;
    Deno.renameSync(store.path, moved);
    try {
      const failed = loadSourcesAside(store, 0);
      assert.deepEqual(await failed.known, inline);
      await failed.looked;
    } finally {
      Deno.renameSync(moved, store.path);
    }
  });
});

Deno.test("a pass that finds its files while a worker reads the store's sources sees the same", async () => {
  await withCaptured(async (store, ctx) => {
    const files = store.stmt("SELECT locator FROM sources WHERE format = 'jsonl' ORDER BY id")
      .all() as { locator: string }[];
    assert.ok(files.length > 3, "sources were captured");
    appendFileSync(files[0]!.locator, "\n");
    const folder = files[1]!.locator.replace(/\/[^/]*$/, "");
    const link = `${folder}/0b0c1a52-0d3e-4c8a-9f1e-2a7c3d4e5f61.jsonl`;
    Deno.symlinkSync(files[1]!.locator, link);
    Deno.removeSync(files[2]!.locator);
    const discovered: { adapter: Adapter; ref: SourceRef }[] = [];
    /** What a discovery finds, the store's sources read first, by a worker, or by one done looking. */
    const look = async (known: "first" | "aside" | "looked", listed?: typeof discovered) => {
      const options = {
        adapters: ADAPTERS,
        discover: discoverContext(ctx),
        ...(listed ? { sources: listed } : {
          onDiscovered: (found: typeof discovered) => discovered.splice(0, Infinity, ...found),
        }),
      };
      const aside = known === "first" ? null : loadSourcesAside(store, 0);
      if (known === "looked") await aside!.looked;
      let fromWorker = 0;
      const { changed, count } = await discoverSources(
        options,
        aside
          ? {
            ...aside,
            get rows() {
              return aside.rows;
            },
            seen: (row, path) => {
              const seen = aside.seen(row, path);
              if (seen !== undefined) fromWorker++;
              return seen;
            },
          }
          : loadSources(store),
      );
      aside?.stop();
      if (known === "looked") assert.ok(fromWorker > 3, "files the worker looked at");
      const rows = aside ? await aside.known : null;
      return {
        changed: changed.map((f) => [f.ref.locator, f.stat]),
        count,
        skipped: [...options.discover.skipped],
        found: rows && [...rows.values()].filter((row) => row.found).map((row) => row.locator)
          .sort(),
      };
    };
    const first = await look("first");
    assert.equal(first.changed[0]![0], files[0]!.locator, "the file appended to");
    assert.deepEqual(first.skipped, [["symlink", 1]], "the link, as its folder was listed");
    const listed = [...discovered];
    const aside = await look("aside");
    assert.ok(!aside.found!.includes(files[2]!.locator), "the file removed is not found");
    assert.ok(aside.found!.includes(files[0]!.locator));
    assert.deepEqual({ ...aside, found: null }, first);
    assert.deepEqual(await look("looked"), aside);
    // The watcher's list of sources, each twice, with a link and a path with nothing at it
    // among them: each is looked at once, the link skipped.
    const { adapter, ref } = listed[1]!;
    const odd = [link, `${folder}/not-there.jsonl`].map((path) => ({
      adapter,
      ref: { ...ref, locator: path, path },
    }));
    const twice = [...listed, ...odd, ...listed, ...odd];
    assert.deepEqual(await look("first", twice), first);
    assert.deepEqual(await look("aside", twice), aside);
    assert.deepEqual(await look("looked", twice), aside);
  });
});

Deno.test("passes that read the store's sources aside capture what passes that do not do", async () => {
  const worlds = await Promise.all([0, 1].map(() => makeWorld({ fixtures: ["claude", "codex"] })));
  const stores = worlds.map((world) => openStore(loadContext({ env: world.env })));
  /** Each world's records, by their file's path within it. */
  const records = (i: number) =>
    stores[i]!.stmt(
      `SELECT s.locator, r.seq, r.raw FROM records r JOIN sources s ON s.id = r.source_id
       ORDER BY s.locator, r.seq`,
    ).all().map((row) => ({ ...row, locator: String(row.locator).replace(worlds[i]!.dir, "") }));
  /** A pass in each world: the first reads its sources aside (a worker), the second inline. */
  const pass = async () =>
    await Promise.all(
      worlds.map((world, i) =>
        runPass(stores[i]!, loadContext({ env: world.env }), {
          limits: { knownAsideFrom: i === 0 ? 0 : Infinity },
        })
      ),
    );
  try {
    const [first] = await pass();
    assert.ok(first!.changed > 2, "sources were captured");
    for (const again of await pass()) {
      assert.deepEqual([again.changed, again.sources], [0, first!.sources], "nothing to do");
    }
    worlds.forEach((_, i) => {
      const { locator } = stores[i]!.stmt(
        "SELECT locator FROM sources WHERE format = 'jsonl' ORDER BY locator LIMIT 1",
      ).get() as { locator: string };
      appendFileSync(locator, Deno.readTextFileSync(locator).split("\n")[0] + "\n");
    });
    for (const grown of await pass()) assert.equal(grown.changed, 1, "the file appended to");
    assert.deepEqual(records(0), records(1));
  } finally {
    for (const store of stores) store.close();
    for (const world of worlds) await world.cleanup();
  }
});
