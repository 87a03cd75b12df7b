// A folder's listing is taken from the last pass only while the folder is as it was when listed:
// same mtime, inode and device, and changed well before the listing (a coarse clock's tick).

import assert from "node:assert/strict";
import { Folders, type KeptListings, SETTLED_MS } from "../../../lib/sources/folders.ts";
import { removeDir, tempDir } from "../../_helpers.ts";

/** The folder's mtime set to `ms` (epoch): what a coarse clock, or a restore, leaves. */
function setMtime(path: string, ms: number): void {
  Deno.utimeSync(path, new Date(ms), new Date(ms));
}

/** A pass's listing of `dir`, through what `kept` holds; returns the names and what it keeps. */
function pass(
  dir: string,
  kept: KeptListings | undefined,
): { names: readonly string[]; kinds: string; kept: KeptListings | null } {
  const folders = new Folders(() => kept);
  const { names, kinds } = folders.list(dir);
  return { names, kinds, kept: folders.toKeep() };
}

Deno.test("a folder listed long after it last changed is taken from the last listing", async (t) => {
  const dir = await tempDir();
  try {
    const folder = `${dir}/project`;
    Deno.mkdirSync(`${folder}/session`, { recursive: true });
    Deno.writeTextFileSync(`${folder}/a.jsonl`, "{}\n");
    Deno.symlinkSync(`${folder}/a.jsonl`, `${folder}/link.jsonl`);
    const settled = Date.now() - 60_000;
    setMtime(folder, settled);
    const first = pass(folder, undefined);
    assert.deepEqual(first.names, ["a.jsonl", "link.jsonl", "session"]);
    assert.equal(first.kinds, "fld");
    assert.ok(first.kept, "a first listing is kept");

    await t.step("unchanged: the kept listing, and nothing new to keep", () => {
      // Written to, a file leaves its folder as it was: the listing still holds.
      Deno.writeTextFileSync(`${folder}/a.jsonl`, "{}\n{}\n", { append: true });
      const again = pass(folder, first.kept!);
      assert.deepEqual([again.names, again.kinds], [first.names, first.kinds]);
      assert.equal(again.kept, null);
    });
    await t.step("the kept listing is what is used: a change its mtime hides is not seen", () => {
      // Only a folder's own mtime tells: put back, it hides the new file (the test's proof that
      // the folder was not read again; a file system sets it forward on every change).
      Deno.writeTextFileSync(`${folder}/hidden.jsonl`, "{}\n");
      setMtime(folder, settled);
      assert.deepEqual(pass(folder, first.kept!).names, first.names);
      Deno.removeSync(`${folder}/hidden.jsonl`);
      setMtime(folder, settled);
    });
    await t.step("a new file in an old folder is found", () => {
      Deno.writeTextFileSync(`${folder}/b.jsonl`, "{}\n");
      const again = pass(folder, first.kept!);
      assert.deepEqual(again.names, ["a.jsonl", "b.jsonl", "link.jsonl", "session"]);
      assert.ok(again.kept, "the new listing is kept");
    });
    await t.step("a deleted file is gone from the listing", () => {
      Deno.removeSync(`${folder}/b.jsonl`);
      Deno.removeSync(`${folder}/a.jsonl`);
      assert.deepEqual(pass(folder, first.kept!).names, ["link.jsonl", "session"]);
    });
  } finally {
    await removeDir(dir);
  }
});

Deno.test("a folder changed within a clock's tick of its listing is listed again", async () => {
  const dir = await tempDir();
  try {
    const folder = `${dir}/project`;
    Deno.mkdirSync(folder);
    Deno.writeTextFileSync(`${folder}/a.jsonl`, "{}\n");
    // Listed within SETTLED_MS of its last change: on a clock of whole seconds, a file added
    // later in that second leaves the mtime as it was.
    const recent = Date.now() - SETTLED_MS / 4;
    setMtime(folder, recent);
    const first = pass(folder, undefined);
    Deno.writeTextFileSync(`${folder}/b.jsonl`, "{}\n");
    setMtime(folder, recent);
    assert.deepEqual(pass(folder, first.kept!).names, ["a.jsonl", "b.jsonl"]);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("a folder replaced by another with the same mtime is listed again", async () => {
  const dir = await tempDir();
  try {
    const folder = `${dir}/project`;
    const settled = Date.now() - 60_000;
    Deno.mkdirSync(folder);
    Deno.writeTextFileSync(`${folder}/a.jsonl`, "{}\n");
    setMtime(folder, settled);
    const first = pass(folder, undefined);
    // Moved away and another put in its place (a restore): another inode.
    Deno.renameSync(folder, `${dir}/old`);
    Deno.mkdirSync(folder);
    Deno.writeTextFileSync(`${folder}/c.jsonl`, "{}\n");
    setMtime(folder, settled);
    assert.notEqual(Deno.statSync(folder).ino, Deno.statSync(`${dir}/old`).ino);
    assert.deepEqual(pass(folder, first.kept!).names, ["c.jsonl"]);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("Folders lists each folder once a pass, keeps what it looked at, and throws as readDir", async () => {
  const dir = await tempDir();
  try {
    const settled = Date.now() - 60_000;
    for (const name of ["one", "two"]) {
      Deno.mkdirSync(`${dir}/${name}`);
      setMtime(`${dir}/${name}`, settled);
    }
    const both = new Folders(() => undefined);
    both.list(`${dir}/one`);
    both.list(`${dir}/two`);
    const kept = both.toKeep()!;
    assert.deepEqual(Object.keys(kept).sort(), [`${dir}/one`, `${dir}/two`]);

    // A folder not looked at is dropped from what is kept.
    const one = new Folders(() => kept);
    one.list(`${dir}/one`);
    assert.deepEqual(Object.keys(one.toKeep()!), [`${dir}/one`]);

    // Within a pass a folder is listed once: a later change is for the next pass.
    const folders = new Folders(() => undefined);
    assert.deepEqual(folders.list(`${dir}/one`).names, []);
    Deno.writeTextFileSync(`${dir}/one/late.jsonl`, "{}\n");
    assert.deepEqual(folders.list(`${dir}/one`).names, []);

    assert.throws(() => folders.list(`${dir}/missing`), Deno.errors.NotFound);
    assert.throws(() => folders.list(`${dir}/one/late.jsonl`), Deno.errors.NotADirectory);
  } finally {
    await removeDir(dir);
  }
});
