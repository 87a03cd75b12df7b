// How the bench (and the tests) run a logbook command as a user runs it: with the permission flags
// of its `deno task`, and with what a child Deno needs from this environment. Not `_`-named, so
// the bench may import it (as it does `postgres_server.ts`).

import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * The permission flags `deno task <command>` runs a command with (from the deno.json of the
 * toolkit at `root`, this one unless told), so child processes run with exactly the permissions
 * users get, not `-A`. `command` is the task's name or the file's (`delete-user-data`,
 * `delete_user_data`). The bench's way: it also runs older checkouts, whose deno.json is all
 * there is to read; the tests take the flags from the commands' specs (`tests/_helpers.ts`), and
 * tests/commands/_command_test.ts holds deno.json's tasks to those.
 */
export function taskFlags(command: string, root = ROOT): string[] {
  return taskRun(command, root).flags;
}

/**
 * The variables `deno task <command>` sets before its `deno run` (`RUN_ENV` of lib/run_flags.ts;
 * none in older checkouts), for a child the bench measures as the task runs it.
 */
export function taskEnv(command: string, root = ROOT): Record<string, string> {
  return taskRun(command, root).env;
}

/** The task's run of its command (start's task builds the bundle first, with its own flags). */
function taskRun(command: string, root: string): { env: Record<string, string>; flags: string[] } {
  const config = JSON.parse(Deno.readTextFileSync(join(root, "deno.json")));
  const line: string | undefined = config.tasks?.[command.replaceAll("_", "-")];
  const file = command.replaceAll("-", "_");
  const match = line &&
    new RegExp(`(?:^|; )((?:\\w+=\\S+ )*)deno run ((?:-\\S+ )*)commands/${file}\\.ts`).exec(line);
  if (!match) throw new Error(`No "deno run … commands/" task for "${command}" in deno.json`);
  const words = (text: string) => text.trim().split(" ").filter(Boolean);
  const env: Record<string, string> = {};
  for (const word of words(match[1]!)) {
    const at = word.indexOf("=");
    env[word.slice(0, at)] = word.slice(at + 1);
  }
  return { env, flags: words(match[2]!) };
}

/**
 * What a child Deno needs from this environment whatever its own variables: PATH, the module
 * cache (so nothing is downloaded again under a temp HOME), TLS and proxy settings, and
 * LOGBOOK_SOURCES (`deno task test` sets it, so `search` and `show` run their sources).
 */
export function childBaseEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  const home = env.HOME ?? "/root";
  const base: Record<string, string> = {
    PATH: env.PATH ?? "/usr/bin:/bin",
    DENO_DIR: env.DENO_DIR ?? join(env.XDG_CACHE_HOME ?? join(home, ".cache"), "deno"),
  };
  for (const [key, value] of Object.entries(env)) {
    if (
      /^(LOGBOOK_SOURCES|SSL_CERT_FILE|SSL_CERT_DIR|DENO_CERT|DENO_TLS_CA_STORE|NODE_EXTRA_CA_CERTS|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|NPM_CONFIG_REGISTRY)$/
        .test(key)
    ) {
      base[key] = value;
    }
  }
  return base;
}
