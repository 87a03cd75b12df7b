// Tests for lib/private_fs.ts: owner-only modes whatever the umask, atomic writes, refused links
// and reported removals, all on real files in fresh temp dirs.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  appendPrivate,
  assertNoSymlinkInside,
  ensurePrivateDir,
  ensurePrivateFile,
  explainDataDir,
  isPidAlive,
  removePath,
  SymlinkRefusedError,
  tightenMode,
  writeFileAtomic,
} from "../../lib/private_fs.ts";

function tempDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "logbook-private-fs-" }));
}

function modeOf(path: string): number {
  return (Deno.lstatSync(path).mode ?? -1) & 0o7777;
}

/** Runs `fn` under a umask that takes the owner's own bits away, so only explicit chmods pass. */
function withHostileUmask(fn: () => void): void {
  const previous = Deno.umask(0o277);
  try {
    fn();
  } finally {
    Deno.umask(previous);
  }
}

function tempLeftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((name) => name.includes(".tmp-"));
}

function isRefused(path: string): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof SymlinkRefusedError, `expected SymlinkRefusedError, got ${err}`);
    assert.equal(err.name, "SymlinkRefusedError");
    assert.equal(err.path, path);
    assert.equal(err.message, `Refusing to follow symbolic link "${path}" inside the data dir`);
    return true;
  };
}

Deno.test("ensurePrivateDir() creates every directory from the root down 0700 whatever the umask", () => {
  const base = tempDir();
  try {
    const root = join(base, "share", "logbook");
    const dir = join(root, "sessions", "proj-0123456789ab");
    withHostileUmask(() => ensurePrivateDir(dir, root));
    assert.equal(modeOf(root), 0o700);
    assert.equal(modeOf(join(root, "sessions")), 0o700);
    assert.equal(modeOf(dir), 0o700);
    assert.ok(Deno.statSync(join(base, "share")).isDirectory);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensurePrivateDir() tightens existing directories that are open to group or others", () => {
  const root = tempDir();
  try {
    Deno.chmodSync(root, 0o755);
    Deno.mkdirSync(join(root, "logs"));
    Deno.chmodSync(join(root, "logs"), 0o775);
    Deno.mkdirSync(join(root, "run"));
    Deno.chmodSync(join(root, "run"), 0o500);
    ensurePrivateDir(join(root, "logs"), root);
    ensurePrivateDir(join(root, "run"), root);
    assert.equal(modeOf(root), 0o700);
    assert.equal(modeOf(join(root, "logs")), 0o700);
    assert.equal(modeOf(join(root, "run")), 0o500, "a tighter mode is left alone");
  } finally {
    Deno.chmodSync(root, 0o700);
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("ensurePrivateDir() refuses a symlinked directory inside the root and creates nothing through it", () => {
  const base = tempDir();
  try {
    const root = join(base, "data");
    const elsewhere = join(base, "elsewhere");
    Deno.mkdirSync(root);
    Deno.mkdirSync(elsewhere);
    Deno.symlinkSync(elsewhere, join(root, "sessions"));
    assert.throws(
      () => ensurePrivateDir(join(root, "sessions", "key"), root),
      isRefused(join(root, "sessions")),
    );
    assert.deepEqual([...Deno.readDirSync(elsewhere)], []);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensurePrivateDir() follows links above the root but not the root itself", () => {
  const base = tempDir();
  try {
    Deno.mkdirSync(join(base, "real-home"));
    Deno.symlinkSync(join(base, "real-home"), join(base, "home"));
    const root = join(base, "home", ".local", "share", "logbook");
    ensurePrivateDir(join(root, "run"), root);
    assert.equal(modeOf(join(base, "real-home", ".local", "share", "logbook", "run")), 0o700);

    const linkedRoot = join(base, "linked-data");
    Deno.symlinkSync(root, linkedRoot);
    assert.throws(
      () => ensurePrivateDir(join(linkedRoot, "run"), linkedRoot),
      isRefused(linkedRoot),
    );
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensurePrivateDir() refuses to take over a shared sticky directory such as /tmp", () => {
  const base = tempDir();
  try {
    const shared = join(base, "shared");
    Deno.mkdirSync(shared);
    Deno.chmodSync(shared, 0o1777);
    assert.throws(() => ensurePrivateDir(shared, shared), /Refusing to make shared directory/);
    assert.equal(modeOf(shared), 0o1777);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("assertNoSymlinkInside() rejects paths outside the root with TypeError", () => {
  const root = tempDir();
  try {
    assert.throws(() => assertNoSymlinkInside(`${root}-other/x`, root), TypeError);
    assert.throws(() => assertNoSymlinkInside(join(root, ".."), root), TypeError);
    assert.throws(() => ensurePrivateDir("/", root), TypeError);
    assert.throws(() => writeFileAtomic(root, "x", root), TypeError);
    assert.doesNotThrow(() => assertNoSymlinkInside(join(root, "..data", "x"), root));
    assert.doesNotThrow(() => assertNoSymlinkInside(join(root, "not", "there", "yet"), root));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("assertNoSymlinkInside() refuses a link at any depth, including a dangling one", () => {
  const root = tempDir();
  try {
    Deno.mkdirSync(join(root, "a", "b"), { recursive: true });
    Deno.symlinkSync(join(root, "missing"), join(root, "a", "b", "c"));
    assert.throws(
      () => assertNoSymlinkInside(join(root, "a", "b", "c", "d.json"), root),
      isRefused(join(root, "a", "b", "c")),
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("ensurePrivateFile() creates an empty 0600 file whatever the umask", () => {
  const root = tempDir();
  try {
    const db = join(root, "history.db");
    withHostileUmask(() => ensurePrivateFile(db, root));
    assert.equal(modeOf(db), 0o600);
    assert.equal(Deno.statSync(db).size, 0);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("ensurePrivateFile() tightens an existing 0644 file and keeps its bytes", () => {
  const root = tempDir();
  try {
    const db = join(root, "history.db");
    Deno.writeTextFileSync(db, "SQLite format 3");
    Deno.chmodSync(db, 0o644);
    ensurePrivateFile(db, root);
    assert.equal(modeOf(db), 0o600);
    assert.equal(Deno.readTextFileSync(db), "SQLite format 3");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("ensurePrivateFile() refuses a symlink and leaves its target alone", () => {
  const base = tempDir();
  try {
    const root = join(base, "data");
    const victim = join(base, "victim");
    Deno.mkdirSync(root);
    Deno.writeTextFileSync(victim, "precious");
    Deno.chmodSync(victim, 0o644);
    Deno.symlinkSync(victim, join(root, "history.db"));
    assert.throws(
      () => ensurePrivateFile(join(root, "history.db"), root),
      isRefused(join(root, "history.db")),
    );
    assert.equal(modeOf(victim), 0o644);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("writeFileAtomic() writes the bytes 0600 in 0700 directories whatever the umask", () => {
  const root = tempDir();
  try {
    const file = join(root, "sessions", "key", "id.json");
    withHostileUmask(() => writeFileAtomic(file, '{"id":1}\n', root));
    assert.equal(Deno.readTextFileSync(file), '{"id":1}\n');
    assert.equal(modeOf(file), 0o600);
    assert.equal(modeOf(join(root, "sessions")), 0o700);
    assert.equal(modeOf(join(root, "sessions", "key")), 0o700);

    const bytes = new Uint8Array([0, 255, 13, 10, 128]);
    writeFileAtomic(file, bytes, root);
    assert.deepEqual(Deno.readFileSync(file), bytes);
    assert.deepEqual(tempLeftovers(join(root, "sessions", "key")), []);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() replaces a pre-existing 0644 file with a 0600 one", () => {
  const root = tempDir();
  try {
    const file = join(root, "prompt-history.jsonl");
    Deno.writeTextFileSync(file, "old contents that are longer than the new ones\n");
    Deno.chmodSync(file, 0o644);
    writeFileAtomic(file, "new\n", root);
    assert.equal(Deno.readTextFileSync(file), "new\n");
    assert.equal(modeOf(file), 0o600);
    assert.deepEqual(tempLeftovers(root), []);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() refuses a symlink planted at the target and leaves its target's bytes untouched", async (t) => {
  const base = tempDir();
  try {
    const root = join(base, "data");
    const victim = join(base, "victim.txt");
    Deno.mkdirSync(root);
    Deno.writeTextFileSync(victim, "do not touch");
    Deno.chmodSync(victim, 0o644);

    await t.step("a link to an existing file", () => {
      const link = join(root, "record.json");
      Deno.symlinkSync(victim, link);
      assert.throws(() => writeFileAtomic(link, "overwritten", root), isRefused(link));
      assert.equal(Deno.readTextFileSync(victim), "do not touch");
      assert.equal(modeOf(victim), 0o644);
      assert.ok(Deno.lstatSync(link).isSymlink, "the link itself stays");
    });

    await t.step("a dangling link", () => {
      const link = join(root, "dangling.json");
      const missing = join(base, "would-be-created");
      Deno.symlinkSync(missing, link);
      assert.throws(() => writeFileAtomic(link, "x", root), isRefused(link));
      assert.throws(() => Deno.lstatSync(missing), Deno.errors.NotFound);
    });

    assert.deepEqual(tempLeftovers(root), []);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("writeFileAtomic() refuses a symlinked directory on the way and writes nothing through it", () => {
  const base = tempDir();
  try {
    const root = join(base, "data");
    const elsewhere = join(base, "elsewhere");
    Deno.mkdirSync(root);
    Deno.mkdirSync(elsewhere);
    Deno.symlinkSync(elsewhere, join(root, "prune-archives"));
    assert.throws(
      () => writeFileAtomic(join(root, "prune-archives", "snap.txt"), "x", root),
      isRefused(join(root, "prune-archives")),
    );
    assert.deepEqual([...Deno.readDirSync(elsewhere)], []);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("writeFileAtomic() removes its temp file and rethrows when the rename fails", () => {
  const root = tempDir();
  try {
    const target = join(root, "busy");
    Deno.mkdirSync(join(target, "inside"), { recursive: true });
    assert.throws(() => writeFileAtomic(target, "x", root), (err) => {
      assert.ok(!(err instanceof SymlinkRefusedError));
      return err instanceof Error;
    });
    assert.deepEqual(tempLeftovers(root), []);
    assert.ok(Deno.statSync(join(target, "inside")).isDirectory);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("appendPrivate() appends to a file it creates 0600 whatever the umask", () => {
  const root = tempDir();
  try {
    const log = join(root, "logs", "stage-markers.log");
    withHostileUmask(() => appendPrivate(log, '{"a":1}\n', root));
    appendPrivate(log, new TextEncoder().encode('{"a":2}\n'), root);
    assert.equal(Deno.readTextFileSync(log), '{"a":1}\n{"a":2}\n');
    assert.equal(modeOf(log), 0o600);
    assert.equal(modeOf(join(root, "logs")), 0o700);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("appendPrivate() tightens a pre-existing 0644 file and keeps what it held", () => {
  const root = tempDir();
  try {
    const trail = join(root, "trail.jsonl");
    Deno.writeTextFileSync(trail, "first\n");
    Deno.chmodSync(trail, 0o644);
    appendPrivate(trail, "second\n", root);
    assert.equal(Deno.readTextFileSync(trail), "first\nsecond\n");
    assert.equal(modeOf(trail), 0o600);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("appendPrivate() refuses a symlink planted at the target and leaves its target's bytes untouched", () => {
  const base = tempDir();
  try {
    const root = join(base, "data");
    const victim = join(base, "victim.txt");
    Deno.mkdirSync(root);
    Deno.writeTextFileSync(victim, "do not touch");
    const link = join(root, "prompt-history.jsonl");
    Deno.symlinkSync(victim, link);
    assert.throws(() => appendPrivate(link, "appended", root), isRefused(link));
    assert.equal(Deno.readTextFileSync(victim), "do not touch");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("tightenMode() removes extra bits only and refuses links", () => {
  const base = tempDir();
  try {
    const loose = join(base, "loose");
    const tight = join(base, "tight");
    Deno.writeTextFileSync(loose, "");
    Deno.writeTextFileSync(tight, "");
    Deno.chmodSync(loose, 0o664);
    Deno.chmodSync(tight, 0o400);
    tightenMode(loose, 0o600);
    tightenMode(tight, 0o600);
    assert.equal(modeOf(loose), 0o600);
    assert.equal(modeOf(tight), 0o400);

    Deno.symlinkSync(loose, join(base, "link"));
    Deno.chmodSync(loose, 0o644);
    assert.throws(() => tightenMode(join(base, "link"), 0o600), SymlinkRefusedError);
    assert.equal(modeOf(loose), 0o644);
    assert.throws(() => tightenMode(loose, 0o10000), RangeError);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("removePath() removes a tree without following the links inside it", () => {
  const base = tempDir();
  try {
    const outside = join(base, "outside");
    Deno.mkdirSync(outside);
    Deno.writeTextFileSync(join(outside, "keep.txt"), "keep");
    const tree = join(base, "data");
    Deno.mkdirSync(join(tree, "sessions", "key"), { recursive: true });
    Deno.writeTextFileSync(join(tree, "sessions", "key", "id.json"), "{}");
    Deno.symlinkSync(outside, join(tree, "sessions", "link-to-outside"));

    assert.deepEqual(removePath(tree), { removed: true });
    assert.throws(() => Deno.lstatSync(tree), Deno.errors.NotFound);
    assert.equal(Deno.readTextFileSync(join(outside, "keep.txt")), "keep");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("removePath() removes a link itself, not its target", () => {
  const base = tempDir();
  try {
    Deno.writeTextFileSync(join(base, "target"), "keep");
    Deno.symlinkSync(join(base, "target"), join(base, "link"));
    assert.deepEqual(removePath(join(base, "link")), { removed: true });
    assert.equal(Deno.readTextFileSync(join(base, "target")), "keep");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("removePath() reports a missing path as not removed and a failure as an error", () => {
  const base = tempDir();
  try {
    assert.deepEqual(removePath(join(base, "never-was")), { removed: false });
    const result = removePath(join(base, "bad\0name"));
    assert.equal(result.removed, false);
    assert.equal(typeof result.error, "string");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("isPidAlive() is true for a running process and false once it has exited", async () => {
  assert.equal(isPidAlive(Deno.pid), true);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "setTimeout(() => {}, 60_000)"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  assert.equal(isPidAlive(child.pid), true);
  child.kill("SIGKILL");
  await child.status;
  assert.equal(isPidAlive(child.pid), false);
});

Deno.test("isPidAlive() rejects ids that would probe a process group", () => {
  for (const pid of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => isPidAlive(pid), RangeError);
  }
});

/** The error `fn` throws. */
function thrown(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail("expected an error");
}

Deno.test("explainDataDir() names a file where the data dir or a folder above it should be", async (t) => {
  const dir = tempDir();
  try {
    const file = join(dir, "file");
    Deno.writeTextFileSync(file, "");
    await t.step("a file at the data dir's path", () => {
      const err = thrown(() => ensurePrivateDir(join(file, "run"), file));
      assert.equal(
        explainDataDir(err, file)?.message,
        `Cannot use the data dir "${file}": it is a file where a folder should be; move it ` +
          "away, or set LOGBOOK_DATA_DIR to a folder of your own",
      );
    });
    await t.step("a file above it (mkdir says it exists)", () => {
      const root = join(file, "logbook");
      const err = thrown(() => ensurePrivateDir(root, root));
      assert.match(String(err), /File exists/);
      assert.equal(
        explainDataDir(err, root)?.message,
        `Cannot use the data dir "${root}": "${file}" is a file where a folder should be; ` +
          "move it away, or set LOGBOOK_DATA_DIR to a folder of your own",
      );
    });
    await t.step("a file in its way when only reading (stat says not a directory)", () => {
      const root = join(file, "logbook");
      const err = thrown(() => Deno.statSync(join(root, "history.db")));
      assert.match(
        explainDataDir(err, root, "read")?.message ?? "",
        new RegExp(`: "${file}" is a file where a folder should be;`),
      );
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("explainDataDir() leaves errors that are not the file system's refusals alone", () => {
  assert.equal(explainDataDir(new Error("disk on fire"), "/tmp/x"), undefined);
  assert.equal(explainDataDir(new Deno.errors.NotFound("gone"), "/tmp/x"), undefined);
  assert.equal(explainDataDir(new TypeError("bad"), "/tmp/x"), undefined);
});

Deno.test("explainDataDir() says whose a refused path is and what to do, from the error's code and path", () => {
  const dir = tempDir();
  try {
    const root = join(dir, "data");
    const refusal = (code: string, path: string) =>
      Object.assign(new Error(`refused (os error 1): op '${path}'`), { code });
    assert.equal(
      explainDataDir(refusal("EPERM", root), root)?.message,
      `Cannot use the data dir "${root}": it belongs to another user, so it cannot be made ` +
        "owner-only; run logbook as its owner, or set LOGBOOK_DATA_DIR to a folder of your own",
    );
    assert.equal(
      explainDataDir(refusal("EACCES", root), root)?.message,
      `Cannot use the data dir "${root}": this user may not write in "${dir}"; make it writable ` +
        "for you, or set LOGBOOK_DATA_DIR to a folder of your own",
    );
    assert.equal(
      explainDataDir(refusal("EROFS", root), root)?.message,
      `Cannot use the data dir "${root}": "${dir}" is on a read-only disk; set LOGBOOK_DATA_DIR ` +
        "to a folder on a writable one",
    );
    Deno.mkdirSync(root);
    assert.equal(
      explainDataDir(refusal("EACCES", join(root, "history.db")), root, "read")?.message,
      `Cannot use the data dir "${root}": this user may not read it; run logbook as its owner, ` +
        "or set LOGBOOK_DATA_DIR to a folder of your own",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
