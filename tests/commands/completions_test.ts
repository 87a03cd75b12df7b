// `logbook completions`: each script parses in its shell and completes commands, options and the
// values agent, kind, show's --format and search's --sort take, as the specs say; zsh (typed into under tmux) and fish are tried
// only where installed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../../commands/logbook.ts";
import { AGENTS } from "../../lib/agents.ts";
import { KINDS } from "../../lib/sources/adapter.ts";
import { EXPORT_FORMATS as FORMATS } from "../../lib/export.ts";
import { SEARCH_SORTS } from "../../lib/store/search.ts";
import { captureIo, makeWorld, removeDir, runCli, tempDir } from "../_helpers.ts";
import { shellScript, shellWord, Tmux, tmuxAvailable } from "../_tmux.ts";

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
    await t.step(
      "the values of show --format and search --sort, as their specs give them",
      async () => {
        assert.deepEqual(await complete("logbook", "show", "--format", ""), [...FORMATS].sort());
        assert.deepEqual(await complete("logbook", "show", "--format", "h"), ["html"]);
        assert.deepEqual(
          await complete("logbook", "search", "--sort", ""),
          [...SEARCH_SORTS].sort(),
        );
      },
    );
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
      assert.deepEqual(await complete("logbook show --format "), [...FORMATS].sort());
      assert.deepEqual(await complete("logbook forget --dr"), ["--dry-run"]);
    } finally {
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "the zsh script parses and completes commands, options and values (tmux)",
  ignore: !installed("zsh") || !tmuxAvailable(),
  fn: async (t) => {
    const dir = await tempDir();
    try {
      const file = join(dir, "_logbook");
      Deno.writeTextFileSync(file, await script("zsh"));
      assert.equal((await shell("zsh", ["-n", file])).code, 0, "zsh -n");
      // An interactive zsh of its own (no user rc files) with the script on its fpath, as the
      // README installs it; completion is tried as a user does, with Tab.
      Deno.writeTextFileSync(
        join(dir, ".zshrc"),
        `fpath=(${shellWord(dir)} $fpath)\nautoload -Uz compinit && compinit -u -D\nPS1='%% '\n`,
      );
      const { script: run } = shellScript(dir, "zsh", ["zsh", "-i"], {
        HOME: dir,
        ZDOTDIR: dir,
        INIT_CWD: dir,
      });
      const tmux = new Tmux(run, { width: 120, height: 30 });
      try {
        await tmux.waitFor(/^%\s*$/m, "the zsh prompt");
        const completes = async (typed: string, line: RegExp) => {
          tmux.literal(typed);
          tmux.keys("Tab");
          await tmux.waitFor(line, `"${typed}" completed`);
          tmux.keys("C-u");
          await tmux.waitFor(/^%\s*$/m, "an empty line");
        };
        await t.step("a command from its first letters", async () => {
          await completes("logbook sea", /^% logbook search\s*$/m);
        });
        await t.step("the shell of completions", async () => {
          await completes("logbook completions z", /^% logbook completions zsh\s*$/m);
        });
        await t.step("an option, inserted", async () => {
          await completes("logbook forget --dr", /^% logbook forget --dry-run\s*$/m);
        });
        await t.step("the values of --agent", async () => {
          await completes("logbook search --agent cod", /^% logbook search --agent codex\s*$/m);
        });
      } finally {
        tmux.kill();
      }
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
