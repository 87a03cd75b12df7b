// Private copies of another program's database (lib/sources/_snapshot.ts): made from the
// database and its WAL, never touching them, and removed when done or when their run died.

import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { Snapshots } from "../../../lib/sources/_snapshot.ts";
import { ROOT, tempDir } from "../../_helpers.ts";

/** A WAL database whose second row is only in the WAL, its writer kept open. */
function walDatabase(dir: string): { path: string; writer: DatabaseSync } {
  const path = join(dir, "opencode.db");
  const writer = new DatabaseSync(path);
  writer.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  writer.exec("CREATE TABLE part (id TEXT, data TEXT); INSERT INTO part VALUES ('a', 'first')");
  writer.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  writer.exec("INSERT INTO part VALUES ('b', 'only in the WAL')");
  return { path, writer };
}

function snapshotDirs(parent: string): string[] {
  return [...Deno.readDirSync(parent)].map((e) => e.name)
    .filter((n) => n.startsWith("logbook-snapshot-")).sort();
}

Deno.test("a snapshot holds the WAL's rows, is private, and goes when released", async () => {
  const dir = await tempDir();
  const { path, writer } = walDatabase(join(dir));
  const run = join(dir, "run");
  Deno.mkdirSync(run);
  try {
    const snapshots = new Snapshots(() => run);
    const copy = snapshots.of(path);
    assert.equal(snapshots.of(path), copy, "an unchanged database is not copied again");
    assert.equal(Deno.statSync(copy).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(join(copy, "..")).mode! & 0o777, 0o700);
    const db = new DatabaseSync(copy, { readOnly: true });
    try {
      assert.deepEqual(
        db.prepare("SELECT id FROM part ORDER BY id").all().map((r) => r.id),
        ["a", "b"],
      );
    } finally {
      db.close();
    }
    writer.exec("INSERT INTO part VALUES ('c', 'later')");
    const again = new DatabaseSync(snapshots.of(path), { readOnly: true });
    try {
      const { n } = again.prepare("SELECT count(*) AS n FROM part").get() as { n: number };
      assert.equal(n, 3, "a changed database is copied again");
    } finally {
      again.close();
    }
    snapshots.release(path);
    assert.deepEqual(snapshotDirs(run), []);
  } finally {
    writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("databases of one name get copies of their own, the first made with the directory", async () => {
  const dir = await tempDir();
  const run = join(dir, "run");
  Deno.mkdirSync(run);
  Deno.mkdirSync(join(dir, "a"));
  Deno.mkdirSync(join(dir, "b"));
  // The first database has a row only in its WAL; the second, of the same name, has no WAL.
  const { path: first, writer } = walDatabase(join(dir, "a"));
  const second = join(dir, "b", "opencode.db");
  const plain = new DatabaseSync(second);
  plain.exec("CREATE TABLE part (id TEXT, data TEXT); INSERT INTO part VALUES ('z', 'second')");
  plain.close();
  const ids = (file: string) => {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      return db.prepare("SELECT id FROM part ORDER BY id").all().map((r) => r.id);
    } finally {
      db.close();
    }
  };
  try {
    const snapshots = new Snapshots(() => run);
    const copyOfFirst = snapshots.of(first);
    const copyOfSecond = snapshots.of(second);
    assert.notEqual(copyOfSecond, copyOfFirst);
    assert.deepEqual(ids(copyOfSecond), ["z"], "the second database, without the first's WAL");
    assert.deepEqual(ids(snapshots.of(first)), ["a", "b"]);
    snapshots.releaseAll();
  } finally {
    writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a copy left by a killed run is removed by the next; a live run's is kept", async () => {
  const dir = await tempDir();
  const { path, writer } = walDatabase(dir);
  const run = join(dir, "run");
  Deno.mkdirSync(run);
  const module = pathToFileURL(join(ROOT, "lib", "sources", "_snapshot.ts")).href;
  const holder = (line: string) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { Snapshots } from ${JSON.stringify(module)};
         new Snapshots(() => ${JSON.stringify(run)}).of(${JSON.stringify(path)});
         console.log(${JSON.stringify(line)});
         setTimeout(() => {}, 60_000);`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
  const readLine = async (child: Deno.ChildProcess) => {
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    reader.releaseLock();
    return new TextDecoder().decode(value).trim();
  };
  const killed = holder("killed");
  const alive = holder("alive");
  try {
    assert.equal(await readLine(killed), "killed");
    assert.equal(await readLine(alive), "alive");
    assert.equal(snapshotDirs(run).length, 2);
    killed.kill("SIGKILL");
    await killed.status;
    const snapshots = new Snapshots(() => run);
    snapshots.of(path);
    // The killed run's copy is gone; the live one's and this one's remain.
    assert.equal(snapshotDirs(run).length, 2);
    snapshots.releaseAll();
    assert.equal(snapshotDirs(run).length, 1);
  } finally {
    alive.kill("SIGKILL");
    await alive.status;
    await killed.stdout.cancel().catch(() => {});
    await alive.stdout.cancel().catch(() => {});
    writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});
