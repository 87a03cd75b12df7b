// Tests for lib/present.ts: whether something is at a path, and what, on a real file system.

import assert from "node:assert/strict";
import { join } from "node:path";
import { canStat, isPresent, lstatOrUndefined } from "../../lib/present.ts";
import { removeDir, tempDir } from "../_helpers.ts";

Deno.test("lstatOrUndefined() sees a link itself, and nothing where nothing can be", async () => {
  const dir = await tempDir();
  try {
    const file = join(dir, "file");
    Deno.writeTextFileSync(file, "x");
    Deno.symlinkSync(join(dir, "missing"), join(dir, "link"));
    assert.ok(lstatOrUndefined(file)?.isFile);
    assert.ok(lstatOrUndefined(join(dir, "link"))?.isSymlink, "the link, not its target");
    assert.equal(lstatOrUndefined(join(dir, "missing")), undefined);
    assert.equal(lstatOrUndefined(join(file, "under-a-file")), undefined);
    assert.equal(isPresent(join(dir, "link")), false, "a dangling link has nothing behind it");
    assert.equal(canStat(join(file, "under-a-file")), false);
  } finally {
    await removeDir(dir);
  }
});
