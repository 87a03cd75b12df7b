// Where logbook's files live (the data and config dirs and the data dir's layout) and which
// project a directory belongs to (its canonical Git root and a collision-free key).

import { basename, dirname, isAbsolute, join, normalize, resolve, sep, win32 } from "./path.ts";
import type { Env } from "./env.ts";
import { nodeFs } from "./node_builtins.ts";
import { sha256Hex } from "./sha256.ts";
import { SymlinkRefusedError } from "./private_fs.ts";
import { lstatOrUndefined } from "./present.ts";

/** Thrown when a location depends on the home directory and neither HOME nor USERPROFILE is set. */
export class NoHomeError extends Error {
  override name = "NoHomeError";
}

/** The user's home directory: `HOME`, else `USERPROFILE`; undefined when neither is set. */
export function homeDir(env: Env): string | undefined {
  return nonEmpty(env, "HOME") ?? nonEmpty(env, "USERPROFILE");
}

/**
 * The data dir: `LOGBOOK_DATA_DIR` (resolved against the user's directory), else
 * `$XDG_DATA_HOME/logbook` when that is absolute, else `~/.local/share/logbook`.
 * Throws NoHomeError when the home is needed and unknown.
 */
export function dataDir(env: Env): string {
  return locate(env, "LOGBOOK_DATA_DIR", "XDG_DATA_HOME", [".local", "share"], "data dir");
}

/**
 * The config dir: `LOGBOOK_CONFIG_DIR` (resolved against the user's directory), else
 * `$XDG_CONFIG_HOME/logbook` when that is absolute, else `~/.config/logbook`.
 * Throws NoHomeError when the home is needed and unknown.
 */
export function configDir(env: Env): string {
  return locate(env, "LOGBOOK_CONFIG_DIR", "XDG_CONFIG_HOME", [".config"], "config dir");
}

/** The places inside the data dir (section 1 of the spec). */
export interface DataPaths {
  /** The data dir itself. */
  readonly root: string;
  /** `sessions/<project-key>/<id>.json` and `<id>.audit.jsonl`. */
  readonly sessions: string;
  /** The history store (SQLite, with its `-wal` and `-shm` files beside it). */
  readonly historyDb: string;
  /** Plain-text snapshots taken before compaction. */
  readonly pruneArchives: string;
  /** Logs. */
  readonly logs: string;
  /** The stage-marker log, `LOGBOOK_STAGE_MARKERS_PATH` when set. */
  readonly stageMarkers: string;
  /** What was typed at logbook's prompts. */
  readonly promptHistory: string;
  /** Locks and pid files of running work. */
  readonly run: string;
}

/** The layout of the data dir at `root` (an absolute path, as `dataDir` returns). */
export function dataPaths(root: string, env: Env): DataPaths {
  if (!isAbsolute(root)) throw new TypeError(`Expected an absolute data dir: got "${root}"`);
  const markers = nonEmpty(env, "LOGBOOK_STAGE_MARKERS_PATH");
  return {
    root,
    sessions: join(root, "sessions"),
    historyDb: join(root, "history.db"),
    pruneArchives: join(root, "prune-archives"),
    logs: join(root, "logs"),
    stageMarkers: markers === undefined
      ? join(root, "logs", "stage-markers.log")
      : resolveFromUser(markers, env),
    promptHistory: join(root, "prompt-history.jsonl"),
    run: join(root, "run"),
  };
}

/**
 * The directory the user ran logbook from. `deno task` starts the process in the toolkit's own
 * folder and passes the user's directory as `INIT_CWD`, so that wins when it is absolute.
 */
export function userCwd(env: Env): string {
  const initCwd = nonEmpty(env, "INIT_CWD");
  return initCwd !== undefined && isAbsolute(initCwd) ? resolve(initCwd) : Deno.cwd();
}

/**
 * Resolves a path the user typed: `~` and a leading `~/` are the home, a relative path is taken
 * from the user's directory (see `userCwd`). Throws NoHomeError for `~` without a home.
 */
export function resolveFromUser(path: string, env: Env): string {
  if (path === "") throw new TypeError("Expected a path: got an empty string");
  if (path === "~" || path.startsWith("~/") || path.startsWith(`~${sep}`)) {
    const home = homeDir(env);
    if (home === undefined) throw new NoHomeError(`Cannot expand "${path}": HOME is not set`);
    return resolve(home, path.slice(2));
  }
  return resolve(userCwd(env), path);
}

/** A project: its canonical root directory and the key its files are kept under. */
export interface Project {
  root: string;
  key: string;
}

/**
 * The project at `root`. Its key is hashed when first read: `search` and `show` never read it,
 * and so never load node:crypto (lib/sha256.ts).
 */
function projectAt(root: string): Project {
  let key: string | undefined;
  return {
    root,
    get key() {
      return key ??= projectKey(root);
    },
  };
}

/**
 * The project `dir` belongs to: the main worktree's root for any worktree of a Git repository,
 * the worktree itself for submodules and other layouts, and the physical directory (realpath)
 * outside Git. A directory that no longer exists is judged by its nearest existing ancestor.
 * Reads files only (no `git` process) and never throws.
 */
export function projectOf(dir: string): Project {
  const place = nearestExisting(dir);
  const root = place === undefined
    ? absoluteOf(dir)
    : findGit(place.real)?.root ?? join(place.real, ...place.missing);
  return projectAt(root);
}

/**
 * The project of a cwd recorded in a transcript, which may come from another machine (an old
 * laptop's files added as a root, a synced folder). A path that exists here is judged as
 * `projectOf` judges it, Git root included. One that does not exist here is its own identity,
 * normalised and never resolved against this process's working directory, so the answer is the
 * same wherever capture runs: a Windows path (`c:/Users/dana\src\vault\`) becomes
 * `C:\Users\dana\src\vault` (drive letter upper case, backslashes, no `.`, `..` or trailing
 * separator); a missing POSIX path is its nearest existing ancestor's realpath plus the rest.
 * Git roots are looked up only for paths that exist, with one exception: a deleted linked
 * worktree inside an existing repository (Claude Code's `.claude/worktrees/<name>`) that the
 * repository still lists among its worktrees is that repository's project, as it was while it
 * existed. Never throws.
 */
export function projectOfRecorded(cwd: string): Project {
  if (Deno.build.os !== "windows" && isWindowsPath(cwd)) {
    const root = windowsRoot(cwd);
    return projectAt(root);
  }
  if (!isAbsolute(cwd)) {
    // A relative cwd names no place: keep it as written, not under this process's directory.
    const root = normalize(cwd.replaceAll("\\", "/")).replace(/(?<=.)\/+$/, "");
    return projectAt(root);
  }
  if (attempt(() => Deno.statSync(cwd))) return projectOf(cwd);
  const place = nearestExisting(cwd);
  const root = place === undefined ? resolve(cwd) : join(place.real, ...place.missing);
  const owner = place === undefined ? undefined : listedWorktreeOwner(place.real, [
    resolve(cwd),
    root,
  ]);
  return projectAt(owner || root);
}

/**
 * The project root of the repository whose work tree holds `existing` when that repository
 * lists, among its linked worktrees, one that holds any of `paths` (missing ones: a deleted
 * worktree keeps its entry, `worktrees/<name>/gitdir`, until `git worktree prune`).
 */
function listedWorktreeOwner(existing: string, paths: string[]): string | undefined {
  const git = findGit(existing);
  if (git === undefined) return undefined;
  const listed = join(git.commonDir, "worktrees");
  const entries = attempt(() => [...Deno.readDirSync(listed)]) ?? [];
  for (const entry of entries) {
    const gitdir = attempt(() => Deno.readTextFileSync(join(listed, entry.name, "gitdir")))
      ?.trim();
    if (!gitdir) continue;
    // `<worktree>/.git`, absolute, or relative to its entry (worktree.useRelativePaths).
    const top = dirname(resolve(listed, entry.name, gitdir));
    if (paths.some((path) => path === top || path.startsWith(top + sep))) return git.root;
  }
  return undefined;
}

/**
 * The project of a directory the user names (`--project DIR`): a path resolved as
 * `resolveFromUser` does, or a Windows path recorded on another machine, taken as the
 * transcripts' cwd is (see `projectOfRecorded`), so `--project 'C:\Users\dana\src\vault'` finds
 * what was captured under it.
 */
export function projectOfUserPath(path: string, env: Env): Project {
  if (Deno.build.os !== "windows" && isWindowsPath(path)) return projectOfRecorded(path);
  return projectOf(resolveFromUser(path, env));
}

/** True for a Windows absolute path: `C:\…`, `C:/…`, a UNC `\\server\share`, or `\\?\C:\…`. */
export function isWindowsPath(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path) || /^[\\/][\\/][^\\/]/.test(path) && path.includes("\\");
}

/** A Windows path in one spelling: drive letter upper case, backslashes, no trailing separator. */
function windowsRoot(path: string): string {
  const plain = path.replace(/^[\\/][\\/][?.][\\/](?=[A-Za-z]:)/, "");
  const normal = win32().normalize(plain).replace(/^[a-z](?=:)/, (d) => d.toUpperCase());
  const { root } = win32().parse(normal);
  return normal.length > root.length ? normal.replace(/\\+$/, "") : normal;
}

/**
 * `<slug>-<12 hex>`: a readable slug of the last path component and the start of the SHA-256 of
 * the whole canonical path, so that paths which slug alike (`/a/b`, `/a-b`, `/a b`) never share
 * a key.
 */
export function projectKey(canonicalPath: string): string {
  return `${projectSlug(canonicalPath)}-${sha256Hex(canonicalPath).slice(0, 12)}`;
}

/** The readable part of a project key: its path's last component, lower case, as a slug. */
function projectSlug(path: string): string {
  const last = isWindowsPath(path) ? win32().basename(path) : basename(path);
  return last.toLowerCase().replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "") || "root";
}

/**
 * A project's `key` as shown beside its root passed through the gate (`shownRoot`): the readable
 * part made again from the shown root, since a secret in the root's last component is lower
 * case in the slug, where the gate no longer knows it; the hash stays, so the key still names
 * the project.
 *
 * @example
 * shownProjectKey("ghp-f4k3…-3f2a9c1d4e5b", "/src/[REDACTED:github-token]");
 * // "redacted-github-token-3f2a9c1d4e5b"
 */
export function shownProjectKey(key: string, shownRoot: string): string {
  return `${projectSlug(shownRoot)}-${key.slice(key.lastIndexOf("-") + 1)}`;
}

/**
 * The Git common dir for `dir` (what `git rev-parse --git-common-dir` names, made absolute and
 * physical): shared by all worktrees of a repository. Undefined outside Git.
 */
export function gitCommonDir(dir: string): string | undefined {
  const place = nearestExisting(dir);
  return place === undefined ? undefined : findGit(place.real)?.commonDir;
}

/**
 * Adds `entry` to the repository's `info/exclude` (in the common dir, so every worktree sees it)
 * unless a line already covers it; never touches `.gitignore`. Returns whether it wrote, false
 * also outside Git. Refuses (SymlinkRefusedError) when `info/` or the exclude file is a link.
 */
export function ensureGitExcluded(projectRoot: string, entry = ".logbook/"): boolean {
  if (entry.trim() === "" || /[\r\n]/.test(entry)) {
    throw new TypeError(`Expected one exclude pattern: got "${entry}"`);
  }
  const common = gitCommonDir(projectRoot);
  if (common === undefined) return false;
  const where = `the Git dir "${common}"`;
  const infoDir = join(common, "info");
  const exclude = join(infoDir, "exclude");
  for (const path of [infoDir, exclude]) {
    if (lstatOrUndefined(path)?.isSymlink) throw new SymlinkRefusedError(path, where);
  }
  Deno.mkdirSync(infoDir, { recursive: true });

  let text = "";
  try {
    text = Deno.readTextFileSync(exclude);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const wanted = patternName(entry);
  if (text.split(/\r?\n/).some((line) => patternName(line) === wanted)) return false;

  const line = `${text === "" || text.endsWith("\n") ? "" : "\n"}${entry.trim()}\n`;
  const fs = nodeFs();
  const flags = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT |
    (fs.constants.O_NOFOLLOW ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(exclude, flags, 0o666);
  } catch (err) {
    if (err instanceof Error && "code" in err && err.code === "ELOOP") {
      throw new SymlinkRefusedError(exclude, where);
    }
    throw err;
  }
  try {
    // One short write to an O_APPEND file: Git reading concurrently sees the line whole or not.
    fs.writeSync(fd, line);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Of `paths` (relative to the work tree at `root`), those `git add -A` could stage: the ones
 * `git check-ignore` does not call ignored (a tracked file never is, whatever the patterns say).
 * Asks the real `git`, since a committed `.gitignore` can un-ignore what `.git/info/exclude`
 * ignores. None outside Git.
 *
 * @throws {Error} when Git cannot answer: not installed, not permitted to run, or failing (a
 *   repository it refuses, such as one another user owns).
 */
export function notIgnoredByGit(root: string, paths: readonly string[], env: Env): string[] {
  if (gitCommonDir(root) === undefined) return [];
  const out = runGit(root, ["check-ignore", "--", ...paths], env, [0, 1]);
  const ignored = new Set(out.split("\n"));
  return paths.filter((path) => !ignored.has(path));
}

/** Of `paths` (relative to the work tree at `root`), those Git tracks; none outside Git. */
export function trackedByGit(root: string, paths: readonly string[], env: Env): string[] {
  if (gitCommonDir(root) === undefined) return [];
  const tracked = new Set(runGit(root, ["ls-files", "-z", "--", ...paths], env, [0]).split("\0"));
  return paths.filter((path) => tracked.has(path));
}

/**
 * The variables a `git` child gets: where the user's own Git config and ignore files are, and
 * nothing that points it at another repository (`GIT_DIR` when logbook runs from a hook).
 */
const GIT_VARIABLES = [
  "PATH",
  "HOME",
  "XDG_CONFIG_HOME",
  "USERPROFILE",
  "HOMEDRIVE",
  "HOMEPATH",
  "SYSTEMROOT",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_NOSYSTEM",
];

/** Runs `git <args>` in `root`, with no fsmonitor; its stdout, or throws for another exit code. */
function runGit(root: string, args: string[], env: Env, codes: number[]): string {
  // Never a permission prompt in the middle of a capture: without the grant, Git cannot answer.
  if (Deno.permissions.querySync({ name: "run", command: "git" }).state !== "granted") {
    throw new Error('logbook may not run "git" here: it needs --allow-run=git');
  }
  const vars: Record<string, string> = {};
  for (const name of GIT_VARIABLES) {
    const value = env.get(name);
    if (value !== undefined) vars[name] = value;
  }
  const out = new Deno.Command("git", {
    args: ["-c", "core.fsmonitor=false", ...args],
    cwd: root,
    env: vars,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!codes.includes(out.code)) {
    const said = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
    throw new Error(`"git ${args[0]}" failed with exit code ${out.code}${said ? `: ${said}` : ""}`);
  }
  return new TextDecoder().decode(out.stdout);
}

interface GitPlace {
  /** The canonical project root. */
  root: string;
  /** The physical Git common dir. */
  commonDir: string;
}

/** The Git repository whose work tree holds `start` (a physical path), found by reading files. */
function findGit(start: string): GitPlace | undefined {
  for (let dir = start;; dir = dirname(dir)) {
    const found = gitAt(dir);
    if (found !== undefined) return found;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The repository whose worktree top is `top`, if `top/.git` is a usable Git dir or gitdir link. */
function gitAt(top: string): GitPlace | undefined {
  const dotGit = join(top, ".git");
  const info = attempt(() => Deno.statSync(dotGit));
  let gitDir: string | undefined;
  if (info?.isDirectory) {
    gitDir = dotGit;
  } else if (info?.isFile) {
    const link = attempt(() => Deno.readTextFileSync(dotGit))?.match(/^gitdir:[ \t]*(.*?)\s*$/m);
    if (link?.[1]) gitDir = resolve(top, link[1]);
  }
  if (gitDir === undefined) return undefined;
  // Git itself gives up on a gitdir without HEAD; moving on upwards is the gentler reading.
  const realGitDir = attempt(() => Deno.realPathSync(gitDir));
  if (realGitDir === undefined || !attempt(() => Deno.statSync(join(realGitDir, "HEAD")))) {
    return undefined;
  }
  const shared = attempt(() => Deno.readTextFileSync(join(realGitDir, "commondir")).trim());
  if (!shared) return { root: top, commonDir: realGitDir };
  // Git joins commondir to the gitdir and resolves the result physically.
  const commonDir = realOrSame(resolve(realGitDir, shared));
  const root = basename(commonDir) === ".git" ? realOrSame(dirname(commonDir)) : top;
  return { root, commonDir };
}

/** The physical path of `dir`'s nearest existing ancestor (or itself) and the missing rest. */
function nearestExisting(dir: string): { real: string; missing: string[] } | undefined {
  const missing: string[] = [];
  for (let current = absoluteOf(dir);;) {
    const real = attempt(() => Deno.realPathSync(current));
    if (real !== undefined) return { real, missing };
    const parent = dirname(current);
    if (parent === current) return undefined;
    missing.unshift(basename(current));
    current = parent;
  }
}

function absoluteOf(dir: string): string {
  // resolve() asks for the working directory, which can itself have been deleted.
  return attempt(() => resolve(dir)) ?? resolve(sep, dir);
}

function realOrSame(path: string): string {
  return attempt(() => Deno.realPathSync(path)) ?? path;
}

/** Runs `fn`, with undefined for any error: project detection reads whatever the disk holds. */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** An exclude line reduced to the name it ignores, so `.logbook`, `/.logbook/` etc. compare equal. */
function patternName(line: string): string {
  return line.trim().replace(/^\//, "").replace(/\/$/, "");
}

function locate(
  env: Env,
  override: string,
  xdg: string,
  underHome: string[],
  what: string,
): string {
  const chosen = nonEmpty(env, override);
  if (chosen !== undefined) return resolveFromUser(chosen, env);
  const base = nonEmpty(env, xdg);
  // The XDG base directory spec says relative values are invalid and must be ignored.
  if (base !== undefined && isAbsolute(base)) return join(base, "logbook");
  const home = homeDir(env);
  if (home === undefined) {
    throw new NoHomeError(
      `Cannot locate the ${what}: HOME is not set and ${override} is not given`,
    );
  }
  return resolve(home, ...underHome, "logbook");
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env.get(name);
  return value === undefined || value === "" ? undefined : value;
}
