#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run
// `show`: pages through a whole conversation in record order, or exports it whole. The command
// itself is commands/_body/show.ts; this entry runs its bundle when one is fresh (see
// _launch.ts), so a conversation opens in about half the loading time.

import { loadBody } from "./_launch.ts";
import type * as Show from "./_body/show.ts";

const body = await loadBody<typeof Show>("show", import.meta.url, import.meta.main);

export const spec: typeof Show.spec = body.spec;
export const main: typeof Show.main = body.main;

if (import.meta.main) Deno.exit(await main(Deno.args));
