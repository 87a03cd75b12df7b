// `reindex` of transcripts recorded on another machine (a Windows laptop, a Mac): a recorded cwd
// that does not exist here is its own project, whatever directory capture runs from.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { childBaseEnv, FIXTURES, makeWorld, ROOT, runCli, taskFlags } from "../_helpers.ts";

interface Row {
  key: string;
  project_root: string;
  project_key: string;
}

/** `logbook reindex` in a real subprocess whose working directory is `cwd` (no INIT_CWD). */
async function reindexFrom(cwd: string, vars: Record<string, string>): Promise<void> {
  const { INIT_CWD: _, ...rest } = vars;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...await taskFlags("reindex"), "--quiet", join(ROOT, "commands", "reindex.ts")],
    cwd,
    env: { ...childBaseEnv(), ...rest },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
}

function projects(data: string): Map<string, Row> {
  const db = new DatabaseSync(join(data, "history.db"), { readOnly: true });
  try {
    const rows = db.prepare("SELECT key, project_root, project_key FROM conversations")
      .all() as unknown as Row[];
    return new Map(rows.map((r) => [r.key, r]));
  } finally {
    db.close();
  }
}

Deno.test("a cwd from another machine is its own project, the same from any working directory", async () => {
  const world = await makeWorld();
  try {
    const elsewhere = join(FIXTURES, "elsewhere");
    cpSync(join(elsewhere, "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    cpSync(join(elsewhere, "codex", "sessions"), join(world.codex, "sessions"), {
      recursive: true,
    });
    // Capture once from inside a Git repository (its root must not claim the transcripts) and
    // once from a plain directory, each into a fresh store.
    const repo = join(world.dir, "repo");
    Deno.mkdirSync(join(repo, ".git", "refs"), { recursive: true });
    Deno.writeTextFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    Deno.mkdirSync(join(repo, "src"));
    const plain = join(world.dir, "plain");
    Deno.mkdirSync(plain);

    await reindexFrom(join(repo, "src"), world.vars);
    const first = projects(world.data);
    const second_data = join(world.dir, "data2");
    await reindexFrom(plain, { ...world.vars, LOGBOOK_DATA_DIR: second_data });
    const second = projects(second_data);

    const vault = "C:\\Users\\dana\\src\\vault";
    const expected: Record<string, string> = {
      "claude:5e2b7c1d-3f4a-4b8e-9c6d-0a1e2f3b4c5d": vault,
      // Recorded as `c:\Users\dana\src\vault\` by the VS Code extension: the same folder.
      "codex:019c9f4e-2b7a-7c31-9e0d-5a6b7c8d9e0f": vault,
      "claude:6f3c8d2e-4a5b-4c9f-8d7e-1b2c3d4e5f6a": "/Users/dana/src/quill",
    };
    for (const [key, root] of Object.entries(expected)) {
      const a = first.get(key);
      const b = second.get(key);
      assert.ok(a && b, `${key} captured both times`);
      assert.equal(a.project_root, root, `${key} from inside a Git repository`);
      assert.equal(b.project_root, root, `${key} from a plain directory`);
      assert.equal(a.project_key, b.project_key);
    }
    const vaultKey = first.get("claude:5e2b7c1d-3f4a-4b8e-9c6d-0a1e2f3b4c5d")!.project_key;
    assert.match(vaultKey, /^vault-[0-9a-f]{12}$/);
    assert.equal(first.get("codex:019c9f4e-2b7a-7c31-9e0d-5a6b7c8d9e0f")!.project_key, vaultKey);

    // `--project` with the Windows path finds both conversations of that folder, and only them.
    const found = await runCli(
      "search",
      [
        "garnet-ferry OR heron-quarry OR sorrel-compass",
        "--project",
        "c:/Users/dana/src/vault",
        "--json",
      ],
      world.vars,
    );
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      [...new Set(hits.map((h) => h.conversation))].sort(),
      ["claude:5e2b7c1d-3f4a-4b8e-9c6d-0a1e2f3b4c5d", "codex:019c9f4e-2b7a-7c31-9e0d-5a6b7c8d9e0f"],
    );
    assert.ok(hits.every((h) => h.project === vault));
  } finally {
    await world.cleanup();
  }
});
