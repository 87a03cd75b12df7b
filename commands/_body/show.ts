// `show`: pages through a whole conversation in record order, readably (through a pager on a
// terminal), as JSON with the exact bytes in base64, as the raw captured bytes themselves, or
// exported whole as Markdown, HTML, JSON or text.
// This is the command; `commands/show.ts` runs it, from its bundle while that is fresh
// (commands/_launch.ts).

import type { Env } from "../../lib/env.ts";
import {
  defineCommand,
  EXIT,
  invalidOption,
  type Parsed,
  run,
  shared,
  UsageError,
  wholeNumber,
} from "../_command.ts";
import { type Io, stdio } from "../_terminal/io.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { plural } from "../../lib/format.ts";
import { READERS } from "../../lib/agents.ts";
import {
  contextStart,
  findConversation,
  type Page,
  pageConversation,
  pageRows,
  questionOf,
  type RecordJson,
} from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import type { ConversationRow } from "../../lib/store/records.ts";
import { TextDeriver } from "../../lib/store/records.ts";
import { pageThrough, type Paging, renderPage, type View } from "../_terminal/conversation_view.ts";
import { safeIo } from "../_terminal/safe_io.ts";
import { safeJson } from "../../lib/safe_json.ts";
import { safeText } from "../../lib/safe_text.ts";
import { terminalColumns } from "../_terminal/wrap.ts";

/** The formats of `--format` (as `lib/export.ts` has them; that module loads only for an export). */
const FORMATS = ["md", "html", "json", "text"] as const;
type Format = typeof FORMATS[number];

export const spec = defineCommand({
  name: "show",
  summary: "page through a whole conversation, byte-exact, or export it",
  arguments: "<conversation-id>",
  options: {
    after: {
      type: "string",
      value: "RECORD",
      help: "start after this record id (the `next` of the previous page)",
    },
    around: {
      type: "string",
      value: "RECORD",
      or: "after",
      help: "open at this record (a search hit's #) with the records before it",
    },
    limit: {
      type: "string",
      value: "N",
      help: "at most N records per page (default 100; a page also stops near 512 KiB)",
    },
    all: {
      type: "boolean",
      help: "show `meta` records and records without text too (hidden by default)",
    },
    "no-pager": {
      type: "boolean",
      help: "on a terminal, print one page instead of the whole conversation in $PAGER",
    },
    raw: {
      type: "boolean",
      help: "print the exact captured bytes instead (on a terminal, controls shown visibly)",
    },
    ...shared({ json: 'one object: {"conversation", "records" (raw in base64), "next"}' }),
    format: {
      type: "string",
      value: "F",
      choices: FORMATS,
      help: "export the whole conversation: md, html (one self-contained file), json, text",
    },
    output: {
      type: "string",
      short: "o",
      value: "FILE",
      shortInUsage: true,
      help: "with --format: write FILE (owner-only, replaced atomically)",
    },
    team: {
      type: "boolean",
      help: "page a conversation pushed to the team's PostgreSQL history (see push)",
    },
    machine: {
      type: "string",
      value: "M",
      within: "team",
      help: "with --team: the machine that pushed it, when several did",
    },
  },
  examples: [
    "logbook show claude:3f2a9c1e --around 1234",
    "logbook show claude:3f2a9c1e --format html -o session.html",
  ],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true, net: true, run: true },
  embed: ["commands/_body/show.ts"],
});

/** Runs `show` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
): Promise<number> {
  return await run(spec, args, safeIo(io), async ({ values, positionals }) => {
    const { id, after, around, limit, format } = checkedOptions(values, positionals);
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    if (values.team) {
      const { showTeam } = await import("../_team.ts");
      return await showTeam(ctx, id, {
        json: values.json === true,
        ...(values.machine ? { machine: values.machine } : {}),
        ...(after !== undefined ? { after } : {}),
        ...(limit ? { limit } : {}),
      }, io);
    }
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      const conversation = findConversation(store, id);
      const deriver = new TextDeriver(store, READERS, redactorFor(ctx));
      const context = around === undefined
        ? null
        : contextStart(store, deriver, conversation, around, limit ? { limit } : {});
      const start = context === null ? after : context.after;
      const paging: Paging = {
        store,
        deriver,
        conversation,
        options: {
          ...(start !== undefined ? { after: start } : {}),
          ...(limit ? { limit } : {}),
        },
      };
      if (values.raw) return printRaw(paging, io);
      if (format !== undefined) {
        return await exportAll(store, deriver, conversation, format, {
          all: values.all === true,
          output: values.output,
          io,
        });
      }
      const page = pageConversation(store, deriver, conversation, paging.options);
      if (values.json) {
        io.out(safeJson(page) + "\n");
        return EXIT.ok;
      }
      const view: View = {
        io,
        all: values.all === true,
        width: io.outIsTerminal ? terminalColumns(env) : null,
        hit: around ?? null,
        question: context ? questionOf(store, deriver, conversation, context) : null,
      };
      return await printReadable(page, paging, view, {
        env,
        heading: after === undefined,
        pager: io.outIsTerminal && !values["no-pager"],
      });
    } finally {
      store.close();
    }
  });
}

/**
 * The command line, checked: the conversation's id, where to start, the page size and the export
 * format. Throws UsageError for a missing id, a bad value and options that cannot go together.
 */
function checkedOptions(
  values: Parsed<typeof spec.options>["values"],
  positionals: string[],
): {
  id: string;
  after: number | undefined;
  around: number | undefined;
  limit: number | undefined;
  format: Format | undefined;
} {
  const id = positionals[0];
  if (!id) throw new UsageError("Missing the conversation id");
  const after = wholeNumber(values.after, "after", { min: 0, what: "record id" });
  const around = wholeNumber(values.around, "around", { what: "record id" });
  const limit = wholeNumber(values.limit, "limit");
  const format = formatOf(values.format);
  refuseTogether([
    ["--raw", values.raw],
    ["--json", values.json],
    ["--format", format !== undefined],
  ]);
  refuseTogether([["--after", after !== undefined], ["--around", around !== undefined]]);
  if (format !== undefined) {
    refuseTogether([["--format", true], ["--after", after !== undefined]]);
    refuseTogether([["--format", true], ["--around", around !== undefined]]);
  }
  if (values.output !== undefined && format === undefined) {
    throw new UsageError('Option "-o, --output" needs "--format"');
  }
  if (values.machine !== undefined && !values.team) {
    throw new UsageError('Option "--machine" needs "--team"');
  }
  const teamClash = values.raw
    ? "--raw"
    : format !== undefined
    ? "--format"
    : around !== undefined
    ? "--around"
    : null;
  if (values.team && teamClash) {
    throw new UsageError(`Options "--team" and "${teamClash}" cannot be used together`);
  }
  return { id, after, around, limit, format };
}

function formatOf(value: string | undefined): Format | undefined {
  if (value === undefined) return undefined;
  if ((FORMATS as readonly string[]).includes(value)) return value as Format;
  const expected = `${FORMATS.slice(0, -1).join(", ")} or ${FORMATS.at(-1)}`;
  throw invalidOption("format", value, { message: `expected ${expected}`, expected });
}

/** A usage error when more than one of the named options is given. */
function refuseTogether(options: [string, boolean | undefined][]): void {
  const given = options.filter(([, on]) => on).map(([name]) => `"${name}"`);
  if (given.length > 1) {
    throw new UsageError(`Options ${given.join(" and ")} cannot be used together`);
  }
}

/**
 * Writes the whole conversation in `format` to `output` (owner-only, atomically) or to stdout;
 * the document holds nothing a terminal acts on (see `lib/export.ts`). The export formats load
 * only here.
 */
async function exportAll(
  store: HistoryStore,
  deriver: TextDeriver,
  conversation: ConversationRow,
  format: Format,
  options: { all: boolean; output: string | undefined; io: Io },
): Promise<number> {
  const { exportConversation } = await import("../../lib/export.ts");
  const records: RecordJson[] = [];
  let page = pageConversation(store, deriver, conversation, { limit: 500 });
  records.push(...page.records);
  while (page.next !== null) {
    page = pageConversation(store, deriver, conversation, { limit: 500, after: page.next });
    records.push(...page.records);
  }
  const { io, output } = options;
  const document = exportConversation(format, page.conversation, records, { all: options.all });
  if (output !== undefined) {
    const { writeOwnerOnlyAtomic } = await import("../../lib/private_fs.ts");
    writeOwnerOnlyAtomic(output, document);
    io.err(`Wrote ${plural(records.length, "record")} to ${output}\n`);
    return EXIT.ok;
  }
  io.outBytes(new TextEncoder().encode(document));
  return EXIT.ok;
}

/** `--raw`: a page's captured bytes, and on stderr the command that prints the next page. */
function printRaw(paging: Paging, io: Io): number {
  const { rows, next } = pageRows(paging.store, paging.conversation.id, paging.options);
  if (io.outIsTerminal) printRawOnTerminal(rows.map((row) => row.raw), io);
  else for (const row of rows) io.outBytes(row.raw);
  if (next !== null) {
    io.err(`more: logbook show ${safeText(paging.conversation.key)} --raw --after ${next}\n`);
  }
  return EXIT.ok;
}

/**
 * The readable view: with `pager`, paged as git pages (the rest of the conversation, until the
 * reader quits); else, or when no pager runs, the one page and on stderr where the next starts.
 */
async function printReadable(
  page: Page,
  paging: Paging,
  view: View,
  options: { env: Env; heading: boolean; pager: boolean },
): Promise<number> {
  const { env, heading } = options;
  if (options.pager && await pageThrough(page, paging, view, { env, heading })) return EXIT.ok;
  view.io.out(renderPage(page, view, heading));
  if (page.next !== null) {
    view.io.err(`more: logbook show ${safeText(page.conversation.id)} --after ${page.next}\n`);
  }
  return EXIT.ok;
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
