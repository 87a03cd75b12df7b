#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E
// `usage`: tokens and cost per day, week, month, session, project or 5-hour block. The command
// itself is commands/_body/usage.ts; this entry runs its bundle when one is fresh (see
// _launch.ts): a report someone checks every day starts in about half the loading time.

import { loadBody } from "./_launch.ts";
import type * as Usage from "./_body/usage.ts";

const body = await loadBody<typeof Usage>("usage", import.meta.url, import.meta.main);

export const spec: typeof Usage.spec = body.spec;
export const main: typeof Usage.main = body.main;

if (import.meta.main) Deno.exit(await main(Deno.args));
