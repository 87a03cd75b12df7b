// What a command needs to know about where it runs: the environment, the user's directory, the
// data and config dirs, and the merged configuration. Built once at command start.

import { type Config, loadConfig, type LoadedConfig } from "./config.ts";
import type { Env } from "./env.ts";
import type { Agent } from "./agents.ts";
import {
  configDir,
  dataDir,
  type DataPaths,
  dataPaths,
  ensureGitExcluded,
  projectOf,
  userCwd,
} from "./paths.ts";
import { HistoryStore, StoreLockedError } from "./store/db.ts";
import { explainDataDir } from "./private_fs.ts";
import { createGate, type Gate, redactorOf } from "./gate/gate.ts";
import type { Redactor } from "./gate/secrets.ts";
import { configureStageMarkers, type StageMarkers, stageMarkersFromEnv } from "./stage_markers.ts";
import { messageOf } from "./format.ts";

/** The resolved surroundings of one command run. */
export interface Context {
  env: Env;
  /** The directory the user ran the command from (`INIT_CWD` under `deno task`). */
  cwd: string;
  paths: DataPaths;
  configDir: string;
  config: Config;
  configFiles: string[];
  configWarnings: string[];
  now: () => number;
  /** Stage markers of this run (off with LOGBOOK_STAGE_MARKERS=0 and in incognito runs). */
  markers: StageMarkers;
}

export interface ContextOptions {
  env: Env;
  agent?: Agent;
  now?: () => number;
  /** Incognito: nothing is written under the data dir, not even stage markers. */
  incognito?: boolean;
  /** Where a `stall suspected` line goes: the command's stderr (without it, only the log has it). */
  onStall?: (line: string) => void;
  /**
   * Where each config warning goes as a `warning: …` line (an unknown key, a key a project's file
   * may not set): the command's stderr. Without it, only `configWarnings` has them.
   */
  onWarning?: (line: string) => void;
}

/** Resolves dirs and configuration for a command run (throws ConfigError on a bad config). */
export function loadContext(options: ContextOptions): Context {
  const { env } = options;
  const cwd = userCwd(env);
  const root = physical(dataDir(env));
  const config = configDir(env);
  const project = projectOf(cwd);
  const loaded: LoadedConfig = loadConfig({
    env,
    configDir: config,
    projectRoot: project.root,
    ...(options.agent ? { agent: options.agent } : {}),
  });
  for (const warning of loaded.warnings) options.onWarning?.(`warning: ${warning}\n`);
  if (loaded.projectConfigDir) {
    // A project's .logbook/ stays out of Git through .git/info/exclude, never .gitignore.
    try {
      ensureGitExcluded(project.root);
    } catch {
      // Not being able to write the exclude file must not stop a command.
    }
  }
  // The process-wide writer follows this run's environment, so library code that marks steps
  // without a context writes where this command writes.
  const markers = configureStageMarkers(stageMarkersFromEnv(env, {
    enabled: !options.incognito,
    ...(options.onStall ? { onStall: options.onStall } : {}),
  }));
  return {
    markers,
    env,
    cwd,
    paths: dataPaths(root, env),
    configDir: config,
    config: loaded.config,
    configFiles: loaded.files,
    configWarnings: loaded.warnings,
    now: options.now ?? Date.now,
  };
}

/** The data dir as a physical path, so a linked data dir (on another disk) is used as is. */
function physical(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** True when the history store exists (commands that only read do not create it). */
export function storeExists(ctx: Context): boolean {
  try {
    Deno.statSync(ctx.paths.historyDb);
    return true;
  } catch (err) {
    // Only a missing store is "no store": a store that cannot be read says so where it is opened.
    if (err instanceof Deno.errors.NotFound) return false;
    return true;
  }
}

/** How `openStore` opens the store. */
export interface OpenStoreOptions {
  /** Fail with a hint to run `reindex` instead of creating a missing store. */
  mustExist?: boolean;
  /**
   * For commands that only read: open without writing anything, so a read-only data dir can be
   * read. A store that still lacks a migration readers need is opened for writing once to bring
   * it up to date (one lacking only migrations readers can wait for is read as it is).
   */
  readOnly?: boolean;
  /**
   * With `readOnly`, false never writes, not even to bring the store up to date: a store that
   * lacks a migration readers need is an error saying to run `logbook reindex` first (for a
   * server promised read-only, such as `logbook mcp`). Default true.
   */
  upgrade?: boolean;
}

/**
 * Opens the history store, creating it unless `mustExist` is set and it is missing. A data dir
 * the file system refuses is said in words (`explainDataDir`).
 */
export function openStore(ctx: Context, options: OpenStoreOptions = {}): HistoryStore {
  try {
    return openStoreIn(ctx, options);
  } catch (err) {
    throw explainDataDir(err, ctx.paths.root, options.readOnly ? "read" : "write") ?? err;
  }
}

function openStoreIn(ctx: Context, options: OpenStoreOptions): HistoryStore {
  if (options.mustExist && !storeExists(ctx)) {
    throw new Error(
      `No history captured yet in "${ctx.paths.root}": run "logbook reindex" first`,
    );
  }
  const busy = busyTimeoutMs(ctx.env);
  const open = {
    path: ctx.paths.historyDb,
    root: ctx.paths.root,
    ...(busy === undefined ? {} : { busyTimeoutMs: busy }),
  };
  if (!options.readOnly) return HistoryStore.open(open);
  const store = HistoryStore.open({ ...open, readOnly: true });
  const pending = store.pendingForReaders();
  if (!pending.length) return store;
  store.close();
  if (options.upgrade === false) {
    throw new Error(
      `The history store "${open.path}" needs an upgrade ("${pending[0]}") before it can be ` +
        `read: run "logbook reindex" first`,
    );
  }
  try {
    return HistoryStore.open(open);
  } catch (err) {
    if (err instanceof StoreLockedError) throw err;
    throw new Error(
      `The history store "${open.path}" needs an upgrade ("${pending[0]}") before it can be ` +
        `read, and it cannot be written here: ${messageOf(err)}; run "logbook reindex" once ` +
        `with write access to "${open.root}"`,
      { cause: err },
    );
  }
}

/** `LOGBOOK_BUSY_TIMEOUT_MS` when it is a positive number, else undefined (the store's own). */
export function busyTimeoutMs(env: Env): number | undefined {
  const busy = Number(env.get("LOGBOOK_BUSY_TIMEOUT_MS") ?? "");
  return Number.isFinite(busy) && busy > 0 ? busy : undefined;
}

/** The gate's configuration: the user's labelled secrets and allowed labels. */
export function gateOptionsFor(
  ctx: Context,
): { labelled: Record<string, string>; allowed: string[] } {
  return { labelled: ctx.config.secrets, allowed: ctx.config.allowedSecrets };
}

/** The gate configured with the user's labelled secrets and allowed labels. */
export function gateFor(ctx: Context): Gate {
  return createGate(gateOptionsFor(ctx));
}

/** The redaction of derived text, snippets and anything shown (see `Redactor`). */
export function redactorFor(ctx: Context): Redactor {
  return redactorOf(gateFor(ctx));
}
