// Cron is silent: docs/cron.md's crontab line and its systemd unit's ExecStart, run exactly as
// written (with this checkout as `/path/to/logbook`) and with no terminal, print nothing when all is
// well.

import assert from "node:assert/strict";
import { join } from "node:path";
import { childBaseEnv, makeWorld, ROOT, type World } from "./_helpers.ts";
import { writeClaudeCorpus } from "./_corpus.ts";

const CRON_DOC = Deno.readTextFileSync(join(ROOT, "docs", "cron.md"));
const PLACEHOLDER = "/path/to/logbook";

/** The command of docs/cron.md's crontab line: the line in its ```cron block, schedule removed. */
function cronCommand(): string {
  const block = /```cron\n([\s\S]*?)```/.exec(CRON_DOC);
  assert.ok(block, "docs/cron.md has a ```cron block");
  const lines = block[1]!.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#"));
  assert.equal(lines.length, 1, "one crontab line");
  const fields = lines[0]!.trim().split(/\s+/);
  // Five schedule fields, then the command, which cron hands to /bin/sh.
  return fields.slice(5).join(" ").replaceAll(PLACEHOLDER, ROOT);
}

/** The unit's `ExecStart` (as argv) and `WorkingDirectory`, from docs/cron.md's ```ini block. */
function systemdService(): { argv: string[]; cwd: string } {
  const block = /```ini\n([\s\S]*?)```/.exec(CRON_DOC);
  assert.ok(block, "docs/cron.md has a systemd ```ini block");
  const value = (key: string) => {
    const line = block[1]!.split("\n").find((l) => l.startsWith(`${key}=`));
    assert.ok(line, `the unit has ${key}=`);
    return line.slice(key.length + 1).trim().replaceAll(PLACEHOLDER, ROOT);
  };
  // The unit's ExecStart holds no quotes, so systemd splits it on whitespace as this does.
  const exec = value("ExecStart");
  assert.ok(!/["'\\$%]/.test(exec), "ExecStart needs no systemd quoting or specifiers");
  return { argv: exec.split(/\s+/), cwd: value("WorkingDirectory") };
}

/** The environment cron or systemd gives the job: no terminal, only the basics and the world. */
function jobEnv(world: World): Record<string, string> {
  const { PATH, DENO_DIR, ...rest } = childBaseEnv();
  return { ...rest, PATH: PATH!, DENO_DIR: DENO_DIR!, ...world.vars };
}

async function runJob(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("docs/cron.md's cron line prints nothing when all is well", async () => {
  const world = await makeWorld();
  try {
    // Well-formed transcripts: the project's fixtures hold damaged lines on purpose, and a warning
    // about one is rightly printed.
    writeClaudeCorpus(world.claude, { sessions: 3, lines: 10 });
    const command = cronCommand();
    assert.match(command, /reindex/);
    // The first run captures the fixtures, the second finds nothing new: both are silent.
    for (const run of ["first", "second"]) {
      const result = await runJob(["/bin/sh", "-c", command], world.home, jobEnv(world));
      assert.deepEqual(
        [result.code, result.stdout, result.stderr],
        [0, "", ""],
        `${run} run of: ${command}`,
      );
    }
    assert.ok(Deno.statSync(join(world.data, "history.db")).size > 0, "it captured");
  } finally {
    await world.cleanup();
  }
});

Deno.test("docs/cron.md's systemd ExecStart prints nothing when all is well", async () => {
  const world = await makeWorld();
  try {
    writeClaudeCorpus(world.claude, { sessions: 3, lines: 10 });
    const { argv, cwd } = systemdService();
    assert.equal(cwd, ROOT);
    for (const run of ["first", "second"]) {
      const result = await runJob(argv, cwd, jobEnv(world));
      assert.deepEqual(
        [result.code, result.stdout, result.stderr],
        [0, "", ""],
        `${run} run of: ${argv.join(" ")}`,
      );
    }
    assert.ok(Deno.statSync(join(world.data, "history.db")).size > 0, "it captured");
  } finally {
    await world.cleanup();
  }
});
