// The history store's file safety and schema: owner-only modes, tightening, refusing a planted
// symlink, named migrations (applied once however many processes open a new store at the same
// moment), and capture of the real public samples when they are present.

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { symlinkSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { runCapture } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { SymlinkRefusedError } from "../../../lib/private_fs.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { HistoryStore, StoreLockedError } from "../../../lib/store/db.ts";
import { MIGRATIONS } from "../../../lib/store/schema.ts";
import { search } from "../../../lib/store/search.ts";
import { CORPUS, corpusPresent, makeWorld, type RunResult } from "../../_helpers.ts";
import { runReleased } from "../../_released_command.ts";

function modeOf(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    out.push(path);
    if (entry.isDirectory) walk(path, out);
  }
  return out;
}

Deno.test("every directory the store creates is 0700 and every file 0600", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      await runCapture({ ctx, store, redact: redactorFor(ctx) });
      // Keep the WAL and SHM present while checking.
      const paths = walk(world.data);
      assert.ok(paths.some((p) => p.endsWith("history.db-wal")));
      for (const path of [world.data, ...paths]) {
        const info = Deno.statSync(path);
        assert.equal(modeOf(path), info.isDirectory ? 0o700 : 0o600, relative(world.dir, path));
      }
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a pre-existing 0644 store file is tightened when written", async () => {
  const world = await makeWorld();
  try {
    const path = join(world.data, "history.db");
    const store = HistoryStore.open({ path, root: world.data });
    store.close();
    Deno.chmodSync(path, 0o644);
    Deno.chmodSync(world.data, 0o755);
    const again = HistoryStore.open({ path, root: world.data });
    again.close();
    assert.equal(modeOf(path), 0o600);
    assert.equal(modeOf(world.data), 0o700);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a symlink planted where the store writes is refused and its target untouched", async () => {
  const world = await makeWorld();
  try {
    await Deno.mkdir(world.data, { recursive: true });
    const target = join(world.dir, "elsewhere.db");
    writeFileSync(target, "precious");
    symlinkSync(target, join(world.data, "history.db"));
    assert.throws(
      () => HistoryStore.open({ path: join(world.data, "history.db"), root: world.data }),
      (err: unknown) => err instanceof SymlinkRefusedError && /history\.db/.test(err.message),
    );
    assert.equal(Deno.readTextFileSync(target), "precious");
    assert.equal(modeOf(target), 0o644);

    // A symlinked directory inside the data dir is refused too.
    await Deno.remove(join(world.data, "history.db"));
    const outside = join(world.dir, "outside-run");
    await Deno.mkdir(outside);
    symlinkSync(outside, join(world.data, "run"));
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      await assert.rejects(
        () => runCapture({ ctx, store, redact: redactorFor(ctx) }),
        SymlinkRefusedError,
      );
    } finally {
      store.close();
    }
    assert.deepEqual([...Deno.readDirSync(outside)], []);
  } finally {
    await world.cleanup();
  }
});

Deno.test("migrations are applied once, by name, in order", async () => {
  const world = await makeWorld();
  try {
    const path = join(world.data, "history.db");
    const store = HistoryStore.open({ path, root: world.data });
    assert.deepEqual(store.appliedMigrations(), MIGRATIONS.map((m) => m.name));
    const mode = store.db.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number };
    assert.equal(mode.auto_vacuum, 2, "incremental vacuum, so forget can give space back");
    store.close();
    const again = HistoryStore.open({ path, root: world.data });
    assert.deepEqual(again.appliedMigrations(), MIGRATIONS.map((m) => m.name));
    again.close();
  } finally {
    await world.cleanup();
  }
});

Deno.test("transactions: a step SQLite ended reports its own error; a whole one rolls back whole, its steps without savepoints", async () => {
  const world = await makeWorld();
  const store = HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
  const put = (key: string) => store.setMeta(key, 1);
  const has = (key: string) => store.getMeta(key) !== undefined;
  const savepoints: string[] = [];
  try {
    // A full disk or no memory can end the whole transaction under a step: its error is the
    // one to report, not that its savepoint is gone.
    store.db.exec("BEGIN");
    assert.throws(
      () =>
        store.transaction(() => {
          store.db.exec("ROLLBACK");
          throw new Error("database or disk is full");
        }),
      (err: Error) => err.name === "StoreFullError",
    );
    assert.equal(store.db.isTransaction, false);

    // Inside a whole transaction a step opens no savepoint: a failed step is undone with all
    // the rest, and what the whole wrote before it is gone too.
    const exec = store.db.exec.bind(store.db);
    store.db.exec = (sql: string) => {
      if (/SAVEPOINT/.test(sql)) savepoints.push(sql);
      exec(sql);
    };
    await assert.rejects(
      store.wholeTransaction(async () => {
        put("before");
        await Promise.resolve();
        store.transaction(() => put("step"));
        store.transaction(() => {
          put("failing step");
          throw new Error("the step failed");
        });
      }),
      /the step failed/,
    );
    assert.deepEqual(savepoints, []);
    assert.deepEqual(["before", "step", "failing step"].filter(has), []);
    assert.equal(store.db.isTransaction, false);
    await store.wholeTransaction(async () => {
      store.transaction(() => put("kept"));
      await assert.rejects(store.wholeTransaction(async () => {}), /already open/);
    });
    assert.ok(has("kept"));
    store.transaction(() => {
      store.transaction(() => put("nested, outside a whole one"));
    });
    assert.deepEqual(savepoints, ["SAVEPOINT step"], "a step outside one still has its savepoint");
  } finally {
    store.close();
    await world.cleanup();
  }
});

/** Each migration's name, once, in order: what a store opened by any number of processes holds. */
const ALL_APPLIED = MIGRATIONS.map((m) => m.name);

Deno.test("a migration another process applied since this one looked is skipped", async (t) => {
  // The other process opens the store while this one stands before migration `at` (its applied
  // set read), and either finishes or stops before migration `stop` (killed, say).
  const cases = MIGRATIONS.flatMap((m, i) => [
    { at: m.name, stop: null },
    ...(i + 1 < MIGRATIONS.length ? [{ at: m.name, stop: MIGRATIONS[i + 1]!.name }] : []),
  ]);
  for (const { at, stop } of cases) {
    await t.step(`${at}${stop ? `, the other stopping before ${stop}` : ""}`, async () => {
      const world = await makeWorld();
      try {
        const path = join(world.data, "history.db");
        let interleaved = false;
        const store = HistoryStore.open({
          path,
          root: world.data,
          beforeStep: (step) => {
            if (step !== at) return;
            interleaved = true;
            try {
              HistoryStore.open({
                path,
                root: world.data,
                beforeStep: (theirs) => {
                  if (theirs === stop) throw new Error("stopped");
                },
              }).close();
            } catch (err) {
              if (!(err instanceof Error && err.message === "stopped")) throw err;
            }
          },
        });
        try {
          assert.ok(interleaved, "the other process ran in between");
          assert.deepEqual(store.appliedMigrations(), ALL_APPLIED);
          const mode = store.db.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number };
          assert.equal(mode.auto_vacuum, 2);
        } finally {
          store.close();
        }
      } finally {
        await world.cleanup();
      }
    });
  }
});

Deno.test("a new store's switch to WAL waits for another process writing it", async () => {
  const world = await makeWorld();
  try {
    const path = join(world.data, "history.db");
    let other: DatabaseSync | null = null;
    let attempts = 0;
    const store = HistoryStore.open({
      path,
      root: world.data,
      beforeStep: (step) => {
        if (step !== "wal") return;
        attempts++;
        if (!other) {
          // Another process begins writing the new file (as its own switch to WAL does)...
          other = new DatabaseSync(path);
          other.exec("BEGIN IMMEDIATE");
        } else if (other.isTransaction) {
          // ...and is done by the time this one has waited for it.
          other.exec("ROLLBACK");
        }
      },
    });
    try {
      assert.equal(attempts, 2, "the switch met the other's write, waited and switched");
      const mode = store.db.prepare("PRAGMA journal_mode").get() as { journal_mode: string };
      assert.equal(mode.journal_mode, "wal");
      assert.deepEqual(store.appliedMigrations(), ALL_APPLIED);
    } finally {
      store.close();
      (other as DatabaseSync | null)?.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a migration kept waiting by another writer says the store is locked", async () => {
  const world = await makeWorld();
  try {
    const path = join(world.data, "history.db");
    const last = MIGRATIONS.at(-1)!.name;
    const made = HistoryStore.open({ path, root: world.data });
    made.db.prepare("DELETE FROM migrations WHERE name = ?").run(last);
    const writer = new DatabaseSync(path);
    writer.exec("BEGIN IMMEDIATE");
    try {
      assert.throws(
        () => HistoryStore.open({ path, root: world.data, busyTimeoutMs: 1 }),
        (err) => err instanceof StoreLockedError && !/Migration/.test(err.message),
      );
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
      made.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("two reindex, a status and a rename started at once on a new data dir all answer", async () => {
  // Their opening of the new store raced, and one lost every few rounds (a migration applied
  // twice, or "database is locked" at once from the switch to WAL). Every outcome here is one a
  // single process may have, or the two captures taking turns: no busy timeout runs out, as
  // nothing here writes for long.
  const expected: Record<string, (r: RunResult) => boolean> = {
    reindex: (r) => r.code === 0 && /^\{"status":"(captured|busy)"/.test(r.stdout),
    status: (r) => r.code === 0 && r.stderr === "",
    rename: (r) =>
      r.code === 1 &&
      r.stderr === 'error: Cannot rename session "abc": no such id in this project\n',
  };
  const commands = [
    { file: "reindex", args: ["--json"] },
    { file: "reindex", args: ["--json"] },
    { file: "status", args: [] },
    { file: "rename", args: ["abc", "a title"] },
  ];
  const wrong: string[] = [];
  for (let round = 0; round < 8; round++) {
    const world = await makeWorld({ fixtures: ["claude", "codex"] });
    try {
      const results = await runReleased(commands, world.vars);
      results.forEach((result, i) => {
        const { file } = commands[i]!;
        if (!expected[file]!(result)) {
          wrong.push(`round ${round}, ${file}: exit ${result.code}: ${result.stderr.trim()}`);
        }
      });
      const store = HistoryStore.open({ path: join(world.data, "history.db"), root: world.data });
      try {
        assert.deepEqual(store.appliedMigrations(), ALL_APPLIED);
      } finally {
        store.close();
      }
    } finally {
      await world.cleanup();
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test({
  name: "the real Claude Code samples each yield a conversation and a phrase from each is found",
  ignore: !corpusPresent(),
  fn: async () => {
    const world = await makeWorld();
    try {
      const env = {
        get: (
          k: string,
        ) => (k === "CLAUDE_CONFIG_DIR" ? join(CORPUS, "claude-none") : world.env.get(k)),
      };
      const ctx = loadContext({ env });
      ctx.config.history.roots.claude = [join(CORPUS, "claude")];
      const store = openStore(ctx);
      try {
        const result = await runCapture({ ctx, store, redact: redactorFor(ctx) });
        assert.equal(result.status, "captured");
        const perFile = store.db.prepare(`
          SELECT s.locator, count(DISTINCT r.conversation_id) AS conversations,
                 sum(r.kind = 'message') AS messages
          FROM sources s JOIN records r ON r.source_id = s.id GROUP BY s.id`).all() as {
          locator: string;
          conversations: number;
          messages: number;
        }[];
        const files = walk(join(CORPUS, "claude")).filter((p) => p.endsWith(".jsonl"));
        assert.equal(perFile.length, files.length);
        for (const row of perFile) assert.ok(row.conversations >= 1, row.locator);
        const phrases: Record<string, string> = {
          "spotter-short.jsonl": "phx.server",
          "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": "opentelemetry_bandit",
          "agent-aac57f5.jsonl": "opentelemetry_exporter",
          "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl": '"one liner comment"',
          "agent-50243ee8.jsonl": "READ-ONLY mode",
          "schema-coverage.jsonl": "Hello",
        };
        const redact = redactorFor(ctx);
        const sourceOf = store.db.prepare(
          "SELECT s.locator FROM records r JOIN sources s ON s.id = r.source_id WHERE r.id = ?",
        );
        for (const [file, phrase] of Object.entries(phrases)) {
          const hits = search(store, ADAPTERS, redact, { query: phrase, limit: 500 }).hits;
          const files = hits.map((h) =>
            String((sourceOf.get(h.record) as { locator: string }).locator)
          );
          assert.ok(files.some((f) => f.endsWith(`/${file}`)), `${phrase} found in ${file}`);
        }
      } finally {
        store.close();
      }
    } finally {
      await world.cleanup();
    }
  },
});
