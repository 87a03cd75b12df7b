#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run
// `search`: finds records across every captured conversation, ranked, with filters. The command
// itself is commands/_body/search.ts; this entry runs its bundle when one is fresh (see
// _launch.ts), so a search starts in about half the loading time.

import { loadBody } from "./_launch.ts";
import type * as Search from "./_body/search.ts";

const body = await loadBody<typeof Search>("search", import.meta.url, import.meta.main);

export const spec: typeof Search.spec = body.spec;
export const main: typeof Search.main = body.main;

if (import.meta.main) Deno.exit(await main(Deno.args));
