#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net
// `chat`: a conversation with the configured model in this project, interactive with streaming
// replies or one-shot with `-p`, kept as a logbook session unless `--incognito`.

import type { Env } from "../lib/env.ts";
import { defineCommand, run, shared, UsageError } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { loadContext } from "../lib/context.ts";
import { chatSetup } from "../lib/sessions/setup.ts";
import { ChatSession } from "../lib/sessions/turn.ts";
import { converse } from "./_terminal/chat_loop.ts";
import { safeIo } from "./_terminal/safe_io.ts";

export const spec = defineCommand({
  name: "chat",
  summary: "talk with the configured model; the session is kept to resume or fork",
  arguments: "[PROMPT]",
  options: {
    prompt: {
      type: "string",
      short: "p",
      value: "PROMPT",
      shortInUsage: true,
      help: "one-shot: answer PROMPT, print the reply and leave",
    },
    ...shared({
      incognito: "write nothing under the data dir: no record, trail or prompt history",
    }),
  },
  helpNote: "show this help (in a session, /help lists /rename, /undo, /clear, …)",
  examples: ['logbook chat -p "What does the retry helper in lib/http.ts do?"'],
  permissions: { read: true, write: true, env: true, net: true },
});

/** Runs `chat` with `args`; returns the exit status. */
export async function main(
  args: string[],
  terminal: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  // Replies, titles and notes may carry what a model or a transcript wrote; nothing is styled.
  const io = safeIo(terminal);
  return await run(spec, args, io, async ({ values, positionals }) => {
    if (values.prompt !== undefined && positionals.length > 0) {
      throw new UsageError('Give the prompt either as an argument or with "-p", not both');
    }
    if (values.prompt !== undefined && values.prompt.trim() === "") {
      throw new UsageError('Option "-p" expects a prompt, got an empty one');
    }
    const ctx = loadContext({
      env,
      agent: "logbook",
      incognito: values.incognito === true,
      onStall: io.err,
      onWarning: io.err,
    });
    const setup = chatSetup(ctx, { incognito: values.incognito ?? false });
    const session = ChatSession.start({ ...setup.options, cwd: ctx.cwd });
    if (values.prompt !== undefined) {
      return await converse(io, ctx, session, setup, { firstPrompt: values.prompt, once: true });
    }
    const first = positionals.join(" ");
    return await converse(io, ctx, session, setup, first ? { firstPrompt: first } : {});
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
