// Commands that only read work on a data dir they cannot write: as a user who is not root (root
// ignores permission bits) and on a read-only mount. Where SQLite cannot read a WAL store (no
// -wal/-shm and no way to create them) they say why and what to do. Skipped, saying why, where
// the machine cannot switch users or mount.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { captureWorld, makeWorld, runCli, type World } from "../_helpers.ts";
import {
  OTHER_GID,
  OTHER_UID,
  otherUserRunner,
  readOnlyMountMissing,
  readOnlyMountRunner,
  type Runner,
} from "../_other_user.ts";
import { loadContext, openStore } from "../../lib/context.ts";
import { CJK_MIGRATION } from "../../lib/store/cjk.ts";

/** A conversation of the Claude fixtures, and a word of it. */
const CONVERSATION = "claude:2cfec279";
const PROJECT = "/home/dev/src/zeta_svc.v2";

/** Every command that only reads, with what it must print when it can read the store. */
const READERS: { file: string; args: string[]; stdout: RegExp }[] = [
  { file: "search", args: ["nimbus-corkscrew"], stdout: /claude:2cfec279/ },
  { file: "show", args: [CONVERSATION, "--limit", "3"], stdout: /nimbus-corkscrew health probe/ },
  { file: "status", args: [], stdout: /^store: .*records\)/m },
  { file: "forget", args: ["--before", "2099-01-01", "--dry-run"], stdout: /^Would forget 29 /m },
  { file: "reindex", args: ["--status"], stdout: /^store: /m },
  { file: "resume", args: [CONVERSATION.slice(7), "--print"], stdout: /^claude --resume 2cfec279/ },
  { file: "stage_markers", args: ["--tail", "3"], stdout: /capture/ },
];

const otherUser = await otherUserRunner();
if ("cleanup" in otherUser) addEventListener("unload", otherUser.cleanup);
const notAsOtherUser = "missing" in otherUser ? otherUser.missing : undefined;
const notOnMount = await readOnlyMountMissing();

function named(name: string, missing: string | undefined): string {
  return missing === undefined ? name : `${name} (skipped: ${missing})`;
}

/** A captured world whose every directory the other user can enter. */
async function capturedWorld(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  await captureWorld(world);
  world.vars.INIT_CWD = PROJECT;
  return world;
}

/** Gives the tree at `path` to `uid`/`gid` (links are not followed). */
function chownTree(path: string, uid: number, gid: number): void {
  Deno.chownSync(path, uid, gid);
  if (!Deno.lstatSync(path).isDirectory) return;
  for (const entry of Deno.readDirSync(path)) {
    if (!entry.isSymlink) chownTree(join(path, entry.name), uid, gid);
  }
}

/** Sets every directory under `path` to `dirMode` and every file to `fileMode`. */
function chmodTree(path: string, dirMode: number, fileMode: number): void {
  const info = Deno.lstatSync(path);
  if (info.isDirectory) {
    for (const entry of Deno.readDirSync(path)) {
      chmodTree(join(path, entry.name), dirMode, fileMode);
    }
    Deno.chmodSync(path, dirMode);
  } else if (info.isFile) Deno.chmodSync(path, fileMode);
}

/** Names, modes, sizes and modification times of everything under `path`. */
function treeState(path: string): string[] {
  const lines: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const full = join(dir, entry.name);
      const info = Deno.lstatSync(full);
      lines.push(`${full} ${info.mode?.toString(8)} ${info.size} ${info.mtime?.getTime()}`);
      if (info.isDirectory) walk(full);
    }
  };
  walk(path);
  return lines.sort();
}

/**
 * Leaves `history.db-wal` and `-shm` beside the store, as a connection opened read-only at the
 * SQLite level does (it cannot checkpoint, so it never removes them): the state while a capture
 * or the dashboard holds the store open, or after one was killed.
 */
function leaveWalFiles(world: World): void {
  const db = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
  db.prepare("SELECT count(*) FROM records").get();
  db.close();
  for (const suffix of ["-wal", "-shm"]) Deno.statSync(join(world.data, `history.db${suffix}`));
}

async function assertReadersWork(run: Runner, world: World): Promise<void> {
  for (const { file, args, stdout } of READERS) {
    const result = await run(file, args, world.vars);
    assert.equal(result.code, 0, `${file} ${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stdout, stdout, `${file} ${args.join(" ")}`);
    assert.doesNotMatch(result.stderr, /readonly|read-only|permission|denied/i, file);
  }
}

Deno.test({
  name: named(
    "reading commands read another user's store that they may read but not write",
    notAsOtherUser,
  ),
  ignore: notAsOtherUser !== undefined,
  async fn() {
    const { run } = otherUser as { run: Runner };
    const world = await capturedWorld();
    try {
      leaveWalFiles(world);
      chownTree(world.dir, OTHER_UID, OTHER_GID);
      // The data dir stays root's, readable by all (a colleague's, or restored from a backup):
      // making it owner-only is not this reader's to do, and the reader cannot write it.
      chownTree(world.data, 0, 0);
      chmodTree(world.data, 0o755, 0o644);
      const before = treeState(world.data);
      await assertReadersWork(run, world);
      assert.deepEqual(treeState(world.data), before, "nothing in the data dir changed");
    } finally {
      await world.cleanup();
    }
  },
});

Deno.test({
  name: named(
    "reading commands read their own data dir made read-only, and change none of its modes",
    notAsOtherUser,
  ),
  ignore: notAsOtherUser !== undefined,
  async fn() {
    const { run } = otherUser as { run: Runner };
    const world = await capturedWorld();
    try {
      leaveWalFiles(world);
      chownTree(world.dir, OTHER_UID, OTHER_GID);
      chmodTree(world.data, 0o500, 0o400);
      const before = treeState(world.data);
      await assertReadersWork(run, world);
      assert.deepEqual(treeState(world.data), before, "nothing in the data dir changed");
    } finally {
      chmodTree(world.data, 0o700, 0o600);
      await world.cleanup();
    }
  },
});

Deno.test({
  name: named(
    "a WAL store without its -wal and -shm in a read-only dir: reading commands say why and what to do",
    notAsOtherUser,
  ),
  ignore: notAsOtherUser !== undefined,
  async fn(t) {
    const { run } = otherUser as { run: Runner };
    const world = await capturedWorld();
    const db = join(world.data, "history.db");
    try {
      chownTree(world.dir, OTHER_UID, OTHER_GID);
      Deno.chmodSync(world.data, 0o500);

      await t.step("each command that reads the store exits 1 with the reason", async () => {
        for (const { file, args } of READERS.filter((r) => r.file !== "stage_markers")) {
          const result = await run(file, args, world.vars);
          const stderr = result.stderr;
          if (file === "resume") {
            // The picker lists logbook's own sessions without the store, and says what is left out.
            assert.match(stderr, /^note: other agents' sessions are left out: Cannot read/m);
          } else {
            assert.equal(result.code, 1, `${file}: ${stderr}`);
            assert.match(stderr, /^error: Cannot read the history store "/, file);
          }
          assert.ok(stderr.includes(`"${db}"`), `${file} names the store: ${stderr}`);
          assert.match(stderr, /"history\.db-wal" and "history\.db-shm" are missing/, file);
          assert.ok(stderr.includes(`the directory "${world.data}" is read-only`), stderr);
          assert.ok(stderr.includes(`chmod u+w "${world.data}"`), `${file}: ${stderr}`);
          assert.match(stderr, /LOGBOOK_DATA_DIR/, file);
          assert.doesNotMatch(stderr, /attempt to write a readonly database/, file);
        }
      });

      await t.step("stage-markers, which does not need the store, still works", async () => {
        const result = await run("stage_markers", ["--tail", "3"], world.vars);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /capture/);
      });

      await t.step("a -shm the user cannot read is named as such", async () => {
        Deno.chmodSync(world.data, 0o700);
        leaveWalFiles(world);
        chownTree(world.data, OTHER_UID, OTHER_GID);
        Deno.chownSync(`${db}-shm`, 0, 0);
        Deno.chmodSync(world.data, 0o500);
        const result = await run("search", ["nimbus-corkscrew"], world.vars);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /"history\.db-shm" cannot be read by this user/);
        assert.match(result.stderr, /run as the owner of the data dir/);
      });

      await t.step("a store that needs its migrations says it must be upgraded", async () => {
        Deno.chmodSync(world.data, 0o700);
        for (const suffix of ["", "-wal", "-shm"]) Deno.removeSync(db + suffix);
        // An empty store file, as a first capture leaves it if it is stopped before its schema.
        Deno.writeFileSync(db, new Uint8Array());
        Deno.chownSync(db, OTHER_UID, OTHER_GID);
        Deno.chmodSync(db, 0o400);
        Deno.chmodSync(world.data, 0o500);
        const result = await run("search", ["nimbus-corkscrew"], world.vars);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /needs an upgrade \("0001_incremental_vacuum"\)/);
        assert.match(result.stderr, /run "logbook reindex" once with write access/);
      });
    } finally {
      chmodTree(world.data, 0o700, 0o600);
      await world.cleanup();
    }
  },
});

Deno.test("a store opened for reading writes nothing and leaves the data dir as it found it", async () => {
  const world = await capturedWorld();
  try {
    const ctx = loadContext({ env: world.env });
    const before = treeState(world.data);
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      assert.ok(store.stmt("SELECT count(*) AS n FROM records").get()!.n as number > 0);
      assert.throws(() => store.setMeta("written", true), /readonly/);
    } finally {
      store.close();
    }
    assert.deepEqual(treeState(world.data), before, "no -wal or -shm is left behind");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store opened for reading is never created", async () => {
  const world = await makeWorld();
  try {
    const ctx = loadContext({ env: world.env });
    assert.throws(
      () => openStore(ctx, { readOnly: true }),
      /Cannot open the history store .*missing/,
    );
    assert.equal(existsSync(ctx.paths.historyDb), false);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store lacking only a migration readers wait for is read as it is, never written", async () => {
  const world = await capturedWorld();
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      store.db.prepare("DELETE FROM migrations WHERE name = ?").run(CJK_MIGRATION);
      store.db.exec("DROP TABLE migration_batches");
    } finally {
      store.close();
    }
    const before = treeState(world.data);
    const read = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      assert.deepEqual(read.pendingMigrations(), [CJK_MIGRATION]);
      assert.deepEqual(read.pendingForReaders(), []);
      assert.ok(read.stmt("SELECT count(*) AS n FROM fts").get()!.n as number > 0);
    } finally {
      read.close();
    }
    const search = await runCli("search", ["nimbus-corkscrew"], world.vars);
    assert.equal(search.code, 0, search.stderr);
    assert.match(search.stdout, /claude:2cfec279/);
    assert.deepEqual(treeState(world.data), before, "neither opening nor searching wrote");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store from before the subagent type column is read as it is: no type, never written", async () => {
  const world = await capturedWorld();
  const subagent = "claude:f45a721b-9c7a-4b7b-85d2-ef8b45c9db2d/agent-a5d9640a1c26f5806";
  try {
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      store.db.exec("ALTER TABLE conversations DROP COLUMN agent_type");
      store.db.prepare("DELETE FROM migrations WHERE name = ?").run("0009_conversation_agent_type");
    } finally {
      store.close();
    }
    const before = treeState(world.data);
    const shown = await runCli("show", [subagent, "--json"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const page = JSON.parse(shown.stdout);
    assert.equal(page.conversation.subagent, true);
    assert.equal(page.conversation.agentType, null);
    const mcpStore = openStore(ctx, { mustExist: true, readOnly: true, upgrade: false });
    mcpStore.close();
    assert.deepEqual(treeState(world.data), before, "neither show nor an opening wrote");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store opened never to upgrade says to run reindex, and stays as it was", async () => {
  const world = await makeWorld();
  try {
    const ctx = loadContext({ env: world.env });
    openStore(ctx).close();
    Deno.writeFileSync(ctx.paths.historyDb, new Uint8Array());
    assert.throws(
      () => openStore(ctx, { mustExist: true, readOnly: true, upgrade: false }),
      /needs an upgrade \("0001_incremental_vacuum"\) before it can be read: run "logbook reindex" first$/,
    );
    assert.equal(Deno.statSync(ctx.paths.historyDb).size, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a reading command brings a store that lacks its migrations up to date when it can write", async () => {
  const world = await makeWorld();
  try {
    const ctx = loadContext({ env: world.env });
    openStore(ctx).close();
    // The store as the first capture leaves it when stopped before its schema: an empty file.
    Deno.writeFileSync(ctx.paths.historyDb, new Uint8Array());
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      assert.deepEqual(store.pendingMigrations(), []);
      assert.equal(store.getMeta("nothing"), undefined);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: named("reading commands read a data dir on a read-only mount", notOnMount),
  ignore: notOnMount !== undefined,
  async fn() {
    const world = await capturedWorld();
    try {
      leaveWalFiles(world);
      // A copy of the data dir made with the usual umask, as a backup disk holds it.
      chmodTree(world.data, 0o755, 0o644);
      const before = treeState(world.data);
      await assertReadersWork(readOnlyMountRunner(world.data), world);
      assert.deepEqual(treeState(world.data), before, "nothing in the data dir changed");
    } finally {
      await world.cleanup();
    }
  },
});
