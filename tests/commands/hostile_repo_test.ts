// A cloned repository that asks for more than a stranger may (fixtures/hostile_repo/): logbook run
// in it warns about each key its `.logbook/config.json` may not set and changes nothing else: no
// mirror, no endpoint of its choosing, nothing of logbook's for `git add` to stage.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { git } from "../_git.ts";
import { FIXTURES, makeWorld, runCli } from "../_helpers.ts";

const SESSION = "5b1d9e27-3c4a-4f86-9d0e-7a2c8b6f1e53";

Deno.test("a cloned repository's settings are refused key by key, and change nothing else", async () => {
  const world = await makeWorld();
  const repo = join(world.dir, "cloned");
  try {
    cpSync(join(FIXTURES, "hostile_repo"), repo, { recursive: true });
    await Deno.rename(join(repo, "gitignore"), join(repo, ".gitignore"));
    await git(repo, "init", "-q");
    await git(repo, "add", "-A");
    await git(repo, "commit", "-q", "-m", "clone");
    await placeClaudeTranscript(
      world,
      repo,
      SESSION,
      claudeTranscript(SESSION, repo, [[
        "Where does the cormorant job run?",
        "On the cormorant host.",
      ]]),
    );
    const inRepo = { ...world.vars, INIT_CWD: repo };
    const file = join(repo, ".logbook", "config.json");

    const run = await runCli("reindex", [], inRepo);
    assert.equal(run.code, 0, run.stderr);
    for (
      const key of [
        "allowedSecrets",
        "apiKey",
        "baseUrl",
        "codex.baseUrl",
        "dashboard.port",
        "history.roots.claude",
        "team.projects",
        "team.raw",
        "team.url",
      ]
    ) {
      assert.ok(run.stderr.includes(`Ignored "${key}" in the project config "${file}"`), key);
    }
    assert.ok(run.stderr.includes(`Ignored "mirror" in "${file}"`), "mirror");
    // What it may choose is not named: a model, a labelled value to redact.
    assert.doesNotMatch(run.stderr, /"model"|"secrets/);

    const search = await runCli("search", ["cormorant", "--json"], inRepo);
    assert.equal(search.code, 0, search.stderr);
    assert.equal(search.stdout.trim().split("\n").length, 2, "captured as usual");
    assert.deepEqual(
      [...Deno.readDirSync(join(repo, ".logbook"))].map((e) => e.name).sort(),
      ["config.json"],
      "no mirror",
    );
    await git(repo, "add", "-A");
    assert.equal(await git(repo, "diff", "--cached", "--name-only"), "", "nothing to stage");
  } finally {
    await world.cleanup();
  }
});
