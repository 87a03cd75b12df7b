// `status`: logbook on this machine at a glance — where its data is, the store, capture on or
// off and its last result, drift, snapshots, unclosed stage markers and corrupt session records.
// This is the command; `commands/status.ts` runs it, from its bundle while that is fresh
// (commands/_launch.ts).

import { loadContext } from "../../lib/context.ts";
import type { Env } from "../../lib/env.ts";
import { gatherStatus } from "../../lib/status.ts";
import { defineCommand, EXIT, run, shared } from "../_command.ts";
import { type Io, stdio, styler } from "../_terminal/io.ts";
import { safeIo } from "../_terminal/safe_io.ts";
import { safeJson } from "../../lib/safe_json.ts";
import { statusLines } from "../_terminal/status_view.ts";

export const spec = defineCommand({
  name: "status",
  summary: "logbook on this machine at a glance: store, capture, drift, snapshots, problems",
  options: {
    check: {
      type: "boolean",
      help: "also check the store for damage, name it and say how to recover (exit 1)",
    },
    ...shared({ json: "print the status as one JSON object" }),
  },
  examples: ["logbook status --check"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true },
  embed: ["lib/store/_check_worker.ts", "commands/_body/status.ts"],
});

/** Runs `status`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await run(spec, args, safeIo(io), async ({ values }) => {
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const status = await gatherStatus(ctx, { check: values.check === true });
    const damaged = status.check?.ok === false;
    if (values.json) {
      io.out(safeJson(status) + "\n");
      return damaged ? EXIT.failure : EXIT.ok;
    }
    io.out(statusLines(status, styler(io.color), values.check === true).join("\n") + "\n");
    if (damaged) {
      io.err(
        `error: the history store is damaged; see "check" above for what and how to recover\n`,
      );
      return EXIT.failure;
    }
    return EXIT.ok;
  });
}
