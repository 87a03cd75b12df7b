#!/usr/bin/env -S deno run -R -W -E
// `show`: pages through a whole conversation in record order, readably, as JSON with the exact
// bytes in base64, or as the raw captured bytes themselves.

import type { Env } from "../lib/env.ts";
import { defineCommand, EXIT, run, shared, UsageError, wholeNumber } from "./_command.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { loadContext, openStore, redactorFor } from "../lib/context.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import {
  findConversation,
  pageConversation,
  pageRows,
  type RecordJson,
} from "../lib/store/conversations.ts";
import { TextDeriver } from "../lib/store/records.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeJson } from "./_terminal/safe_json.ts";
import { safeText } from "./_terminal/safe_text.ts";

export const spec = defineCommand({
  name: "show",
  summary: "page through a whole conversation, byte-exact",
  usage: "logbook show <conversation-id> [--after RECORD] [--limit N] [--raw] [--json]",
  options: {
    after: { type: "string" },
    limit: { type: "string" },
    raw: { type: "boolean" },
    ...shared("json"),
  },
  optionHelp: [
    ["--after RECORD", "start after this record id (the `next` of the previous page)"],
    ["--limit N", "at most N records per page (default 100; a page also stops near 512 KiB)"],
    ["--raw", "print the exact captured bytes instead (on a terminal, controls shown visibly)"],
    ["--json", 'one object: {"conversation", "records" (raw in base64), "next"}'],
  ],
  examples: ["logbook show claude:3f2a9c1e --after 1200 --json"],
  maxPositionals: 1,
});

/** Runs `show` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await run(spec, args, safeIo(io), ({ values, positionals }) => {
    const id = positionals[0];
    if (!id) throw new UsageError("Missing the conversation id");
    const after = wholeNumber(values.after, "after", { min: 0, what: "record id" });
    const limit = wholeNumber(values.limit, "limit");
    if (values.raw && values.json) {
      throw new UsageError('Options "--raw" and "--json" cannot be used together');
    }
    const ctx = loadContext({ env, onStall: io.err });
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      const conversation = findConversation(store, id);
      const paging = { ...(after !== undefined ? { after } : {}), ...(limit ? { limit } : {}) };
      if (values.raw) {
        const { rows, next } = pageRows(store, conversation.id, paging);
        if (io.outIsTerminal) printRawOnTerminal(rows.map((row) => row.raw), io);
        else for (const row of rows) io.outBytes(row.raw);
        if (next !== null) {
          io.err(`more: logbook show ${safeText(conversation.key)} --raw --after ${next}\n`);
        }
        return EXIT.ok;
      }
      const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
      const page = pageConversation(store, deriver, conversation, paging);
      if (values.json) {
        io.out(safeJson(page) + "\n");
        return EXIT.ok;
      }
      const s = styler(io.color);
      const c = page.conversation;
      if (after === undefined) {
        io.out(
          `${s.bold(safeText(c.title ?? c.id))}\n${
            s.dim(safeText(`${c.id}  ${c.agent}  ${c.cwd ?? c.project ?? ""}`))
          }\n\n`,
        );
      }
      // Typed prompts from a history file repeat the transcript's user messages where there is
      // one: the readable view shows them only for a session without transcript messages.
      const prompts = c.messages === 0;
      for (const record of page.records) {
        if (record.kind !== "prompt" || prompts) io.out(renderRecord(record, io));
      }
      if (page.next !== null) {
        io.err(`more: logbook show ${safeText(c.id)} --after ${page.next}\n`);
      }
      return EXIT.ok;
    } finally {
      store.close();
    }
  });
}

const FOLDED = new Set(["tool_call", "tool_result", "event"]);

/** A record as the reader sees it: roles, full messages, tool calls folded to one line. */
function renderRecord(record: RecordJson, io: Io): string {
  if (record.kind === "meta" || !record.text.trim()) return "";
  const s = styler(io.color);
  const when = record.timestamp ? record.timestamp.slice(11, 16) : "     ";
  if (FOLDED.has(record.kind)) {
    const line = safeText(record.text.replace(/\s+/g, " ").trim());
    const cut = line.length > 110 ? `${line.slice(0, 109)}…` : line;
    const mark = record.kind === "tool_call" ? "▸" : record.kind === "tool_result" ? "◂" : "·";
    return s.dim(`${when} ${mark} ${record.kind}: ${cut}`) + "\n";
  }
  const who = record.kind === "message"
    ? (record.role ?? "message")
    : record.kind === "prompt"
    ? "user (typed)"
    : record.kind === "reasoning"
    ? "thinking"
    : record.kind;
  const label = who === "assistant"
    ? s.green(who)
    : record.role === "user"
    ? s.cyan(who)
    : s.yellow(who);
  const text = safeText(record.text.trim(), { multiline: true });
  const body = record.kind === "reasoning" ? s.dim(text) : text;
  return `${s.dim(when)} ${s.bold(label)}\n${body}\n\n`;
}

/**
 * A page's raw bytes meant for a terminal: decoded as UTF-8 as one text (a character or a CRLF
 * split between two records stays whole; a page is bounded) and shown through the filter, so a
 * transcript cannot drive the terminal. A pipe or a file gets the exact bytes.
 */
function printRawOnTerminal(chunks: Uint8Array[], io: Io): void {
  const decoder = new TextDecoder();
  let text = "";
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  text += decoder.decode();
  io.out(safeText(text, { multiline: true }));
}

if (import.meta.main) Deno.exit(await main(Deno.args));
