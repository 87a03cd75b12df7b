// `logbook completions`: each script parses in its shell and completes commands, options and the
// values agent and kind take, as the specs say; zsh and fish are tried only where installed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../../commands/logbook.ts";
import { AGENTS, KINDS } from "../../lib/sources/adapter.ts";
import { captureIo, makeWorld, removeDir, runCli, tempDir } from "../_helpers.ts";

async function script(shell: string): Promise<string> {
  const io = captureIo();
  const { main } = await import("../../commands/logbook.ts");
  assert.equal(await main(["completions", shell], io), 0, io.stderr());
  return io.stdout();
}

function installed(program: string): boolean {
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${program}`] }).outputSync().success;
  } catch {
    return false;
  }
}

async function shell(program: string, args: string[]): Promise<{ code: number; out: string }> {
  const output = await new Deno.Command(program, { args, stdin: "null" }).output();
  const out = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { code: output.code, out };
}

Deno.test("the bash script parses and completes commands, options and values", async (t) => {
  const dir = await tempDir();
  try {
    const file = join(dir, "logbook.bash");
    Deno.writeTextFileSync(file, await script("bash"));
    assert.equal((await shell("bash", ["-n", file])).code, 0, "bash -n");
    // Completes as bash would for the words typed so far: COMP_WORDS, COMP_CWORD, _logbook.
    const complete = async (...words: string[]) => {
      const quoted = words.map((w) => `'${w}'`).join(" ");
      const { code, out } = await shell("bash", [
        "-c",
        `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; ` +
        '_logbook; printf "%s\\n" "${COMPREPLY[@]}"',
      ]);
      assert.equal(code, 0, out);
      return out.split("\n").filter(Boolean).sort();
    };
    await t.step("a command from its first letters", async () => {
      assert.deepEqual(await complete("logbook", "sea"), ["search"]);
      assert.deepEqual(await complete("logbook", "help", "dash"), ["dashboard"]);
    });
    await t.step("every command is offered", async () => {
      const all = await complete("logbook", "");
      for (const name of [...Object.keys(COMMANDS), "completions", "help"]) {
        assert.ok(all.includes(name), name);
      }
    });
    await t.step("a command's options", async () => {
      assert.deepEqual(await complete("logbook", "forget", "--d"), ["--dry-run"]);
      assert.deepEqual(await complete("logbook", "search", "--ag"), ["--agent"]);
    });
    await t.step("the values of --agent and --kind", async () => {
      assert.deepEqual(await complete("logbook", "search", "--agent", ""), [...AGENTS].sort());
      assert.deepEqual(
        await complete("logbook", "search", "--kind", "tool_"),
        KINDS.filter((k) => k.startsWith("tool_")).sort(),
      );
    });
    await t.step("the shells of completions", async () => {
      assert.deepEqual(await complete("logbook", "completions", "z"), ["zsh"]);
    });
  } finally {
    await removeDir(dir);
  }
});

Deno.test({
  name: "the fish script parses and completes options and values",
  ignore: !installed("fish"),
  fn: async () => {
    const dir = await tempDir();
    try {
      const file = join(dir, "logbook.fish");
      Deno.writeTextFileSync(file, await script("fish"));
      assert.equal((await shell("fish", ["-n", file])).code, 0, "fish -n");
      const complete = async (line: string) => {
        const { code, out } = await shell("fish", [
          "-c",
          `source '${file}'; complete -C '${line}'`,
        ]);
        assert.equal(code, 0, out);
        return out.split("\n").filter(Boolean).map((l) => l.split("\t")[0]!).sort();
      };
      assert.deepEqual(await complete("logbook sea"), ["search"]);
      assert.deepEqual(await complete("logbook search --agent "), [...AGENTS].sort());
      assert.deepEqual(await complete("logbook forget --dr"), ["--dry-run"]);
    } finally {
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "the zsh script parses",
  ignore: !installed("zsh"),
  fn: async () => {
    const dir = await tempDir();
    try {
      const file = join(dir, "_logbook");
      Deno.writeTextFileSync(file, await script("zsh"));
      assert.equal((await shell("zsh", ["-n", file])).code, 0, "zsh -n");
    } finally {
      await removeDir(dir);
    }
  },
});

Deno.test("completions names the shells it knows, as a usage error", async () => {
  const world = await makeWorld();
  try {
    const none = await runCli("logbook", ["completions"], world.vars);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^error: Say which shell: bash, zsh or fish\n/);
    assert.match(none.stderr, /Run "logbook completions --help" for usage/);
    const other = await runCli("logbook", ["completions", "tcsh"], world.vars);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /Unknown shell "tcsh"/);
  } finally {
    await world.cleanup();
  }
});
