// Tests for lib/paths.ts: where the data and config dirs are, the data dir's layout, and project
// identity and keys, against real directories and real Git repositories and worktrees.

import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { envFrom } from "../../lib/env.ts";
import { fake } from "./_secret_shapes.ts";
import {
  configDir,
  dataDir,
  dataPaths,
  ensureGitExcluded,
  gitCommonDir,
  homeDir,
  NoHomeError,
  projectKey,
  projectOf,
  projectOfRecorded,
  resolveFromUser,
  shownProjectKey,
  userCwd,
} from "../../lib/paths.ts";
import { SymlinkRefusedError } from "../../lib/private_fs.ts";

function tempDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "logbook-paths-" }));
}

/** Runs real git in `cwd`, isolated from the machine's and the user's Git configuration. */
function git(home: string, cwd: string, ...args: string[]): string {
  const out = new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
  }).outputSync();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

/** A repository at `<base>/repo` with one commit, so that worktrees can be added. */
function makeRepo(base: string): string {
  const repo = join(base, "repo");
  Deno.mkdirSync(join(repo, "src", "deep"), { recursive: true });
  git(base, repo, "init", "-q");
  git(base, repo, "commit", "-q", "--allow-empty", "-m", "init");
  return repo;
}

Deno.test("dataDir() prefers LOGBOOK_DATA_DIR, then an absolute XDG_DATA_HOME, then the home", async (t) => {
  await t.step("LOGBOOK_DATA_DIR wins", () => {
    const env = envFrom({ LOGBOOK_DATA_DIR: "/srv/lb", XDG_DATA_HOME: "/xdg", HOME: "/home/u" });
    assert.equal(dataDir(env), "/srv/lb");
  });
  await t.step("XDG_DATA_HOME next", () => {
    assert.equal(dataDir(envFrom({ XDG_DATA_HOME: "/xdg", HOME: "/home/u" })), "/xdg/logbook");
  });
  await t.step("a relative XDG_DATA_HOME is ignored", () => {
    const env = envFrom({ XDG_DATA_HOME: "rel/xdg", HOME: "/home/u" });
    assert.equal(dataDir(env), "/home/u/.local/share/logbook");
  });
  await t.step("empty values count as unset", () => {
    const env = envFrom({ LOGBOOK_DATA_DIR: "", XDG_DATA_HOME: "", HOME: "/home/u" });
    assert.equal(dataDir(env), "/home/u/.local/share/logbook");
  });
  await t.step("USERPROFILE stands in for HOME", () => {
    assert.equal(dataDir(envFrom({ USERPROFILE: "/users/u" })), "/users/u/.local/share/logbook");
  });
  await t.step("a relative LOGBOOK_DATA_DIR is taken from the user's directory", () => {
    const env = envFrom({ LOGBOOK_DATA_DIR: "store", INIT_CWD: "/work/here", HOME: "/home/u" });
    assert.equal(dataDir(env), "/work/here/store");
    assert.equal(dataDir(envFrom({ LOGBOOK_DATA_DIR: "~/lb", HOME: "/home/u" })), "/home/u/lb");
  });
  await t.step("no home and no override is a NoHomeError", () => {
    assert.throws(() => dataDir(envFrom({ XDG_DATA_HOME: "relative" })), (err) => {
      assert.ok(err instanceof NoHomeError);
      assert.equal(err.name, "NoHomeError");
      assert.match(err.message, /^Cannot locate the data dir: HOME is not set/);
      return true;
    });
  });
});

Deno.test("configDir() prefers LOGBOOK_CONFIG_DIR, then an absolute XDG_CONFIG_HOME, then the home", () => {
  const home = { HOME: "/home/u" };
  assert.equal(
    configDir(envFrom({ ...home, LOGBOOK_CONFIG_DIR: "/etc/lb", XDG_CONFIG_HOME: "/xdg" })),
    "/etc/lb",
  );
  assert.equal(configDir(envFrom({ ...home, XDG_CONFIG_HOME: "/xdg" })), "/xdg/logbook");
  assert.equal(
    configDir(envFrom({ ...home, XDG_CONFIG_HOME: "./xdg" })),
    "/home/u/.config/logbook",
  );
  assert.equal(configDir(envFrom(home)), "/home/u/.config/logbook");
  assert.equal(
    configDir(envFrom({ LOGBOOK_CONFIG_DIR: "conf", INIT_CWD: "/work/here" })),
    "/work/here/conf",
  );
  assert.throws(() => configDir(envFrom({})), NoHomeError);
});

Deno.test("homeDir() reads HOME, else USERPROFILE", () => {
  assert.equal(homeDir(envFrom({ HOME: "/h", USERPROFILE: "/p" })), "/h");
  assert.equal(homeDir(envFrom({ USERPROFILE: "/p" })), "/p");
  assert.equal(homeDir(envFrom({})), undefined);
});

Deno.test("userCwd() is an absolute INIT_CWD, else the process's working directory", () => {
  assert.equal(userCwd(envFrom({ INIT_CWD: "/work/here" })), "/work/here");
  assert.equal(userCwd(envFrom({ INIT_CWD: "relative/dir" })), Deno.cwd());
  assert.equal(userCwd(envFrom({})), Deno.cwd());
});

Deno.test("resolveFromUser() resolves against INIT_CWD and expands a leading ~/", () => {
  const env = envFrom({ INIT_CWD: "/work/here", HOME: "/home/u" });
  assert.equal(resolveFromUser("notes/a.md", env), "/work/here/notes/a.md");
  assert.equal(resolveFromUser("../up", env), "/work/up");
  assert.equal(resolveFromUser("/abs/path", env), "/abs/path");
  assert.equal(resolveFromUser("~/x", env), "/home/u/x");
  assert.equal(resolveFromUser("~", env), "/home/u");
  assert.equal(resolveFromUser("~user/x", env), "/work/here/~user/x");
  assert.equal(resolveFromUser("rel", envFrom({})), join(Deno.cwd(), "rel"));
  assert.throws(() => resolveFromUser("~/x", envFrom({})), NoHomeError);
  assert.throws(() => resolveFromUser("", env), TypeError);
});

Deno.test("dataPaths() lays out the data dir and honours LOGBOOK_STAGE_MARKERS_PATH", () => {
  const root = "/d/logbook";
  assert.deepEqual(dataPaths(root, envFrom({})), {
    root,
    sessions: "/d/logbook/sessions",
    historyDb: "/d/logbook/history.db",
    pruneArchives: "/d/logbook/prune-archives",
    logs: "/d/logbook/logs",
    stageMarkers: "/d/logbook/logs/stage-markers.log",
    promptHistory: "/d/logbook/prompt-history.jsonl",
    run: "/d/logbook/run",
  });
  const moved = envFrom({ LOGBOOK_STAGE_MARKERS_PATH: "markers.log", INIT_CWD: "/mnt/x" });
  assert.equal(dataPaths(root, moved).stageMarkers, "/mnt/x/markers.log");
  assert.throws(() => dataPaths("relative", envFrom({})), TypeError);
});

Deno.test("projectKey() gives /a/b, /a-b and /a b three different keys", () => {
  const keys = ["/a/b", "/a-b", "/a b"].map(projectKey);
  assert.equal(new Set(keys).size, 3, keys.join(" "));
  for (const key of keys) assert.match(key, /^[a-z0-9-]+-[0-9a-f]{12}$/);
});

Deno.test("projectKey() is a readable slug of the last component and a stable hash", () => {
  assert.match(projectKey("/home/u/My Project!"), /^my-project-[0-9a-f]{12}$/);
  assert.equal(projectKey("/x/Repo"), projectKey("/x/Repo"));
  assert.notEqual(projectKey("/x/Repo"), projectKey("/y/Repo"));
  assert.match(projectKey("/"), /^root-[0-9a-f]{12}$/);
  assert.match(projectKey("/x/___"), /^root-[0-9a-f]{12}$/);
  const long = projectKey(`/x/${"ab-".repeat(30)}`);
  const slug = long.slice(0, -13);
  assert.ok(slug.length <= 40 && !slug.endsWith("-"), slug);
});

Deno.test("shownProjectKey() makes the slug from the shown root and keeps the hash", () => {
  const token = "ghp" + "_" + fake(36);
  const key = projectKey(`/src/${token}`);
  assert.ok(key.startsWith("ghp-"), "the slug holds the token, lower case");
  const shown = shownProjectKey(key, "/src/[REDACTED:github-token]");
  assert.equal(shown, `redacted-github-token-${key.slice(-12)}`);
  assert.equal(shownProjectKey(projectKey("/src/app"), "/src/app"), projectKey("/src/app"));
});

Deno.test("projectOf() outside Git is the physical directory, through symlinks", () => {
  const base = tempDir();
  try {
    Deno.mkdirSync(join(base, "real", "proj"), { recursive: true });
    Deno.symlinkSync(join(base, "real"), join(base, "link"));
    const project = projectOf(join(base, "link", "proj"));
    assert.equal(project.root, join(base, "real", "proj"));
    assert.equal(project.key, projectKey(join(base, "real", "proj")));
    assert.equal(gitCommonDir(join(base, "link", "proj")), undefined);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOf() a subdirectory of a Git repository is the repository root", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    assert.deepEqual(projectOf(join(repo, "src", "deep")), { root: repo, key: projectKey(repo) });
    assert.equal(projectOf(repo).root, repo);
    assert.equal(gitCommonDir(join(repo, "src")), join(repo, ".git"));
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOf() a linked worktree is the main worktree's root with the same key", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const worktree = join(base, "feature-wt");
    git(base, repo, "worktree", "add", "-q", "-b", "feature", worktree);
    Deno.mkdirSync(join(worktree, "sub"));
    assert.deepEqual(projectOf(join(worktree, "sub")), projectOf(repo));
    assert.equal(projectOf(worktree).root, repo);
    const reported = git(base, worktree, "rev-parse", "--git-common-dir").trim();
    const expected = Deno.realPathSync(resolve(worktree, reported));
    assert.equal(gitCommonDir(worktree), expected);
    assert.equal(expected, join(repo, ".git"));
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOf() a deleted subdirectory of a Git repository is the repository root", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    Deno.removeSync(join(repo, "src"), { recursive: true });
    assert.equal(projectOf(join(repo, "src", "deep", "gone")).root, repo);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOf() a missing path outside Git is its existing ancestor's realpath plus the rest", () => {
  const base = tempDir();
  try {
    Deno.mkdirSync(join(base, "real"));
    Deno.symlinkSync(join(base, "real"), join(base, "link"));
    const project = projectOf(join(base, "link", "gone", "deeper"));
    assert.equal(project.root, join(base, "real", "gone", "deeper"));
    assert.equal(project.key, projectKey(project.root));
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOf() a worktree whose Git dir lives elsewhere is the worktree itself", () => {
  const base = tempDir();
  try {
    const work = join(base, "work");
    Deno.mkdirSync(work);
    Deno.mkdirSync(join(base, "store"));
    git(base, work, "init", "-q", `--separate-git-dir=${join(base, "store", "work.git")}`);
    Deno.mkdirSync(join(work, "lib"));
    assert.equal(projectOf(join(work, "lib")).root, work);
    assert.equal(gitCommonDir(work), join(base, "store", "work.git"));
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOfRecorded() a Windows cwd is one identity, however it was spelled", () => {
  const vault = "C:\\Users\\dana\\src\\vault";
  for (
    const spelled of [
      vault,
      "c:\\Users\\dana\\src\\vault\\",
      "C:/Users/dana/src/vault",
      "c:\\Users\\dana\\.\\src\\old\\..\\vault",
      "C:\\Users\\\\dana\\src\\vault",
      "\\\\?\\C:\\Users\\dana\\src\\vault",
    ]
  ) {
    const project = projectOfRecorded(spelled);
    assert.equal(project.root, vault, spelled);
    assert.equal(project.key, projectKey(vault));
  }
  assert.match(projectKey(vault), /^vault-[0-9a-f]{12}$/);
  assert.equal(projectOfRecorded("d:\\").root, "D:\\");
  assert.equal(projectOfRecorded("\\\\nas\\share\\vault\\").root, "\\\\nas\\share\\vault");
});

Deno.test("projectOfRecorded() looks up Git only for a path that exists here", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    assert.equal(projectOfRecorded(join(repo, "src")).root, repo, "an existing subdirectory");
    // A path that does not exist here (another machine's, or since deleted) is its own identity.
    const gone = join(repo, "src", "gone");
    assert.equal(projectOfRecorded(gone).root, gone);
    assert.equal(projectOfRecorded(`${gone}/`).root, gone);
    assert.equal(projectOfRecorded("/Users/dana/src/quill").root, "/Users/dana/src/quill");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOfRecorded() a deleted worktree its repository still lists is the repository", async (t) => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const nested = join(repo, ".claude", "worktrees", "feat");
    git(base, repo, "worktree", "add", "-q", "-b", "feat", nested);
    Deno.mkdirSync(join(nested, "pkg"));
    assert.equal(projectOfRecorded(join(nested, "pkg")).root, repo, "while it exists");

    await t.step("deleted, still listed: the repository's project", () => {
      Deno.removeSync(nested, { recursive: true });
      assert.match(git(base, repo, "worktree", "list", "--porcelain"), /prunable/);
      const project = projectOfRecorded(join(nested, "pkg"));
      assert.deepEqual(project, projectOf(repo));
      assert.equal(projectOfRecorded(nested).root, repo);
      // A deleted directory the repository never listed is still its own.
      const gone = join(repo, ".claude", "worktrees", "other");
      assert.equal(projectOfRecorded(gone).root, gone);
    });

    await t.step("pruned: nothing names it, so it is its own identity", () => {
      git(base, repo, "worktree", "prune");
      assert.equal(projectOfRecorded(join(nested, "pkg")).root, join(nested, "pkg"));
    });

    await t.step("a deleted sibling worktree: its parents reach no repository", () => {
      const sibling = join(base, "repo-hotfix");
      git(base, repo, "worktree", "add", "-q", "-b", "hotfix", sibling);
      Deno.removeSync(sibling, { recursive: true });
      assert.equal(projectOfRecorded(sibling).root, sibling);
    });
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("projectOfRecorded() never resolves against the working directory", () => {
  assert.equal(projectOfRecorded("src/vault").root, "src/vault");
  assert.notEqual(projectOfRecorded(".").root, Deno.cwd());
  for (const odd of ["", "bad\0name", "/", "C:", "\\\\"]) {
    assert.match(projectOfRecorded(odd).key, /-[0-9a-f]{12}$/, JSON.stringify(odd));
  }
});

Deno.test("projectOf() resolves relative input against the working directory and never throws", () => {
  assert.equal(projectOf(".").root, projectOf(Deno.cwd()).root);
  for (const odd of ["", "bad\0name", "/", "/definitely/not/here/at/all", "../../.."]) {
    const project = projectOf(odd);
    assert.equal(typeof project.root, "string");
    assert.match(project.key, /-[0-9a-f]{12}$/);
  }
});

Deno.test("ensureGitExcluded() adds the entry to info/exclude once and never to .gitignore", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const exclude = join(repo, ".git", "info", "exclude");
    Deno.removeSync(join(repo, ".git", "info"), { recursive: true });
    assert.equal(ensureGitExcluded(repo), true);
    assert.equal(ensureGitExcluded(repo), false);
    assert.equal(ensureGitExcluded(join(repo, "src")), false);
    assert.equal(Deno.readTextFileSync(exclude), ".logbook/\n");
    assert.throws(() => Deno.lstatSync(join(repo, ".gitignore")), Deno.errors.NotFound);

    Deno.mkdirSync(join(repo, ".logbook"));
    Deno.writeTextFileSync(join(repo, ".logbook", "config.json"), "{}");
    assert.equal(git(base, repo, "status", "--porcelain", "--untracked-files=all"), "");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensureGitExcluded() keeps existing lines and recognises an equivalent entry", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const exclude = join(repo, ".git", "info", "exclude");
    Deno.writeTextFileSync(exclude, "# mine\n*.log");
    assert.equal(ensureGitExcluded(repo), true);
    assert.equal(Deno.readTextFileSync(exclude), "# mine\n*.log\n.logbook/\n");

    Deno.writeTextFileSync(exclude, "/.logbook\n");
    assert.equal(ensureGitExcluded(repo), false);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensureGitExcluded() from a linked worktree writes to the common dir, which every worktree reads", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const worktree = join(base, "wt");
    git(base, repo, "worktree", "add", "-q", "-b", "wt", worktree);
    assert.equal(ensureGitExcluded(worktree), true);
    assert.equal(ensureGitExcluded(repo), false);
    assert.match(Deno.readTextFileSync(join(repo, ".git", "info", "exclude")), /^\.logbook\/$/m);
    assert.throws(
      () => Deno.lstatSync(join(repo, ".git", "worktrees", "wt", "info", "exclude")),
      Deno.errors.NotFound,
    );
    Deno.mkdirSync(join(worktree, ".logbook"));
    Deno.writeTextFileSync(join(worktree, ".logbook", "config.json"), "{}");
    assert.equal(git(base, worktree, "status", "--porcelain", "--untracked-files=all"), "");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensureGitExcluded() refuses a symlinked exclude file and leaves its target untouched", () => {
  const base = tempDir();
  try {
    const repo = makeRepo(base);
    const exclude = join(repo, ".git", "info", "exclude");
    const victim = join(base, "victim");
    Deno.writeTextFileSync(victim, "keep\n");
    Deno.removeSync(exclude);
    Deno.symlinkSync(victim, exclude);
    assert.throws(() => ensureGitExcluded(repo), (err) => {
      assert.ok(err instanceof SymlinkRefusedError);
      assert.equal(err.path, exclude);
      return true;
    });
    assert.equal(Deno.readTextFileSync(victim), "keep\n");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("ensureGitExcluded() outside Git writes nothing and says so", () => {
  const base = tempDir();
  try {
    assert.equal(ensureGitExcluded(base), false);
    assert.deepEqual([...Deno.readDirSync(base)], []);
    assert.throws(() => ensureGitExcluded(base, "two\nlines"), TypeError);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
