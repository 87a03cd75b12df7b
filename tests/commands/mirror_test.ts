// Project mirrors end to end: `mirror enable` in a Git project, capture keeping the copy current,
// `search --mirror` from the project and from a linked worktree, the exclude entry written once,
// a linked `.logbook`, `-wal` or `-shm` refused, mirroring that waits while the exclude file
// cannot be written, a mirror made before 0008 copied again with the current index, `forget`
// and `delete-user-data` reaching the mirror (and `forget` saying which mirror it could not).

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { git } from "../_git.ts";
import { childBaseEnv, makeWorld, ROOT, runCli, taskFlags, withStore } from "../_helpers.ts";
import { makeStoreOld, messageText } from "../_old_store.ts";
import { leaks, placeSecretPathSession, shownPath } from "../_secret_path.ts";
import { loadContext, redactorFor } from "../../lib/context.ts";
import { isPresent } from "../../lib/present.ts";
import { HistoryStore } from "../../lib/store/db.ts";
import { wantMirror } from "../../lib/store/mirror.ts";

const ALPHA = "7d3c1a52-6f0e-4b8d-9a21-3e5f7c9b1d04";
const BETA = "c81f4e26-2b7a-4d39-8e05-6a1d9f3c7b52";
const OTHER = "1e9a7c35-4d2b-4f68-b0c1-8d5e2a6f9c73";

/** A short Claude Code transcript in `cwd` whose prompts and answers carry `word`. */
function transcript(session: string, cwd: string, word: string, turns = 1): string {
  return claudeTranscript(
    session,
    cwd,
    Array.from({ length: turns }, (_, i) => [
      `How do we handle the ${word} step ${i}?`,
      `The ${word} step ${i} runs after the build.`,
    ]),
  );
}

/** What `git add -A` stages in `repo` (then unstaged again): one path a line. */
async function stagedByAddAll(repo: string): Promise<string[]> {
  await git(repo, "add", "-A");
  const staged = (await git(repo, "diff", "--cached", "--name-only")).split("\n").filter(
    Boolean,
  );
  await git(repo, "reset", "-q");
  return staged;
}

/** The main store's meta value `key`, read directly. */
function metaOf(data: string, key: string): Record<string, unknown> | undefined {
  const db = new DatabaseSync(join(data, "history.db"), { readOnly: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row ? JSON.parse(row.value) : undefined;
  } finally {
    db.close();
  }
}

/** The mirror files in the project's `.logbook/`, by name. */
function mirrorFiles(project: string): string[] {
  if (!isPresent(join(project, ".logbook"))) return [];
  return [...Deno.readDirSync(join(project, ".logbook"))].map((e) => e.name)
    .filter((name) => name.startsWith("conversations-")).sort();
}

function mirrorFile(project: string): string {
  const found = [...Deno.readDirSync(join(project, ".logbook"))].find((e) =>
    /^conversations-[0-9a-f]{12}\.db$/.test(e.name)
  );
  assert.ok(found, "the mirror file is there");
  return join(project, ".logbook", found.name);
}

function keysIn(db: string): string[] {
  const conn = new DatabaseSync(db, { readOnly: true });
  try {
    return (conn.prepare("SELECT key FROM conversations ORDER BY key").all() as { key: string }[])
      .map((r) => r.key);
  } finally {
    conn.close();
  }
}

Deno.test("project mirrors: enable, capture, search --mirror, worktree, exclude, forget, delete", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const project = join(world.dir, "repo");
  const other = join(world.dir, "elsewhere");
  await Deno.mkdir(project, { recursive: true });
  await Deno.mkdir(other, { recursive: true });
  await git(project, "init", "-q");
  await git(project, "commit", "-q", "--allow-empty", "-m", "start");
  const alpha = await placeClaudeTranscript(
    world,
    project,
    ALPHA,
    transcript(ALPHA, project, "kestrel"),
  );
  await placeClaudeTranscript(world, project, BETA, transcript(BETA, project, "lynx"));
  await placeClaudeTranscript(world, other, OTHER, transcript(OTHER, other, "kestrel"));
  const inProject = { ...world.vars, INIT_CWD: project };
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);

    await t.step(
      "enable keeps the choice in the store, writes the exclude entry and a mirror of this project only",
      async () => {
        const enabled = await runCli("mirror", ["enable"], inProject);
        assert.equal(enabled.code, 0, enabled.stderr);
        assert.match(enabled.stdout, /Mirroring is on for .*repo/);
        assert.match(enabled.stdout, /current · 2 conversations/);
        // The choice is the user's, in the data dir: nothing in the repository says it.
        assert.ok(!isPresent(join(project, ".logbook", "config.json")));
        assert.deepEqual(Object.keys(metaOf(world.data, "mirrors_wanted") ?? {}), [project]);
        const db = mirrorFile(project);
        assert.equal(Deno.statSync(db).mode! & 0o777, 0o600);
        assert.equal(Deno.statSync(join(project, ".logbook")).mode! & 0o777, 0o700);
        assert.deepEqual(keysIn(db), [`claude:${ALPHA}`, `claude:${BETA}`].sort());
        // The raw bytes are the main store's, row for row.
        const main = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
        const copy = new DatabaseSync(db, { readOnly: true });
        try {
          const sql =
            "SELECT r.id, r.raw FROM records r JOIN conversations c ON c.id = r.conversation_id WHERE c.key = ? ORDER BY r.id";
          for (const key of [`claude:${ALPHA}`, `claude:${BETA}`]) {
            assert.deepEqual(copy.prepare(sql).all(key), main.prepare(sql).all(key));
          }
        } finally {
          main.close();
          copy.close();
        }
      },
    );

    await t.step("search --mirror finds this project's words, and only them", async () => {
      const found = await runCli("search", ["--mirror", "kestrel", "--json"], inProject);
      assert.equal(found.code, 0, found.stderr);
      const hits = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(hits.length >= 1);
      assert.ok(hits.every((h) => h.conversation === `claude:${ALPHA}`), found.stdout);
      const fixture = await runCli("search", ["--mirror", "quokka-lantern"], inProject);
      assert.equal(fixture.code, 1, "another project's words are not in the mirror");
    });

    await t.step(
      "logbook mcp answers from the mirror with --mirror, or where no store is",
      async () => {
        /** The conversation ids `logbook mcp` lists with `args` and the variables `vars`. */
        const listed = async (args: string[], vars: Record<string, string>) => {
          const transport = new StdioClientTransport({
            command: Deno.execPath(),
            args: [
              "run",
              ...await taskFlags("mcp"),
              "--quiet",
              join(ROOT, "commands", "mcp.ts"),
              ...args,
            ],
            env: { ...childBaseEnv(), ...vars },
            stderr: "pipe",
          });
          const client = new Client({ name: "logbook-test", version: "1.0.0" });
          await client.connect(transport);
          try {
            const result = await client.callTool({
              name: "list_conversations",
              arguments: { all_projects: true },
            });
            return (result.structuredContent as { conversations: { id: string }[] })
              .conversations.map((c) => c.id).sort();
          } finally {
            await client.close();
          }
        };
        const mine = [`claude:${ALPHA}`, `claude:${BETA}`].sort();
        assert.deepEqual(await listed(["--mirror"], inProject), mine);
        // With the history store there, it answers (every project) even in a mirrored project.
        const all = await listed([], inProject);
        for (const id of [...mine, `claude:${OTHER}`]) assert.ok(all.includes(id), id);
        // Where there is no history store (a container with only the checkout), the mirror.
        const empty = join(world.dir, "no-store");
        await Deno.mkdir(empty);
        assert.deepEqual(await listed([], { ...inProject, LOGBOOK_DATA_DIR: empty }), mine);
        assert.deepEqual([...Deno.readDirSync(empty)], [], "nothing written where no store is");
      },
    );

    await t.step("capture keeps it current; the exclude entry is written once", async () => {
      await Deno.writeTextFile(alpha, transcript(ALPHA, project, "kestrel", 3));
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      const found = await runCli("search", ["--mirror", "kestrel", "step", "2"], inProject);
      assert.equal(found.code, 0, "the appended turn is in the mirror");
      const exclude = await Deno.readTextFile(join(project, ".git", "info", "exclude"));
      assert.equal(exclude.split("\n").filter((l) => l.trim() === ".logbook/").length, 1);
      const status = await runCli("mirror", ["status", "--json"], world.vars);
      const mirrors = JSON.parse(status.stdout).mirrors;
      assert.equal(mirrors.length, 1);
      assert.equal(mirrors[0].state, "current");
    });

    await t.step("a linked worktree reads the same mirror", async () => {
      const tree = join(world.dir, "repo-feature");
      await git(project, "worktree", "add", "-q", tree);
      const found = await runCli("search", ["--mirror", "lynx", "--json"], {
        ...world.vars,
        INIT_CWD: tree,
      });
      assert.equal(found.code, 0, found.stderr);
      assert.match(found.stdout, new RegExp(BETA));
      assert.ok(!Deno.statSync(tree).isFile);
      assert.throws(
        () => Deno.statSync(join(tree, ".logbook")),
        "no second mirror in the worktree",
      );
    });

    await t.step("forget removes the conversation from the mirror too", async () => {
      const forgot = await runCli("forget", [`claude:${BETA}`], world.vars);
      assert.equal(forgot.code, 0, forgot.stderr);
      assert.deepEqual(keysIn(mirrorFile(project)), [`claude:${ALPHA}`]);
      const gone = await runCli("search", ["--mirror", "lynx"], inProject);
      assert.equal(gone.code, 1);
    });

    await t.step("delete-user-data lists the mirror and removes it", async () => {
      const db = mirrorFile(project);
      const deleted = await runCli("delete_user_data", ["--yes"], world.vars);
      assert.equal(deleted.code, 0, deleted.stdout + deleted.stderr);
      assert.match(deleted.stdout, new RegExp(`removed +${db.replaceAll(".", "\\.")}`));
      assert.throws(() => Deno.statSync(db));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("project mirrors: a linked .logbook is refused and mirroring waits, saying why", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "linked");
  const target = join(world.dir, "somewhere-else");
  await Deno.mkdir(project, { recursive: true });
  await Deno.mkdir(target, { recursive: true });
  await Deno.writeTextFile(join(target, "config.json"), '{"model": "m"}\n');
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "heron"));
  const inProject = { ...world.vars, INIT_CWD: project };
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await runCli("mirror", ["enable"], inProject)).code, 0);
    // Later, .logbook becomes a link to somewhere else.
    await Deno.remove(join(project, ".logbook"), { recursive: true });
    await Deno.symlink(target, join(project, ".logbook"));
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.deepEqual([...Deno.readDirSync(target)].map((e) => e.name), ["config.json"]);
    const status = await runCli("mirror", ["status"], world.vars);
    assert.match(status.stdout, /waiting: a link is on the way/);
    const enable = await runCli("mirror", ["enable"], inProject);
    assert.equal(enable.code, 1);
    assert.match(enable.stderr, /link/);
    const search = await runCli("search", ["--mirror", "heron"], inProject);
    assert.equal(search.code, 1);
    assert.match(search.stderr, /link/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("mirror: disable removes the file; a bad action is a usage error", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "plain");
  await Deno.mkdir(project, { recursive: true });
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "osprey"));
  const vars = { ...world.vars, INIT_CWD: project };
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await runCli("mirror", ["enable"], vars)).code, 0);
    const db = mirrorFile(project);
    const off = await runCli("mirror", ["disable"], vars);
    assert.equal(off.code, 0, off.stderr);
    assert.throws(() => Deno.statSync(db));
    assert.ok(!isPresent(join(project, ".logbook", "config.json")), "no config is written");
    assert.deepEqual(metaOf(world.data, "mirrors_wanted"), {});
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.throws(() => Deno.statSync(db), "capture does not bring it back");
    const bad = await runCli("mirror", ["sideways"], vars);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown action "sideways"/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("mirror and status name a project whose directory holds a secret as the gate shows it", async () => {
  const world = await makeWorld();
  try {
    const cwd = await placeSecretPathSession(world);
    const vars = { ...world.vars, INIT_CWD: cwd };
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const enabled = await runCli("mirror", ["enable"], vars);
    assert.equal(enabled.code, 0, enabled.stderr);
    assert.deepEqual(leaks(enabled.stdout), []);
    assert.ok(enabled.stdout.includes(`Mirroring is on for ${shownPath(cwd)}: `), enabled.stdout);
    for (const [command, args] of [["mirror", ["status"]], ["status", []]] as const) {
      for (const json of [[], ["--json"]]) {
        const out = await runCli(command, [...args, ...json], vars);
        assert.equal(out.code, 0, out.stderr);
        assert.deepEqual(leaks(out.stdout), [], `${command} ${json.join("")}`);
        assert.ok(out.stdout.includes(shownPath(cwd)), out.stdout);
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a mirror made before 0008 is copied again with the current index: search --mirror uses it", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "cjk");
  // Messages with CJK among others (`messageText` puts CJK in one message of five).
  const turns = Array.from(
    { length: 8 },
    (_, i): [string, string] => [messageText(2 * i), messageText(2 * i + 1)],
  );
  await placeClaudeTranscript(world, project, ALPHA, claudeTranscript(ALPHA, project, turns));
  const inProject = { ...world.vars, INIT_CWD: project };
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await runCli("mirror", ["enable"], inProject)).code, 0);
    const path = mirrorFile(project);
    const mirror = HistoryStore.open({ path, root: join(project, ".logbook") });
    try {
      makeStoreOld(mirror, redactorFor(loadContext({ env: world.env })));
    } finally {
      mirror.close();
    }
    const old = await runCli("search", ["--mirror", "缓存策略"], inProject);
    assert.equal(old.code, 0, old.stderr);
    assert.match(old.stderr, /note: .*until reindex upgrades it/, "the old mirror's literal scan");

    for (const args of [["--quiet"], ["--quiet"], ["--rebuild", "--quiet"]]) {
      const run = await runCli("reindex", args, world.vars);
      assert.equal(run.code, 0, run.stderr);
      const found = await runCli("search", ["--mirror", "缓存策略", "--json"], inProject);
      assert.equal(found.code, 0, found.stderr);
      assert.doesNotMatch(found.stderr, /note:/, `the index answers after reindex ${args}`);
      const hits = found.stdout.trim().split("\n");
      const main = await runCli("search", ["缓存策略", "--json"], world.vars);
      assert.ok(hits.length >= 2);
      assert.equal(hits.length, main.stdout.trim().split("\n").length, "as many as the store's");
    }
    const copy = new DatabaseSync(path, { readOnly: true });
    try {
      assert.equal(
        copy.prepare("SELECT value FROM meta WHERE key = 'index_upgrade'").get(),
        undefined,
        "no mark left",
      );
    } finally {
      copy.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("mirroring waits while .git/info/exclude cannot be written, and status says why", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "repo");
  await Deno.mkdir(project, { recursive: true });
  await git(project, "init", "-q");
  const exclude = join(project, ".git", "info", "exclude");
  // A directory where the file should be: nothing can be written there.
  await Deno.remove(exclude).catch(() => {});
  await Deno.mkdir(exclude, { recursive: true });
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "plover"));
  try {
    // Turned on earlier (`mirror enable` itself stops while the exclude file cannot be written).
    withStore(world, (store) => wantMirror(store, project, true, 0));
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.ok(!isPresent(join(project, ".logbook")), "no mirror is written");
    const status = await runCli("status", [], world.vars);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /mirrors: 1/);
    assert.match(
      status.stdout,
      /repo: waiting: cannot keep \.logbook\/ out of Git through \.git\/info\/exclude \(.+\); mirroring waits until it can/,
    );
    const json = JSON.parse((await runCli("status", ["--json"], world.vars)).stdout);
    assert.equal(json.store.mirrors[0].state, "waiting");

    // Once it can be written, the next capture writes it and fills the mirror.
    await Deno.remove(exclude);
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await Deno.readTextFile(exclude)).trim(), ".logbook/");
    const after = await runCli("status", [], world.vars);
    assert.match(after.stdout, /repo: current, 1 conversation\b/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a linked -wal or -shm beside the mirror is refused: mirroring waits and says so", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "walled");
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "avocet"));
  const inProject = { ...world.vars, INIT_CWD: project };
  const elsewhere = join(world.dir, "elsewhere");
  await Deno.writeTextFile(elsewhere, "");
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await runCli("mirror", ["enable"], inProject)).code, 0);
    const path = mirrorFile(project);
    for (const suffix of ["-wal", "-shm"]) {
      await Deno.symlink(elsewhere, path + suffix);
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      const status = await runCli("status", [], world.vars);
      assert.match(
        status.stdout,
        new RegExp(`walled: waiting: a link is on the way: .*"${path}${suffix}"`),
      );
      assert.doesNotMatch(status.stdout, /unable to open database file/);
      const search = await runCli("search", ["--mirror", "avocet"], inProject);
      assert.equal(search.code, 1);
      assert.match(search.stderr, new RegExp(`symbolic link "${path}${suffix}"`));
      assert.equal(await Deno.readTextFile(elsewhere), "", "nothing written through the link");
      await Deno.remove(path + suffix);
    }
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.match((await runCli("status", [], world.vars)).stdout, /walled: current/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("forget says which mirror it could not open, and exits 1; a mirror gone is no failure", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "kept");
  const gone = join(world.dir, "moved-away");
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "dunlin"));
  await placeClaudeTranscript(world, project, BETA, transcript(BETA, project, "sanderling"));
  await placeClaudeTranscript(world, gone, OTHER, transcript(OTHER, gone, "turnstone"));
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal(
      (await runCli("mirror", ["enable"], { ...world.vars, INIT_CWD: project })).code,
      0,
    );
    assert.equal((await runCli("mirror", ["enable"], { ...world.vars, INIT_CWD: gone })).code, 0);
    // One mirror damaged beyond opening, the other project moved away with its mirror.
    const path = mirrorFile(project);
    await Deno.writeTextFile(path, "this is not a SQLite database, only text in its place\n");
    await Deno.remove(gone, { recursive: true });

    const forgot = await runCli("forget", [`claude:${ALPHA}`, "--yes"], world.vars);
    assert.equal(forgot.code, 1, forgot.stdout + forgot.stderr);
    assert.match(forgot.stdout, /Forgot 1 conversation/);
    assert.match(
      forgot.stderr,
      new RegExp(
        `error: the project mirror "${path}" could not be opened \\(.+\\): it still holds`,
      ),
    );
    assert.doesNotMatch(forgot.stderr, /moved-away/);
    assert.throws(() => Deno.statSync(gone), "forget does not make the moved project again");

    const json = await runCli("forget", [`claude:${BETA}`, "--yes", "--json"], world.vars);
    assert.equal(json.code, 1);
    const result = JSON.parse(json.stdout);
    assert.equal(result.conversations.length, 1);
    assert.deepEqual(result.mirrorsUnreached.map((m: { path: string }) => m.path), [path]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a hostile repository cannot switch a mirror on, nor have Git stage one", async (t) => {
  const world = await makeWorld();
  const repo = join(world.dir, "cloned");
  await Deno.mkdir(join(repo, ".logbook"), { recursive: true });
  await git(repo, "init", "-q");
  // What a stranger can commit: a config asking for a mirror, and a .gitignore un-ignoring it.
  const config = join(repo, ".logbook", "config.json");
  await Deno.writeTextFile(config, '{"mirror": true}\n');
  await Deno.writeTextFile(join(repo, ".gitignore"), "!.logbook/\n");
  await Deno.writeTextFile(join(repo, "README"), "Nothing to see here.\n");
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "start");
  await placeClaudeTranscript(world, repo, ALPHA, transcript(ALPHA, repo, "cormorant"));
  const inRepo = { ...world.vars, INIT_CWD: repo };
  try {
    await t.step("the repository's own config writes no mirror, and says so", async () => {
      const run = await runCli("reindex", [], inRepo);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `warning: Ignored "mirror" in "${config}": a config file cannot turn a mirror on`,
        ),
      );
      assert.deepEqual(mirrorFiles(repo), []);
      assert.deepEqual(metaOf(world.data, "mirrors"), {});
      assert.deepEqual(await stagedByAddAll(repo), []);
    });

    await t.step("mirror enable there waits while Git would stage the mirror", async () => {
      const enable = await runCli("mirror", ["enable"], inRepo);
      assert.equal(enable.code, 1, enable.stdout + enable.stderr);
      const why = 'Git does not ignore "\\.logbook/conversations-[0-9a-f]{12}\\.db" ' +
        '\\(a \\.gitignore un-ignores it, as "!\\.logbook/" does\\), so "git add" could stage it: ' +
        'mirroring waits until "git check-ignore" says it is ignored';
      assert.match(enable.stdout, new RegExp(`waiting: ${why}`));
      assert.match((await runCli("mirror", ["status"], world.vars)).stdout, new RegExp(why));
      assert.deepEqual(mirrorFiles(repo), []);
      // The repository's committed config is left as it is: a change there would be staged.
      assert.equal(await Deno.readTextFile(config), '{"mirror": true}\n');
      assert.deepEqual(await stagedByAddAll(repo), []);
    });

    await t.step("not misled by a GIT_DIR that points at another repository", async () => {
      const other = join(world.dir, "other");
      await Deno.mkdir(other);
      await git(other, "init", "-q");
      await Deno.writeTextFile(join(other, ".git", "info", "exclude"), "*\n");
      const run = await runCli("reindex", ["--quiet"], {
        ...world.vars,
        GIT_DIR: join(other, ".git"),
        GIT_WORK_TREE: repo,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(mirrorFiles(repo), []);
    });

    await t.step("once Git ignores it, the mirror is written, and stays unstaged", async () => {
      await Deno.writeTextFile(join(repo, ".gitignore"), "");
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      assert.match((await runCli("mirror", ["status"], world.vars)).stdout, /current · 1 conv/);
      assert.equal(mirrorFiles(repo).length, 1);
      assert.deepEqual(await stagedByAddAll(repo), [".gitignore"]);
    });

    await t.step("a .gitignore that un-ignores it again: the mirror stops and goes", async () => {
      await Deno.writeTextFile(join(repo, ".gitignore"), "!.logbook/\n");
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
      const status = (await runCli("mirror", ["status"], world.vars)).stdout;
      assert.match(status, /waiting: Git does not ignore .*; removed "\.logbook\/conversations-/);
      assert.deepEqual(mirrorFiles(repo), []);
      assert.deepEqual(await stagedByAddAll(repo), []);
    });

    await t.step(
      "a file Git tracks at the mirror's path is never written nor removed",
      async () => {
        await Deno.writeTextFile(join(repo, ".gitignore"), "");
        const state = metaOf(world.data, "mirrors")![repo] as { path: string };
        await Deno.writeTextFile(state.path, "decoy\n");
        await git(repo, "add", "-f", state.path);
        await git(repo, "commit", "-q", "-am", "decoy");
        assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
        const status = (await runCli("mirror", ["status"], world.vars)).stdout;
        assert.match(status, /waiting: Git does not ignore .* \(it is tracked\)/);
        assert.doesNotMatch(status, /removed/);
        assert.equal(await Deno.readTextFile(state.path), "decoy\n");
        assert.deepEqual(await stagedByAddAll(repo), []);
      },
    );

    await t.step("a mirror that came with the repository is not read", async () => {
      // A stranger's store, committed where this project's mirror would be: its words are theirs.
      const state = metaOf(world.data, "mirrors")![repo] as { path: string };
      await Deno.copyFile(join(world.data, "history.db"), state.path);
      await git(repo, "commit", "-q", "-am", "planted");
      const search = await runCli("search", ["--mirror", "cormorant"], inRepo);
      assert.equal(search.code, 1, search.stdout);
      assert.equal(search.stdout, "");
      assert.match(
        search.stderr,
        /^error: The mirror ".*" came with the repository \(Git tracks it\), not from logbook on this machine: it is not read \("logbook mirror enable" makes this project's own\)\n/m,
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a mirror an older build kept because the project's file asked waits for mirror enable", async () => {
  const world = await makeWorld();
  const project = join(world.dir, "repo");
  await Deno.mkdir(project, { recursive: true });
  await git(project, "init", "-q");
  await placeClaudeTranscript(world, project, ALPHA, transcript(ALPHA, project, "grebe"));
  const inProject = { ...world.vars, INIT_CWD: project };
  try {
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    assert.equal((await runCli("mirror", ["enable"], inProject)).code, 0);
    // As an older build left it: the mirror on because the project's own file said so.
    withStore(world, (store) => store.setMeta("mirrors_wanted", {}));
    const config = join(project, ".logbook", "config.json");
    await Deno.writeTextFile(config, '{"mirror": true, "model": "m"}\n');
    const db = mirrorFile(project);
    const before = keysIn(db);
    await placeClaudeTranscript(world, project, BETA, transcript(BETA, project, "smew"));
    const run = await runCli("reindex", [], inProject);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /warning: Ignored "mirror" in ".*config\.json": a config file cannot/);
    assert.deepEqual(keysIn(db), before, "no longer written");
    const status = await runCli("status", [], world.vars);
    assert.match(
      status.stdout,
      /repo: waiting: a project's \.logbook\/config\.json no longer turns a mirror on: run "logbook mirror enable" in the project to keep it/,
    );

    // mirror enable takes the old key out of the file (Git ignores it) and the mirror goes on.
    const enable = await runCli("mirror", ["enable"], inProject);
    assert.equal(enable.code, 0, enable.stdout + enable.stderr);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(config)), { model: "m" });
    assert.deepEqual(keysIn(db), [`claude:${ALPHA}`, `claude:${BETA}`].sort());
    const again = await runCli("reindex", ["--quiet"], inProject);
    assert.equal(again.stderr, "", "no warning left");
  } finally {
    await world.cleanup();
  }
});
