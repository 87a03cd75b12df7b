// The history store's file safety and schema: owner-only modes, tightening, refusing a planted
// symlink, named migrations, and capture of the real public samples when they are present.

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { symlinkSync, writeFileSync } from "node:fs";
import { runCapture } from "../../../lib/capture/run.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { SymlinkRefusedError } from "../../../lib/private_fs.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { HistoryStore } from "../../../lib/store/db.ts";
import { MIGRATIONS } from "../../../lib/store/schema.ts";
import { search } from "../../../lib/store/search.ts";
import { CORPUS, corpusPresent, makeWorld } from "../../_helpers.ts";

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
