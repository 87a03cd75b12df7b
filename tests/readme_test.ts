// The README tells the truth: its usage blocks are each command's real `--help`, and its first
// screen holds exactly the two commands a new user runs.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS, main as logbook } from "../commands/logbook.ts";
import { captureIo, ROOT } from "./_helpers.ts";

const README = Deno.readTextFileSync(join(ROOT, "README.md"));

Deno.test("README usage blocks match each command's --help exactly", async () => {
  const blocks = new Map<string, string>();
  for (const match of README.matchAll(/<!-- help:([a-z-]+) -->\s*```text\n([\s\S]*?)```/g)) {
    blocks.set(match[1]!, match[2]!);
  }
  // `completions` belongs to the dispatcher, which writes its script from the commands' specs.
  const names = [...Object.keys(COMMANDS), "completions"];
  assert.deepEqual([...blocks.keys()].sort(), names.sort());
  for (const name of names) {
    const io = captureIo();
    assert.equal(await logbook([name, "--help"], io), 0, io.stderr());
    assert.equal(blocks.get(name), io.stdout(), `README block for ${name}`);
  }
});

Deno.test("README's first screen shows exactly the start and test commands", () => {
  const first = /```sh\n([\s\S]*?)```/.exec(README);
  assert.ok(first, "a first shell block");
  const before = README.slice(0, first.index);
  assert.ok(before.split("\n").length < 12, "the block is on the first screen");
  const commands = first[1]!.split("\n").filter((l) => l.trim()).map((l) =>
    l.split("#")[0]!.trim()
  );
  assert.deepEqual(commands, ["deno task start", "deno task test"]);
});
