// A generated corpus's context for the bench tests: the agents' folders under `corpus`, and the
// store, config and home under `dir`, as the capture of that corpus sees them.

import { join } from "node:path";
import { corpusEnv } from "../../bench/corpus.ts";
import { type Context, loadContext } from "../../lib/context.ts";
import { envFrom } from "../../lib/env.ts";

/** The context capturing `corpus` into `dir/data` (its home `dir/home`, made here). */
export function corpusContext(dir: string, corpus: string): Context {
  const home = join(dir, "home");
  Deno.mkdirSync(home, { recursive: true });
  return loadContext({
    env: envFrom({
      ...corpusEnv(corpus, home),
      LOGBOOK_DATA_DIR: join(dir, "data"),
      LOGBOOK_CONFIG_DIR: join(dir, "config"),
      INIT_CWD: home,
      LOGBOOK_STAGE_MARKERS: "0",
    }),
  });
}
