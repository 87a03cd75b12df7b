// The pager: less is told the line to open at as an argument after the user's own words; another
// pager, which may read `+<line>` otherwise, opens at the top.

import assert from "node:assert/strict";
import { join } from "node:path";
import { runsLess, startPager } from "../../../commands/_terminal/pager.ts";
import { envFrom } from "../../../lib/env.ts";

/** A fake pager named `name` that keeps its arguments and what it read. */
function fakePager(dir: string, name: string): { path: string; args: string; read: string } {
  const path = join(dir, name);
  const args = join(dir, `${name}.args`);
  const read = join(dir, `${name}.read`);
  Deno.writeTextFileSync(path, `#!/bin/sh\nprintf '%s' "$*" > '${args}'\ncat > '${read}'\n`);
  Deno.chmodSync(path, 0o755);
  return { path, args, read };
}

Deno.test("less opens at the line asked for, after the user's own options; other pagers at the top", async (t) => {
  const dir = Deno.makeTempDirSync();
  try {
    await t.step("less, with the user's options", async () => {
      const less = fakePager(dir, "less");
      const pager = startPager(envFrom({ PAGER: `${less.path} -R --tilde` }), { at: 42 })!;
      await pager.write("a page\n");
      await pager.close();
      assert.equal(Deno.readTextFileSync(less.args), "-R --tilde +42");
      assert.equal(Deno.readTextFileSync(less.read), "a page\n");
    });
    await t.step("the first line is the top: nothing to add", async () => {
      const less = fakePager(dir, "less");
      const pager = startPager(envFrom({ PAGER: less.path }), { at: 1 })!;
      await pager.close();
      assert.equal(Deno.readTextFileSync(less.args), "");
    });
    await t.step("another pager gets no line", async () => {
      const most = fakePager(dir, "most");
      const pager = startPager(envFrom({ PAGER: `${most.path} -s` }), { at: 42 })!;
      await pager.close();
      assert.equal(Deno.readTextFileSync(most.args), "-s");
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("runsLess knows less by its name, with a path or options", () => {
  for (const yes of ["less", "less -R", "/usr/bin/less -RS", "  less"]) {
    assert.ok(runsLess(yes), yes);
  }
  for (const no of ["lesspipe", "most", "bat --paging=always", "/opt/less-ish/more"]) {
    assert.ok(!runsLess(no), no);
  }
});
