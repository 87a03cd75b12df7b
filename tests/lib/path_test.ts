// lib/path.ts gives what node:path gives, for every spelling of a path: it stands in for
// node:path in every module, so a difference would move where logbook reads and writes.

import assert from "node:assert/strict";
import * as node from "node:path";
import * as path from "../../lib/path.ts";

const SEGMENTS = ["", ".", "..", "a", "b", "c.json", ".hidden", "x y", "日本", "...", "a.b.json"];

/** Paths built from SEGMENTS: every one of up to three segments, rooted or not, with a trailing `/`. */
function spellings(): string[] {
  const out = new Set<string>(["", "/", "//", "///", ".", "./", "..", "../", "/..", "//a", "a//b"]);
  const walk = (parts: string[]) => {
    for (const lead of ["", "/", "//"]) {
      for (const trail of ["", "/", "//"]) out.add(lead + parts.join("/") + trail);
    }
    if (parts.length === 3) return;
    for (const segment of SEGMENTS) walk([...parts, segment]);
  };
  walk([]);
  return [...out];
}

const PATHS = spellings();

Deno.test("normalize, dirname, basename and isAbsolute equal node:path's for every spelling", () => {
  assert.ok(PATHS.length > 3000, `${PATHS.length} spellings`);
  for (const p of PATHS) {
    assert.equal(path.normalize(p), node.posix.normalize(p), `normalize(${JSON.stringify(p)})`);
    assert.equal(path.dirname(p), node.posix.dirname(p), `dirname(${JSON.stringify(p)})`);
    assert.equal(path.basename(p), node.posix.basename(p), `basename(${JSON.stringify(p)})`);
    for (const suffix of [".json", "json", "c.json", ""]) {
      assert.equal(
        path.basename(p, suffix),
        node.posix.basename(p, suffix),
        `basename(${JSON.stringify(p)}, ${JSON.stringify(suffix)})`,
      );
    }
    assert.equal(path.isAbsolute(p), node.posix.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
  }
});

Deno.test("join, resolve and relative equal node:path's, against this process's directory", () => {
  const some = PATHS.filter((_, i) => i % 7 === 0);
  for (const a of some) {
    for (const b of ["", "b", "/b", "../c", "./d/", "a//b/../c"]) {
      const cases = `(${JSON.stringify(a)}, ${JSON.stringify(b)})`;
      assert.equal(path.join(a, b), node.posix.join(a, b), `join${cases}`);
      assert.equal(path.resolve(a, b), node.posix.resolve(a, b), `resolve${cases}`);
      assert.equal(path.relative(a, b), node.posix.relative(a, b), `relative${cases}`);
      assert.equal(path.relative(b, a), node.posix.relative(b, a), `relative(b, a)${cases}`);
    }
  }
  assert.equal(path.join(), node.posix.join());
  assert.equal(path.resolve(), Deno.cwd());
  assert.equal(path.join("a", "", "b", ""), node.posix.join("a", "", "b", ""));
  assert.equal(path.resolve("a", "/b", "c"), "/b/c");
  assert.equal(path.sep, node.sep);
});

Deno.test("win32() is node:path's, for Windows paths recorded elsewhere", () => {
  assert.equal(
    path.win32().normalize("C:/Users//dana\\src\\..\\vault\\"),
    "C:\\Users\\dana\\vault\\",
  );
  assert.equal(path.win32().basename("C:\\Users\\dana\\vault"), "vault");
});
