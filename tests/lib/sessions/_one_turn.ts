// A process that runs one turn of a new logbook session from its environment and prints nothing:
// the subprocess of terminal_free_test.ts. Exits 0 when the turn was answered and written.

import { loadContext } from "../../../lib/context.ts";
import { chatSetup } from "../../../lib/sessions/setup.ts";
import { ChatSession } from "../../../lib/sessions/turn.ts";

if (import.meta.main) {
  const ctx = loadContext({ env: Deno.env, agent: "logbook" });
  const setup = chatSetup(ctx, { incognito: false });
  const session = ChatSession.start({ ...setup.options, cwd: ctx.cwd });
  const result = await session.turn(Deno.args.join(" "));
  Deno.exit(result.outcome === "ok" && session.written ? 0 : 1);
}
