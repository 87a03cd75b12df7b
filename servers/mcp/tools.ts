// What `logbook mcp` offers an agent: search its history, read a conversation a page at a time,
// list a project's recent conversations. Each tool takes its arguments as the model sends them,
// answers with text a model reads well (and the same data as structured content), and reads the
// store only through the gate: nothing it returns holds a secret the gate redacts.

import type { Context } from "../../lib/context.ts";
import { redactorFor } from "../../lib/context.ts";
import type { Sql } from "postgres";
import {
  FilterError,
  projectOfNamed,
  resolveSearch,
  resolveTeamSearch,
  type SearchInput,
} from "../../lib/filters.ts";
import { connectTeam, teamError } from "../../lib/team/db.ts";
import { teamSearch } from "../../lib/team/search.ts";
import { plural } from "../../lib/format.ts";
import type { Agent } from "../../lib/agents.ts";
import { FILTER_NAMES, type FilterValues } from "../../lib/filters_table.ts";
import { READERS } from "../../lib/agents.ts";
import { withWordForms } from "../../lib/store/forgive.ts";
import {
  contextStart,
  findConversation,
  pageConversation,
  questionOf,
  recentConversations,
  type RecordJson,
} from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import { type ConversationJson, conversationJson, TextDeriver } from "../../lib/store/records.ts";
import { explainNoMatch, type Remedy } from "../../lib/store/no_match.ts";
import {
  budgetMsFrom,
  search,
  type SearchHit,
  SearchLimitError,
  SearchStoppedError,
} from "../../lib/store/search.ts";

/** Most characters of conversation text one `read_conversation` page returns. */
export const PAGE_CHARS = 24_000;
/** Most characters of one record shown on a page; the rest is cut, with a note. */
export const RECORD_CHARS = 8_000;

/** A tool's answer: text for the model, the same facts as data, and whether it is an error. */
export interface ToolAnswer {
  text: string;
  data?: Record<string, unknown>;
  isError?: boolean;
}

/** A mistake in a tool's arguments or an id that names nothing: a tool error, never a crash. */
export class ToolError extends Error {
  override name = "ToolError";
}

/** The arguments of `search_history`: the search filters (`FILTERS`), and the tool's own. */
export interface SearchArgs extends FilterValues {
  query: string;
  all_projects?: boolean | undefined;
  limit?: number | undefined;
  team?: boolean | undefined;
  machine?: string | undefined;
}

export interface ReadArgs {
  conversation: string;
  around?: number | undefined;
  cursor?: string | undefined;
}

export interface ListArgs {
  project?: string | undefined;
  all_projects?: boolean | undefined;
  agent?: Agent | undefined;
  subagents?: boolean | undefined;
  limit?: number | undefined;
}

/**
 * The three tools over the store `open` returns (called at each tool call until it succeeds, so
 * a server started before the first capture answers once there is one); `ctx.cwd` is the agent's
 * working directory.
 */
export class HistoryTools {
  readonly #ctx: Context;
  readonly #open: () => HistoryStore;
  #opened: HistoryStore | undefined;

  constructor(ctx: Context, open: () => HistoryStore) {
    this.#ctx = ctx;
    this.#open = open;
  }

  #team: Sql | undefined;

  /** Closes the store and the team connection, if they were opened. */
  async close(): Promise<void> {
    this.#opened?.close();
    this.#opened = undefined;
    await this.#team?.end({ timeout: 5 });
    this.#team = undefined;
  }

  /** `search_history` with `team`: the team database (see `logbook push`), hits marked by machine. */
  async searchTeamHistory(args: SearchArgs): Promise<ToolAnswer> {
    const startedAt = Date.now();
    const url = this.#ctx.config.team?.url;
    if (!url) {
      throw new ToolError(
        'No team database is configured: add "team": {"url": "postgres://…"} to logbook\'s ' +
          "config, or set LOGBOOK_TEAM_URL",
      );
    }
    if (args.session !== undefined) throw new ToolError('"session" cannot be used with "team"');
    let options;
    try {
      options = resolveTeamSearch(inputOf(args), this.#ctx);
    } catch (err) {
      if (err instanceof FilterError) throw new ToolError(`"${err.field}": ${err.message}`);
      throw err;
    }
    this.#team ??= await connectTeam(url);
    let result;
    try {
      result = await teamSearch(this.#team, redactorFor(this.#ctx), {
        ...options,
        ...(args.machine ? { machine: args.machine } : {}),
        budgetMs: budgetMsFrom(this.#ctx.env),
        startedAt,
        forgive: "fallback",
      });
    } catch (err) {
      if (err instanceof SearchLimitError) throw new ToolError(err.message);
      if (err instanceof SearchStoppedError) {
        const note = sentence(err.message);
        return {
          text: `Note: ${note}\nNo hits in time in the team database.`,
          data: { hits: [], more: false, stopped: true, note },
        };
      }
      throw new ToolError(teamError(err, url).message);
    }
    const lines = result.hits.map((hit, i) =>
      `${i + 1}. [${hit.machine}] ${hit.conversation} · ${quoted(hit.title)} · ${hit.agent} · ${
        hit.timestamp ?? "undated"
      } · ${hit.role ? `${hit.role} ` : ""}${hit.kind}\n   ${oneLine(hit.snippet)}`
    );
    const notes = [result.note, result.forgiven?.note ?? null].filter((n) => n !== null);
    const note = notes.length ? notes.map((n) => sentence(n)).join(" ") : null;
    const lead = note ? `Note: ${note}\n` : "";
    return {
      text: lines.length
        ? `${lead}${plural(lines.length, "hit")} in the team database:\n\n${lines.join("\n")}`
        : `${lead}No hits in the team database.${
          result.suggestion ? ` Indexed words begin with it: try "${result.suggestion}".` : ""
        }`,
      data: {
        hits: result.hits,
        more: result.next !== null,
        mode: result.mode,
        stopped: false,
        note,
        suggestion: result.suggestion,
        ...(result.forgiven ? { forgiven: result.forgiven } : {}),
      },
    };
  }

  get #store(): HistoryStore {
    if (!this.#opened) {
      try {
        this.#opened = this.#open();
      } catch (err) {
        throw new ToolError((err as Error).message);
      }
    }
    return this.#opened;
  }

  /**
   * `search_history`: ranked hits, each with what `read_conversation` needs to open it. Past its
   * budget, the hits the search had, with a note saying what they are (never a tool error).
   */
  async searchHistory(args: SearchArgs): Promise<ToolAnswer> {
    const startedAt = this.#ctx.now();
    if (args.project !== undefined && args.all_projects) {
      throw new ToolError('Give either "project" or "all_projects", not both');
    }
    const input = inputOf(args);
    if (!input.q) throw new ToolError('"query" is empty: give the words to look for');
    let options;
    try {
      options = resolveSearch(input, this.#ctx, this.#store);
    } catch (err) {
      if (err instanceof FilterError) throw new ToolError(`"${err.field}": ${err.message}`);
      throw err;
    }
    options.budgetMs = budgetMsFrom(this.#ctx.env);
    options.startedAt = startedAt;
    options.forgive = "fallback";
    const redact = redactorFor(this.#ctx);
    const scope = options.project ? `in project ${redact(options.project)}` : "in all projects";
    const store = this.#store;
    let result;
    try {
      result = await withWordForms(() => search(store, READERS, redact, options, this.#ctx.now));
    } catch (err) {
      if (err instanceof SearchLimitError) throw new ToolError(err.message);
      if (!(err instanceof SearchStoppedError)) throw err;
      // Out of time before any hit: not an error of the call, and not "no match" either.
      const note = sentence(err.message);
      return {
        text: `Note: ${note}\nNo hits in time ${scope}.`,
        data: { hits: [], more: false, mode: "fts", stopped: true, note },
      };
    }
    const hits = result.hits.map(hitData);
    const lines = hits.map(hitLine);
    // Why the index could not answer (a literal scan), what was searched instead of the words
    // as given, and what a stopped search's hits are.
    const notes = [result.note, result.forgiven?.note ?? null, result.stopNote]
      .filter((n): n is string => n !== null)
      .map((n) => sentence(n));
    const note = notes.length ? notes.join(" ") : null;
    const lead = note ? `Note: ${note}\n` : "";
    const more = result.next !== null ? " (more exist: raise limit or narrow the query)" : "";
    const text = hits.length
      ? `${lead}${hits.length} hit${hits.length === 1 ? "" : "s"} ${scope}${more}:\n\n${
        lines.join("\n")
      }\n\nOpen one with read_conversation {"conversation": "<id>", "around": <record>}.`
      : `${lead}${
        sentence(
          explainNoMatch(this.#store, input, options, result.ftsQuery, redact, ARGUMENT_REMEDY)
            .text,
        )
      }`;
    return {
      text,
      data: {
        hits,
        more: result.next !== null,
        mode: result.mode,
        stopped: result.stopped,
        note,
        ...(result.forgiven ? { forgiven: result.forgiven } : {}),
      },
    };
  }

  /** `read_conversation`: one page as readable text, and the cursor of the next page. */
  readConversation(args: ReadArgs): ToolAnswer {
    if (args.around !== undefined && args.cursor !== undefined) {
      throw new ToolError('Give either "around" or "cursor", not both');
    }
    const conversation = this.#find(args.conversation);
    const deriver = new TextDeriver(this.#store, READERS, redactorFor(this.#ctx));
    const parts: string[] = [];
    let shown = 0;
    let after = 0;
    if (args.cursor !== undefined) {
      if (!/^\d{1,15}$/.test(args.cursor)) {
        throw new ToolError('"cursor" is not one this tool gave: pass the "next" of a page');
      }
      after = Number(args.cursor);
    } else if (args.around !== undefined) {
      let context;
      try {
        // What leads to the hit fits in the text of one page (raw bytes are never fewer).
        context = contextStart(this.#store, deriver, conversation, args.around, {
          budget: PAGE_CHARS / 2,
        });
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        throw new ToolError(
          `Record ${args.around} is not in conversation ${conversation.key}: use the record ` +
            "number of a search hit of that conversation",
        );
      }
      after = context.after;
      const question = questionOf(this.#store, deriver, conversation, context);
      if (question) {
        shown++;
        parts.push(
          recordText(question.record, args.around),
          `(… ${
            plural(question.skipped, "earlier record")
          } not shown: read them with "cursor": "${question.record.id}")`,
        );
      }
    }
    let chars = parts.reduce((n, part) => n + part.length, 0);
    let next: number | null = after;
    // Pages of the store are bounded in records and bytes; the text is bounded here.
    while (next !== null && chars < PAGE_CHARS) {
      const page = pageConversation(this.#store, deriver, conversation, {
        after: next,
        limit: 50,
      });
      next = page.next;
      for (const [i, record] of page.records.entries()) {
        if (chars >= PAGE_CHARS) {
          next = page.records[i - 1]!.id;
          break;
        }
        const text = recordText(record, args.around);
        if (text) {
          parts.push(text);
          chars += text.length;
          shown++;
        }
      }
    }
    const c = conversationJson(conversation, (text) => deriver.redact(text));
    const header = describe(c);
    const footer = next === null
      ? "(end of conversation)"
      : `(more follows: call read_conversation with "cursor": "${next}")`;
    return {
      text: `${header}\n\n${
        parts.join("\n\n") || "(no readable records on this page)"
      }\n\n${footer}`,
      data: { conversation: c, records: shown, next: next === null ? null : String(next) },
    };
  }

  /** `list_conversations`: a project's recent conversations, newest first. */
  listConversations(args: ListArgs): ToolAnswer {
    if (args.project !== undefined && args.all_projects) {
      throw new ToolError('Give either "project" or "all_projects", not both');
    }
    // The model sees projects as shown (through the gate) and may name one so.
    const project = args.all_projects
      ? undefined
      : projectOfNamed(args.project ?? ".", this.#ctx, this.#store);
    const redact = redactorFor(this.#ctx);
    const list = recentConversations(this.#store, redact, {
      ...(project !== undefined ? { project } : {}),
      ...(args.agent ? { agent: args.agent } : {}),
      ...(args.subagents ? { subagents: true } : {}),
      limit: args.limit ?? 20,
    });
    const scope = project ? `in project ${redact(project)}` : "in all projects";
    const rows = list.map((c, i) =>
      `${i + 1}. ${c.id} · ${quoted(c.title)} · ${c.agent} · ${c.firstTimestamp ?? "?"} → ${
        c.lastTimestamp ?? "?"
      } · ${c.messages} message${c.messages === 1 ? "" : "s"}${
        project ? "" : ` · ${c.project ?? c.cwd ?? "no project"}`
      }`
    );
    return {
      text: list.length
        ? `${list.length} recent conversation${list.length === 1 ? "" : "s"} ${scope}:\n\n${
          rows.join("\n")
        }`
        : `No conversations ${scope}.${project ? ' Try "all_projects": true.' : ""}`,
      data: {
        conversations: list.map((c) => ({
          id: c.id,
          title: c.title,
          agent: c.agent,
          project: c.project,
          first: c.firstTimestamp,
          last: c.lastTimestamp,
          messages: c.messages,
        })),
      },
    };
  }

  #find(id: string) {
    try {
      return findConversation(this.#store, id);
    } catch (err) {
      throw new ToolError((err as Error).message);
    }
  }
}

function describe(c: ConversationJson): string {
  const span = `${c.firstTimestamp ?? "?"} → ${c.lastTimestamp ?? "?"}`;
  return `Conversation ${c.id} · ${quoted(c.title)} · ${c.agent} · project ${
    c.project ?? c.cwd ?? "unknown"
  }${c.branch ? ` · branch ${c.branch}` : ""} · ${span} · ${c.messages} messages${
    c.parent ? ` · child of ${c.parent}` : ""
  }`;
}

/** One record as a model reads it; meta records and empty texts are left out. */
function recordText(record: RecordJson, around: number | undefined): string {
  const text = record.text.trim();
  if (record.kind === "meta" || !text) return "";
  const mark = record.id === around ? " ← the hit" : "";
  const when = record.timestamp ? ` ${record.timestamp.slice(0, 16).replace("T", " ")}` : "";
  if (record.kind === "tool_call") {
    return `[#${record.id}${when} tool call${mark}] ${cut(firstLines(text, 3), 600)}`;
  }
  if (record.kind === "tool_result") {
    return `[#${record.id}${when} tool result, ${text.length} chars${mark}] ${
      cut(firstLines(text, 6), 800)
    }`;
  }
  const who = record.kind === "message" ? (record.role ?? "message") : record.kind;
  return `[#${record.id}${when} ${who}${mark}]\n${cut(text, RECORD_CHARS)}`;
}

function cut(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… (${text.length - max} more characters not shown)`;
}

function firstLines(text: string, n: number): string {
  const lines = text.split("\n");
  return lines.length <= n ? text : `${lines.slice(0, n).join("\n")}\n…`;
}

/** A hit as `search_history` gives it: what `read_conversation` needs to open it, and more. */
function hitData(hit: SearchHit) {
  return {
    conversation: hit.conversation,
    record: hit.record,
    title: hit.title,
    agent: hit.agent,
    project: hit.project,
    date: hit.timestamp,
    role: hit.role,
    kind: hit.kind,
    snippet: hit.snippet,
    ...(hit.matched ? { matched: hit.matched } : {}),
  };
}

/** The `i`th hit (from 0) as a numbered line of `search_history`'s text, its snippet below. */
function hitLine(hit: ReturnType<typeof hitData>, i: number): string {
  return `${i + 1}. ${hit.conversation} · ${quoted(hit.title)} · ${hit.agent} · ${
    hit.date ?? "undated"
  } · ${hit.role ? `${hit.role} ` : ""}${hit.kind} · record ${hit.record}\n   ${
    oneLine(hit.snippet)
  }`;
}

/**
 * The search input of a `search_history` call: its query and filters (the current project unless
 * `all_projects`), 10 hits unless `limit` says.
 */
function inputOf(args: SearchArgs): SearchInput {
  const input: SearchInput = { q: args.query.trim(), limit: args.limit ?? 10 };
  const set = input as unknown as Record<string, unknown>;
  for (const name of FILTER_NAMES) {
    if (args[name] !== undefined) set[name] = args[name];
  }
  if (args.all_projects) delete input.project;
  else input.project ??= ".";
  return input;
}

/** Leaving a filter out of a `search_history` call. */
const ARGUMENT_REMEDY: Remedy = (name) =>
  name === "project" ? 'pass "all_projects": true' : `leave out "${name}"`;

/** `text` as a sentence: a capital first, a period last. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}${
    /[.!?]$/.test(trimmed) ? "" : "."
  }`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function quoted(title: string | null): string {
  return title ? `"${oneLine(title)}"` : "(untitled)";
}
