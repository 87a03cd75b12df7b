#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E
// `status`: logbook on this machine at a glance. The command itself is commands/_body/status.ts;
// this entry runs its bundle when one is fresh (see _launch.ts): what a person or a script asks
// every few minutes starts in about half the loading time.

import { loadBody } from "./_launch.ts";
import type * as Status from "./_body/status.ts";

const body = await loadBody<typeof Status>("status", import.meta.url, import.meta.main);

export const spec: typeof Status.spec = body.spec;
export const main: typeof Status.main = body.main;

if (import.meta.main) Deno.exit(await main(Deno.args));
