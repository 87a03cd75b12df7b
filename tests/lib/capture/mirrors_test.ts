// Mirror sync in small batches: a pass out of time leaves the mirror "copying" at a batch
// boundary, the next one goes on from its cursor, a rebuilt main store is copied afresh, a sync
// with nothing new reads no record, and a record whose flags change after its copy (an
// OpenCode part revised, a tool output's preview its output file completes) is brought up to
// date.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { loadContext, redactorFor } from "../../../lib/context.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { search } from "../../../lib/store/search.ts";
import { syncMirrors } from "../../../lib/capture/mirrors.ts";
import { watch } from "../../../lib/capture/watch.ts";
import { listMirrors, RECORDS_PER_BATCH, wantMirror } from "../../../lib/store/mirror.ts";
import { projectOf } from "../../../lib/paths.ts";
import { fixtureIds, updatePart } from "../../../fixtures/opencode/make_db.ts";
import { claudeTranscript } from "../../_claude_transcript.ts";
import { captureWorld, makeWorld, manifest, withStore, type World } from "../../_helpers.ts";
import { renameSync } from "node:fs";
import { eventually } from "../../_wait.ts";

const SESSION = "3a6f1c84-9e2d-4b57-a0c3-5d8e1f7b2a96";

function lines(cwd: string, turns: number): string {
  return claudeTranscript(
    SESSION,
    cwd,
    Array.from({ length: turns / 2 }, (_, i) => [
      `note ${2 * i} about the plover ledger`,
      `note ${2 * i + 1} about the plover ledger`,
    ]),
  );
}

/** A project folder `name` in the world whose mirror the user turned on. */
async function mirroredProject(world: World, name: string): Promise<string> {
  const project = join(world.dir, name);
  await Deno.mkdir(project, { recursive: true });
  withStore(world, (store) => wantMirror(store, projectOf(project).root, true, 0));
  return project;
}

/** A Claude Code session of `turns` turns in `project`. */
async function writeSession(world: World, project: string, turns: number): Promise<void> {
  const folder = join(world.claude, "projects", project.replaceAll("/", "-"));
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(join(folder, `${SESSION}.jsonl`), lines(project, turns));
}

function mirrored(path: string): { records: number; cursor: number } {
  const mirror = HistoryStore.open({ path, root: join(path, "..") });
  try {
    const records = (mirror.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number })
      .n;
    return { records, cursor: mirror.getMeta<{ cursor: number }>("mirror")?.cursor ?? 0 };
  } finally {
    mirror.close();
  }
}

Deno.test("a mirror is copied in batches of at most 8 records and resumes from its cursor", async () => {
  const world = await makeWorld();
  const project = await mirroredProject(world, "proj");
  await writeSession(world, project, 30);
  try {
    await captureWorld(world); // the capture's own sync fills the mirror
    withStore(world, (store, ctx) => {
      const [state] = listMirrors(store);
      assert.equal(state?.state, "current");
      assert.equal(state?.records, 30);
      const total = mirrored(state!.path);
      assert.equal(total.records, 30);
      // Start over with a clock that allows two batches.
      Deno.removeSync(state!.path);
      let tick = 0;
      const options = {
        adapters: ADAPTERS,
        redact: redactorFor(ctx),
        env: ctx.env,
        now: () => tick++,
      };
      const first = syncMirrors(store, { ...options, budgetMs: 2 })[0]!;
      assert.equal(first.state, "copying");
      const partial = mirrored(first.path);
      assert.ok(
        partial.records > 0 && partial.records <= 2 * RECORDS_PER_BATCH,
        `${partial.records}`,
      );
      assert.equal(partial.records % RECORDS_PER_BATCH, 0, "stopped at a batch boundary");
      const second = syncMirrors(store, { ...options, budgetMs: 1_000 })[0]!;
      assert.equal(second.state, "current");
      const done = mirrored(second.path);
      assert.equal(done.records, 30);
      const maxId = (store.db.prepare("SELECT max(id) AS id FROM records").get() as { id: number })
        .id;
      assert.equal(done.cursor, maxId, "the cursor says everything was read");

      // A rebuilt store is copied again from the start, to the same rows.
      store.setMeta("last_rebuild", { at: 42 });
      const again = syncMirrors(store, { ...options, budgetMs: 1_000 })[0]!;
      assert.equal(again.state, "current");
      assert.equal(mirrored(again.path).records, 30);
    });
  } finally {
    await world.cleanup();
  }
});

/**
 * Counts the rows the store's statements that read `records` give back (every statement of
 * the sync and the text it derives is prepared through `stmt`).
 */
function countRecordReads(store: HistoryStore): { rows: number } {
  const count = { rows: 0 };
  const prepare = store.stmt.bind(store);
  store.stmt = (sql: string): StatementSync => {
    const statement = prepare(sql);
    if (!/\brecords\b/.test(sql)) return statement;
    return new Proxy(statement, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== "function") return value;
        if (name === "get") {
          return (...args: never[]) => {
            const row = target.get(...args);
            if (row) count.rows++;
            return row;
          };
        }
        if (name === "all") {
          return (...args: never[]) => {
            const rows = target.all(...args);
            count.rows += rows.length;
            return rows;
          };
        }
        if (name === "iterate") {
          return function* (...args: never[]) {
            for (const row of target.iterate(...args)) {
              count.rows++;
              yield row;
            }
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  };
  return count;
}

Deno.test("a mirror sync with nothing new reads no record", async () => {
  const world = await makeWorld();
  const project = await mirroredProject(world, "proj");
  await writeSession(world, project, 30);
  try {
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const options = { adapters: ADAPTERS, redact: redactorFor(ctx), env: ctx.env };
      const reads = countRecordReads(store);
      // Copied afresh, every record is read once.
      Deno.removeSync(listMirrors(store)[0]!.path);
      assert.equal(syncMirrors(store, options)[0]!.state, "current");
      assert.ok(reads.rows >= 30, `${reads.rows} record rows read by the first sync`);
      reads.rows = 0;
      const again = syncMirrors(store, options)[0]!;
      assert.equal(again.state, "current");
      assert.equal(again.records, 30);
      assert.equal(reads.rows, 0, "the second sync read no record");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an OpenCode part revised after its copy leaves the mirror's index; the new text is found once", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  const project = await mirroredProject(world, "harbor");
  // The fixture's sessions, moved into this project.
  const opencodeDb = join(world.xdgData, "opencode", "opencode.db");
  const db = new DatabaseSync(opencodeDb);
  db.prepare("UPDATE session SET directory = ?").run(project);
  db.close();
  const ids = fixtureIds();
  try {
    await captureWorld(world);
    const mirror = withStore(world, (store) => listMirrors(store)[0]!);
    assert.equal(mirror.state, "current");
    const redact = redactorFor(loadContext({ env: world.env }));
    const find = (query: string) => {
      const store = HistoryStore.open({ path: mirror.path, root: join(project, ".logbook") });
      try {
        return search(store, ADAPTERS, redact, { query, limit: 50 }).hits;
      } finally {
        store.close();
      }
    };
    assert.equal(find("replicas").length, 1, "the first revision is in the mirror");

    // OpenCode stamps an update with the current time: after every row already read.
    updatePart(
      opencodeDb,
      ids.revisablePart,
      "Done: the amber-quiver buckets now live in Redis (juniper-osprey), shared by every instance.",
      ids.maxPartTimeUpdated + 60_000,
    );
    await captureWorld(world);
    assert.equal(find("replicas").length, 0, "a word only the old revision had");
    assert.equal(find("juniper-osprey").length, 1, "the new text");
    assert.equal(find("amber-quiver").length, 1, "a word of both revisions, found once");
    // Row for row, the mirror's records are the store's: the old revision kept raw, flagged.
    const rows = (path: string) => {
      const conn = new DatabaseSync(path, { readOnly: true });
      try {
        return conn.prepare(
          "SELECT id, flags, kind, part_id FROM records WHERE part_id = ? ORDER BY id",
        ).all(ids.revisablePart);
      } finally {
        conn.close();
      }
    };
    const held = rows(mirror.path);
    assert.equal(held.length, 2);
    assert.deepEqual(held, rows(join(world.data, "history.db")));
    withStore(world, (store) => {
      assert.equal(
        (store.db.prepare("SELECT count(*) AS n FROM record_changes").get() as { n: number }).n,
        0,
        "the changes the mirror applied are trimmed",
      );
    });

    // A second revision after the list was trimmed empty: its change comes after the mirror's
    // cursor, not at a number the trimmed list gave out before.
    updatePart(
      opencodeDb,
      ids.revisablePart,
      "Done: the amber-quiver buckets moved to Valkey (kestrel-lantern), shared by every instance.",
      ids.maxPartTimeUpdated + 120_000,
    );
    await captureWorld(world);
    assert.equal(find("juniper-osprey").length, 0, "a word only the second revision had");
    assert.equal(find("kestrel-lantern").length, 1, "the third revision's text");
    assert.equal(find("amber-quiver").length, 1, "a word of every revision, found once");
    assert.deepEqual(rows(mirror.path), rows(join(world.data, "history.db")));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a tool output's preview that its output file completes after the copy leaves the mirror's index", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const entry = manifest<{ case: string; path: string; cwd: string; sidecars: { path: string }[] }>(
    "claude",
  ).find((e) => e.case === "persisted-output")!;
  // The fixture's session, moved into a mirrored project, its output file held back.
  const project = await mirroredProject(world, "ledger");
  const transcript = join(world.claude, entry.path);
  await Deno.writeTextFile(
    transcript,
    (await Deno.readTextFile(transcript)).replaceAll(`"${entry.cwd}"`, JSON.stringify(project)),
  );
  const output = join(world.claude, entry.sidecars[0]!.path);
  const held = join(world.dir, "held.txt");
  renameSync(output, held);
  const redact = redactorFor(loadContext({ env: world.env }));
  // Words of the 2 KB preview, which the whole output holds too.
  const query = '"ledger_012 round-trips its fixture"';
  const find = () => {
    const path = withStore(
      world,
      (store) => listMirrors(store).find((m) => m.project === project)!.path,
    );
    const store = HistoryStore.open({ path, root: join(project, ".logbook") });
    try {
      return search(store, ADAPTERS, redact, { query, limit: 50 }).hits;
    } finally {
      store.close();
    }
  };
  try {
    await captureWorld(world);
    const [preview] = find();
    assert.ok(preview, "the preview is in the mirror");
    renameSync(held, output);
    await captureWorld(world);
    const hits = find();
    assert.equal(hits.length, 1, "found once, in the whole output");
    assert.notEqual(hits[0]!.record, preview.record, "not in the preview");
  } finally {
    await world.cleanup();
  }
});

Deno.test("watch() (reindex --watch) keeps a mirror current as it captures", async () => {
  const world = await makeWorld();
  const project = await mirroredProject(world, "proj");
  await writeSession(world, project, 30);
  const ctx = loadContext({ env: world.env });
  const store = HistoryStore.open({ path: ctx.paths.historyDb, root: ctx.paths.root });
  const controller = new AbortController();
  const watching = watch({
    ctx,
    store,
    redact: redactorFor(ctx),
    signal: controller.signal,
    timings: { rediscoverMs: 200, backlogMs: 20, idleMs: 50 },
  });
  const stored = () =>
    withStore(world, (s) =>
      (s.db.prepare("SELECT count(*) AS n FROM records").get() as {
        n: number;
      }).n);
  try {
    const path = () => withStore(world, (s) => listMirrors(s)[0]?.path);
    await eventually("the mirror made", () => path() !== undefined && stored() === 30);
    await eventually("the mirror holds every record", () => mirrored(path()!).records === 30);
    await writeSession(world, project, 40); // the same session, ten turns longer
    await eventually("the appended turns in the store", () => stored() === 40);
    await eventually("the appended turns in the mirror", () => mirrored(path()!).records === 40);
  } finally {
    controller.abort();
    await watching;
    store.close();
    await world.cleanup();
  }
});
