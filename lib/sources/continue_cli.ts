// How a Continue CLI session is continued with `cn`, which cannot be told which one to resume:
// `cn --resume` takes no id and loads the most recently modified `sessions/*.json` of its
// directory (`$CONTINUE_GLOBAL_DIR`, else `~/.continue`), whatever the cwd. So only the newest
// session can be resumed as itself; any other is continued in a fork (`cn --fork <id>`, a copy
// that goes on).

import { basename, join } from "../path.ts";
import type { Env } from "../env.ts";
import { homeDir } from "../paths.ts";

/** The folder `cn` keeps its sessions in, as it finds it; undefined without a home. */
export function continueSessionsDir(env: Env): string | undefined {
  const global = env.get("CONTINUE_GLOBAL_DIR");
  if (global) return join(global, "sessions");
  const home = homeDir(env);
  return home ? join(home, ".continue", "sessions") : undefined;
}

/** The session `cn --resume` would load from `dir`: the newest by mtime, as `cn` picks it. */
export function newestContinueSession(dir: string): string | undefined {
  let newest: { id: string; mtime: number } | undefined;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!entry.name.endsWith(".json") || entry.name === "sessions.json") continue;
    let mtime: number;
    try {
      mtime = Deno.statSync(join(dir, entry.name)).mtime?.getTime() ?? 0;
    } catch {
      continue;
    }
    if (!newest || mtime > newest.mtime) newest = { id: basename(entry.name, ".json"), mtime };
  }
  return newest?.id;
}

/**
 * `cn`'s arguments that resume session `id`: `--resume` when it is the one `cn --resume` loads
 * (the newest in `cn`'s folder); else `--fork <id>`, the only way `cn` takes an id: a new session
 * that starts with this one's history and goes on from it (logbook links it as a fork). Never an
 * error: the dashboard and the search screen ask this of every session they list.
 */
export function continueResumeArgs(id: string, env: Env): string[] {
  const dir = continueSessionsDir(env);
  const newest = dir === undefined ? undefined : newestContinueSession(dir);
  return newest === id ? ["--resume"] : ["--fork", id];
}

/** The process's environment, or none where reading it is not allowed. */
export function processEnv(): Env {
  return {
    get(name: string): string | undefined {
      try {
        return Deno.env.get(name);
      } catch {
        return undefined;
      }
    },
  };
}
