// The full-screen search of `logbook` alone on a terminal and of `search -i`: the box searches on
// every key (filters typed inline: `agent:codex since:7d`), forgiving as you type (the word being
// typed is also a prefix, other forms are found, a typo is corrected: lib/store/forgive.ts; the
// status line says what was searched when the words as typed found nothing), one row per hit,
// the selected hit in context below; Enter pages the conversation at the hit and comes back,
// Ctrl-O resumes it in its own agent, Ctrl-F forks it into a logbook session (in its own agent
// when no model is configured), Ctrl-Y copies the command that resumes it (OSC 52), Esc or
// Ctrl-C leaves the terminal as it was.

import { join } from "../../lib/path.ts";
import type { Env } from "../../lib/env.ts";
import { type Context, gateFor, loadContext, openStore, redactorFor } from "../../lib/context.ts";
import type { Redactor } from "../../lib/gate/secrets.ts";
import {
  FilterError,
  type InputIssue,
  parseSearchInput,
  projectOfNamed,
  resolveSearch,
  splitInline,
} from "../../lib/filters.ts";
import { formatCount, plural } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { forkRow } from "../../lib/sessions/fork.ts";
import { SessionStore } from "../../lib/sessions/records.ts";
import {
  commandLine,
  findRowAnywhere,
  forkCommand,
  type PickerRow,
  resumeCommand,
  type RunnableCommand,
} from "../../lib/sessions/resume.ts";
import { READERS } from "../../lib/agents.ts";
import {
  contextStart,
  findConversation,
  type Page,
  pageConversation,
  type PageOptions,
  type Question,
  questionOf,
  recentConversationRows,
} from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import { conversationJson, type ConversationRow, TextDeriver } from "../../lib/store/records.ts";
import { explainNoMatch, INLINE_REMEDY } from "../../lib/store/no_match.ts";
import { loadStemmer } from "../../lib/store/vocab.ts";
import {
  search,
  SearchLimitError,
  type SearchOptions,
  SearchStoppedError,
} from "../../lib/store/search.ts";
import { pageThrough, type View } from "./conversation_view.ts";
import type { Io } from "./io.ts";
import { displayName, noModelForkNote, runNative } from "./native.ts";
import { safeIo } from "./safe_io.ts";
import { safeText } from "../../lib/safe_text.ts";
import { type Key, Screen } from "./screen.ts";
import {
  type Item,
  layout,
  type Line,
  previewLines,
  render,
  scrolled,
  type SearchModel,
  type Status,
  statusLines,
} from "./search_view.ts";
import { terminalColumns } from "./wrap.ts";

/** How long one keystroke's search may take before it stops and says so (the store takes ~2 ms). */
const KEYSTROKE_BUDGET_MS = 150;

/** The hint the status line shows while the box is empty. */
const EMPTY_HINT = "Recent conversations: type to search (filters too: agent:codex since:7d)";

/** What opens the screen. */
export interface SearchScreenOptions {
  env: Env;
  /** This terminal (the screen is drawn on its stdout). */
  io: Io;
  /** What the box holds at first: words and inline filters. */
  box: string;
  /** `--subagents`/`--no-subagents`, which has no inline form. */
  subagents?: boolean;
}

/**
 * Runs the search screen until the user leaves it (exit status 0) or hands the terminal to a
 * session (its exit status). The store must exist; it is opened once, read-only.
 */
export async function interactiveSearch(options: SearchScreenOptions): Promise<number> {
  let app: SearchScreen | undefined;
  const ctx = loadContext({
    env: options.env,
    agent: "logbook",
    onStall: (line) => app?.note(line),
    // Before the screen opens: on stderr, where they stay after it closes.
    onWarning: options.io.err,
  });
  const store = openStore(ctx, { mustExist: true, readOnly: true });
  try {
    // Every keystroke's search finds other forms of the words: the stemmer they need, at once.
    await loadStemmer();
    return await new Promise<number>((resolve, reject) => {
      app = new SearchScreen(ctx, store, options, { resolve, reject });
      app.start();
    });
  } finally {
    app?.close();
    store.close();
  }
}

/** How the screen ends: with an exit status, or with an error for the command to report. */
interface Ending {
  resolve(code: number): void;
  reject(err: unknown): void;
}

/** The screen's state and what each key does to it. */
export class SearchScreen {
  readonly #ctx: Context;
  readonly #store: HistoryStore;
  readonly #io: Io;
  readonly #env: Env;
  readonly #subagents: boolean | undefined;
  readonly #ending: Ending;
  readonly #redact: Redactor;
  readonly #deriver: TextDeriver;
  readonly #home: string | undefined;
  #screen: Screen | undefined;

  #input: string[] = [];
  #cursor = 0;
  #items: Item[] = [];
  #selected = 0;
  #top = 0;
  #status: Status = { text: EMPTY_HINT, tone: "info" };
  #count = "";
  /** Where the next page of hits starts, and what it searches by. */
  #more: { options: SearchOptions; offset: number } | null = null;
  #total: number | null = null;
  /** The box as the list was last found for (a list found for another box is not shown). */
  #answered: string | null = null;
  /** The redraw (and search) scheduled for once the keys typed are handled, until it has run. */
  #scheduled: Promise<void> | null = null;
  #busy = false;
  #ended = false;
  #closed = false;
  readonly #pages = new Map<string, Page | string>();

  constructor(ctx: Context, store: HistoryStore, options: SearchScreenOptions, ending: Ending) {
    this.#ctx = ctx;
    this.#store = store;
    this.#io = options.io;
    this.#env = options.env;
    this.#subagents = options.subagents;
    this.#ending = ending;
    this.#redact = redactorFor(ctx);
    this.#deriver = new TextDeriver(store, READERS, this.#redact);
    this.#home = homeDir(options.env);
    this.#input = [...options.box];
    this.#cursor = this.#input.length;
  }

  /** Takes the terminal and shows the first answer. */
  start(): void {
    this.#screen = Screen.open((text) => this.#io.out(text), {
      key: (key) => this.handle(key),
      resize: () => this.#guard(() => this.#refresh()),
    });
    this.#query();
    this.#draw();
  }

  /** Gives the terminal back (safe to call twice); nothing is searched or drawn after it. */
  close(): void {
    this.#closed = true;
    this.#screen?.close();
  }

  /** A line for the status line (a stall suspected while the screen is up). */
  note(line: string): void {
    this.#status = { text: line, tone: "note" };
    this.#schedule(false);
  }

  /** Handles a key as the screen reports it (what the screen does on each key). */
  handle(key: Key): void {
    this.#guard(() => this.#key(key));
  }

  /** The screen as it would be drawn at `cols` × `rows` now. */
  render(cols: number, rows: number): ReturnType<typeof render> {
    return render(this.#model(cols, rows), cols, rows, this.#io.color);
  }

  #model(cols: number, rows: number): SearchModel {
    const status = statusLines(this.#status, this.#count, Math.max(1, cols), rows).length;
    const { preview } = layout(rows, status);
    const item = this.#items[this.#selected];
    return {
      input: this.#input.join(""),
      cursor: this.#cursor,
      items: this.#items,
      selected: this.#selected,
      top: this.#top,
      status: this.#status,
      count: this.#count,
      preview: item ? this.#preview(item, Math.max(1, cols), preview) : [],
      now: this.#ctx.now(),
      home: this.#home,
    };
  }

  /** Runs `fn`; an exception ends the screen (the command reports it). */
  #guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#end(Promise.reject(err));
    }
  }

  #end(result: Promise<number>): void {
    if (this.#ended) return;
    this.#ended = true;
    result.then(this.#ending.resolve, this.#ending.reject);
  }

  #key(key: Key): void {
    if (this.#busy || this.#ended) return;
    const ctrl = key.ctrl && !key.meta;
    const name = key.name;
    if (name === "char" || name === "paste") {
      this.#insert(name === "paste" ? key.text.replace(/[\r\n\t]+/g, " ") : key.text);
    } else if (name === "escape" || (ctrl && name === "c")) {
      this.#leave();
    } else if (ctrl && name === "d" && this.#input.length === 0) {
      this.#leave();
    } else if (name === "return" || name === "enter") {
      this.#act((item) => this.#open(item));
    } else if (ctrl && name === "o") {
      this.#act((item) => this.#resume(item));
    } else if (ctrl && name === "f") {
      this.#act((item) => this.#fork(item));
    } else if (ctrl && name === "y") {
      this.#act((item) => this.#copy(item));
    } else if (name === "up" || (ctrl && name === "p")) {
      this.#move(-1);
    } else if (name === "down" || (ctrl && name === "n") || name === "tab") {
      this.#move(1);
    } else if (name === "pageup") {
      this.#move(-this.#listRows());
    } else if (name === "pagedown") {
      this.#move(this.#listRows());
    } else if (ctrl && name === "l") {
      this.#refresh();
    } else if (this.#edit(key)) {
      this.#schedule(true);
    }
  }

  /** The editing keys of the box; true when the box changed. */
  #edit(key: Key): boolean {
    const ctrl = key.ctrl && !key.meta;
    const name = key.name;
    const before = this.#input.join("");
    if ((name === "backspace" && key.meta) || (ctrl && name === "w")) this.#deleteWord();
    else if (name === "backspace" || (ctrl && name === "h")) {
      if (this.#cursor > 0) this.#input.splice(--this.#cursor, 1);
    } else if (name === "delete" || (ctrl && name === "d")) {
      this.#input.splice(this.#cursor, 1);
    } else if (ctrl && name === "u") {
      this.#input.splice(0, this.#cursor);
      this.#cursor = 0;
    } else if (ctrl && name === "k") {
      this.#input.splice(this.#cursor);
    } else if (name === "left" || (ctrl && name === "b")) {
      this.#cursor = Math.max(0, this.#cursor - 1);
      this.#schedule(false);
    } else if (name === "right") {
      this.#cursor = Math.min(this.#input.length, this.#cursor + 1);
      this.#schedule(false);
    } else if (name === "home" || (ctrl && name === "a")) {
      this.#cursor = 0;
      this.#schedule(false);
    } else if (name === "end" || (ctrl && name === "e")) {
      this.#cursor = this.#input.length;
      this.#schedule(false);
    }
    return this.#input.join("") !== before;
  }

  #insert(text: string): void {
    // Only printable characters go into the box: it is drawn as typed.
    // deno-lint-ignore no-control-regex -- control characters are exactly what is dropped
    const chars = [...text.replace(/[\0-\x1f\x7f-\x9f]/g, "")];
    if (!chars.length) return;
    this.#input.splice(this.#cursor, 0, ...chars);
    this.#cursor += chars.length;
    this.#schedule(true);
  }

  #deleteWord(): void {
    let start = this.#cursor;
    while (start > 0 && this.#input[start - 1] === " ") start--;
    while (start > 0 && this.#input[start - 1] !== " ") start--;
    this.#input.splice(start, this.#cursor - start);
    this.#cursor = start;
  }

  #move(by: number): void {
    if (!this.#items.length) return;
    let target = this.#selected + by;
    if (target >= this.#items.length && this.#more) {
      this.#fetchMore(target - this.#items.length + 1);
    }
    target = Math.max(0, Math.min(this.#items.length - 1, target));
    this.#selected = target;
    this.#top = scrolled(this.#top, this.#selected, this.#listRows());
    this.#schedule(false);
  }

  #listRows(): number {
    return layout(this.#size().rows).list;
  }

  #size(): { columns: number; rows: number } {
    return this.#screen?.size ?? { columns: 80, rows: 24 };
  }

  /**
   * Redraws (and, when the box changed, searches again) once the keys already typed are all
   * handled: a burst of keys (a paste, fast typing) costs one search, for the box as it ends.
   */
  #schedule(search: boolean): void {
    if (search) this.#answered = null;
    this.#scheduled ??= new Promise((done) =>
      setTimeout(() => {
        this.#scheduled = null;
        try {
          this.#guard(() => {
            if (this.#ended || this.#busy || this.#closed) return;
            this.#query();
            this.#draw();
          });
        } finally {
          done();
        }
      }, 0)
    );
  }

  /** Resolves once the keys handled so far are answered: searched, when they asked it, and drawn. */
  settled(): Promise<void> {
    return this.#scheduled ?? Promise.resolve();
  }

  /**
   * Draws the whole screen again (a new size, back from the pager, Ctrl-L), keeping what is
   * typed, found and selected; a taller list is filled from the next page of hits.
   */
  #refresh(): void {
    const rows = this.#listRows();
    const wanted = this.#top + rows - this.#items.length;
    if (wanted > 0 && this.#more && this.#answered === this.#input.join("")) {
      this.#fetchMore(wanted);
    }
    this.#top = scrolled(
      Math.max(0, Math.min(this.#top, this.#items.length - rows)),
      this.#selected,
      rows,
    );
    this.#draw();
  }

  #draw(): void {
    if (!this.#screen || this.#ended) return;
    const { columns, rows } = this.#size();
    const { lines, cursor } = this.render(columns, rows);
    this.#screen.draw(lines, cursor);
  }

  /** Searches for what the box holds, unless the list already answers it. */
  #query(): void {
    const box = this.#input.join("");
    if (this.#answered === box) return;
    this.#answered = box;
    const rows = this.#listRows();
    const { text, inline } = splitInline(box);
    // Filters alone are checked as they would be with words (the query is not used).
    const parsed = parseSearchInput({ ...inline, q: text || "x", limit: rows });
    if (!parsed.success) {
      this.#status = { text: issueText(parsed.error, inline), tone: "error" };
      return;
    }
    const input = {
      ...parsed.data,
      ...(this.#subagents !== undefined ? { subagents: this.#subagents } : {}),
    };
    try {
      if (!text) {
        this.#recent(input.project, input.agent, rows, Object.keys(inline));
        return;
      }
      const options = resolveSearch(input, this.#ctx, this.#store);
      options.limit = rows;
      options.budgetMs = KEYSTROKE_BUDGET_MS;
      options.startedAt = this.#ctx.now();
      options.forgive = "typing";
      const page = search(this.#store, READERS, this.#redact, options, this.#ctx.now);
      this.#items = page.hits.map((hit, i) => ({
        conversation: hit.conversation,
        record: hit.record,
        agent: hit.agent,
        project: hit.project ?? hit.cwd,
        when: hit.timestamp === null ? null : Date.parse(hit.timestamp),
        title: hit.title,
        snippet: hit.snippet,
        ranges: page.highlights[i] ?? [],
      }));
      this.#more = page.next === null ? null : { options, offset: page.next };
      this.#total = page.total;
      this.#selected = 0;
      this.#top = 0;
      this.#count = this.#countText("hit");
      const note = page.note ??
        (page.mode === "literal" ? "not FTS5 syntax: matched as a literal substring" : null);
      if (!page.hits.length) {
        const why = explainNoMatch(
          this.#store,
          input,
          options,
          page.ftsQuery,
          this.#redact,
          INLINE_REMEDY,
          { budgetMs: KEYSTROKE_BUDGET_MS, now: this.#ctx.now },
        );
        this.#status = { text: note ? `${why.text} (${note})` : why.text, tone: "note" };
      } else if (page.stopNote) {
        // Out of time: these are not the whole answer, and the note says what they are.
        this.#status = { text: page.stopNote, tone: "note" };
      } else if (note) this.#status = { text: upperFirst(note), tone: "note" };
      else if (page.forgiven) this.#status = { text: upperFirst(page.forgiven.note), tone: "note" };
      else this.#status = { text: "", tone: "info" };
    } catch (err) {
      if (err instanceof FilterError) {
        this.#status = { text: `${err.field}: ${err.message}`, tone: "error" };
      } else if (err instanceof SearchLimitError || err instanceof SearchStoppedError) {
        this.#status = { text: err.message, tone: "error" };
      } else throw err;
    }
  }

  /** With no words in the box: the newest conversations (of the project and agent given). */
  #recent(
    project: string | undefined,
    agent: SearchOptions["agent"],
    rows: number,
    filters: string[],
  ): void {
    const { rows: found, total } = recentConversationRows(this.#store, {
      ...(project !== undefined
        ? { project: projectOfNamed(project, this.#ctx, this.#store) }
        : {}),
      ...(agent !== undefined ? { agent } : {}),
      limit: Math.max(rows, 50),
    });
    this.#items = found.map((row) => {
      const c = conversationJson(row, this.#redact);
      return {
        conversation: row.key,
        record: null,
        agent: c.agent,
        project: c.project ?? c.cwd,
        when: row.last_ts ?? row.first_ts,
        title: c.title,
        snippet: "",
        ranges: [],
        messages: c.messages,
      };
    });
    this.#more = null;
    this.#total = total;
    this.#selected = 0;
    this.#top = 0;
    this.#count = total === found.length
      ? plural(total, "conversation")
      : `${formatCount(found.length)} of ${plural(total, "conversation")}`;
    const unused = filters.filter((f) => f !== "project" && f !== "agent");
    this.#status = {
      text: unused.length
        ? `Recent conversations; ${
          unused.map((f) => `${f}:`).join(" ")
        } narrows a search: type words`
        : EMPTY_HINT,
      tone: "info",
    };
  }

  /** The next page of hits, when the selection moves past the last one found. */
  #fetchMore(wanted: number): void {
    const more = this.#more;
    if (!more) return;
    try {
      const page = search(this.#store, READERS, this.#redact, {
        ...more.options,
        offset: more.offset,
        limit: Math.max(wanted, this.#listRows()),
        startedAt: this.#ctx.now(),
      }, this.#ctx.now);
      page.hits.forEach((hit, i) =>
        this.#items.push({
          conversation: hit.conversation,
          record: hit.record,
          agent: hit.agent,
          project: hit.project ?? hit.cwd,
          when: hit.timestamp === null ? null : Date.parse(hit.timestamp),
          title: hit.title,
          snippet: hit.snippet,
          ranges: page.highlights[i] ?? [],
        })
      );
      this.#more = page.next === null ? null : { options: more.options, offset: page.next };
      if (page.total !== null) this.#total = page.total;
      this.#count = this.#countText("hit");
      if (page.stopNote) this.#status = { text: page.stopNote, tone: "note" };
    } catch (err) {
      if (!(err instanceof SearchStoppedError)) throw err;
      this.#more = null;
      this.#status = { text: err.message, tone: "error" };
    }
  }

  #countText(noun: string): string {
    const total = this.#total;
    if (!this.#items.length) return "";
    if (total === null || total === this.#items.length) {
      return this.#more
        ? `${formatCount(this.#items.length)}+ ${noun}s`
        : plural(total ?? this.#items.length, noun);
    }
    return `${formatCount(this.#items.length)} of ${formatCount(total)} ${noun}s`;
  }

  /** The selected hit's conversation around the hit, for the preview pane (kept per hit). */
  #preview(item: Item, width: number, height: number): Line[] {
    const key = `${item.conversation}#${item.record ?? ""}`;
    let page = this.#pages.get(key);
    if (page === undefined) {
      try {
        page = this.#pageAt(item).page;
      } catch (err) {
        page = err instanceof Error ? err.message : String(err);
      }
      if (this.#pages.size > 200) this.#pages.clear();
      this.#pages.set(key, page);
    }
    if (typeof page === "string") return [[{ text: safeText(page), style: "error" }]];
    const marks = item.ranges.map(([a, b]) => item.snippet.slice(a, b));
    return previewLines(page, item.record, marks, width, height);
  }

  /** The page that opens a conversation at its hit (as `show --around`), or at its start. */
  #pageAt(item: Item): {
    page: Page;
    options: PageOptions;
    conversation: ConversationRow;
    question: Question;
  } {
    const conversation = findConversation(this.#store, item.conversation);
    const context = item.record === null
      ? null
      : contextStart(this.#store, this.#deriver, conversation, item.record);
    const options: PageOptions = context === null ? {} : { after: context.after };
    const page = pageConversation(this.#store, this.#deriver, conversation, options);
    const question = context === null
      ? null
      : questionOf(this.#store, this.#deriver, conversation, context);
    return { page, options, conversation, question };
  }

  /** Runs an action on the selected item, once the box's answer is up to date. */
  #act(action: (item: Item) => void | Promise<void>): void {
    if (!this.#items.length || this.#answered !== this.#input.join("")) {
      // Keys typed with it are answered first: the action is for the list they make.
      this.#query();
    }
    const item = this.#items[this.#selected];
    if (!item) {
      this.#status = { text: "Nothing selected: type words to search", tone: "note" };
      this.#draw();
      return;
    }
    const result = action(item);
    if (result instanceof Promise) {
      this.#busy = true;
      result.then(
        () => {
          this.#busy = false;
          this.#draw();
        },
        (err) => {
          this.#busy = false;
          this.#end(Promise.reject(err));
        },
      );
    } else this.#draw();
  }

  /** Enter: the conversation in the pager at the hit, as `show <id> --around <record>`. */
  async #open(item: Item): Promise<void> {
    const { page, options, conversation, question } = this.#pageAt(item);
    const view: View = {
      io: this.#io,
      all: false,
      width: terminalColumns(this.#env),
      hit: item.record,
      question,
    };
    const paging = { store: this.#store, deriver: this.#deriver, conversation, options };
    // Without F, so a short conversation stays up until the reader quits the pager; opened
    // where the hit shows, the question above it.
    const paged = await this.#screen!.away(() =>
      pageThrough(page, paging, view, {
        env: this.#env,
        heading: true,
        less: "RX",
        rows: this.#size().rows,
      })
    );
    this.#status = paged ? { text: "", tone: "info" } : {
      text: `No pager ($PAGER is empty or cat): logbook show ${item.conversation}${
        item.record === null ? "" : ` --around ${item.record}`
      }`,
      tone: "note",
    };
  }

  /** The row that resumes an item: its session's, for a subagent's conversation. */
  #row(item: Item, verb: string): { row: PickerRow; sessions: SessionStore } | null {
    const sessions = new SessionStore(this.#ctx.paths);
    try {
      const conversation = findConversation(this.#store, item.conversation);
      const key = conversation.subagent && conversation.parent_key
        ? conversation.parent_key
        : conversation.key;
      const row = findRowAnywhere({ rows: [], corrupt: [] }, key, verb, {
        sessions,
        store: this.#store,
        redact: (text) => this.#redact(text),
      });
      return { row, sessions };
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      this.#status = { text: this.#redact(err.message), tone: "error" };
      return null;
    }
  }

  /** Ctrl-O: resumes the conversation in its own agent, or a logbook session in chat. */
  async #resume(item: Item): Promise<void> {
    const found = this.#row(item, "resume");
    if (!found) return;
    const { row } = found;
    if (row.agent === "logbook") {
      if (row.manifest || !row.record) {
        this.#status = {
          text: `"${row.key}" is a manifest run: it cannot be continued`,
          tone: "error",
        };
        return;
      }
      const record = row.record;
      const opened = await this.#chat();
      if (!opened) return;
      this.#handOver(() =>
        opened.openSession(safeIo(this.#io), this.#ctx, record, opened.setup, {
          incognito: false,
          verb: "Resuming",
          recap: true,
        })
      );
      return;
    }
    const { command, note } = resumeCommand(row, this.#ctx.cwd);
    if (!onPath(command.command, this.#env)) {
      this.#status = { text: `Cannot resume: "${command.command}" is not on PATH`, tone: "error" };
      return;
    }
    this.#handOver(async () => {
      const io = safeIo(this.#io);
      if (note !== null) io.err(this.#redact(`note: ${note}\n`));
      io.err(this.#redact(`Resuming ${row.key} with: ${commandLine(command, this.#ctx.cwd)}\n`));
      return await runNative(command, row.agent);
    });
  }

  /**
   * Ctrl-F: forks the conversation into a logbook session and opens it in chat; with no model
   * configured, another agent's conversation forks in that agent instead (`#forkNatively`).
   */
  async #fork(item: Item): Promise<void> {
    const found = this.#row(item, "fork");
    if (!found) return;
    const { row } = found;
    const native = forkCommand(row, this.#ctx.cwd);
    // Opening the fork needs the model: nothing is written when it is missing.
    const opened = await this.#chat(
      native === null ? undefined : (noModel) => this.#forkNatively(row, native, noModel),
    );
    if (!opened) return;
    let record;
    try {
      record = forkRow({
        sessions: found.sessions,
        store: this.#store,
        row,
        gate: gateFor(this.#ctx),
        now: this.#ctx.now(),
      });
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      this.#status = { text: this.#redact(err.message), tone: "error" };
      return;
    }
    this.#handOver(() =>
      opened.openSession(safeIo(this.#io), this.#ctx, record, opened.setup, {
        incognito: false,
        verb: "Forked as",
      })
    );
  }

  /**
   * Ctrl-F with no model configured: the agent's own fork (`claude --resume <id>
   * --fork-session`), given the terminal; when its program is not there, why neither fork can
   * run, whole.
   */
  #forkNatively(row: PickerRow, native: RunnableCommand, noModel: Error): void {
    const { command, note } = native;
    if (!onPath(command.command, this.#env)) {
      this.#status = {
        text: this.#redact(
          `Cannot fork in ${displayName(row.agent)}: "${command.command}" is not on PATH; ` +
            `a fork into a logbook session needs a model: ${noModel.message}`,
        ),
        tone: "error",
      };
      return;
    }
    this.#handOver(async () => {
      const io = safeIo(this.#io);
      if (note !== null) io.err(this.#redact(`note: ${note}\n`));
      io.err(noModelForkNote(row));
      io.err(this.#redact(`Forking ${row.key} with: ${commandLine(command, this.#ctx.cwd)}\n`));
      return await runNative(command, row.agent, "fork");
    });
  }

  /** Ctrl-Y: the command that resumes it, to the clipboard through the terminal (OSC 52). */
  #copy(item: Item): void {
    const found = this.#row(item, "resume");
    if (!found) return;
    const { command, note } = resumeCommand(found.row, this.#ctx.cwd);
    const line = commandLine(command, this.#ctx.cwd);
    this.#screen!.send(`\x1b]52;c;${base64(line)}\x07`);
    // The command itself, to be run here; what the screen says of it, through the gate.
    this.#status = note === null
      ? { text: this.#redact(`Copied: ${line}`), tone: "info" }
      : { text: this.#redact(`Copied: ${line}\nNote: ${note}`), tone: "note" };
  }

  /**
   * The chat set-up, loaded only now (the model client is heavy), or null with the reason shown
   * whole; when no model is configured and `noModel` is given, null and `noModel` told instead.
   */
  async #chat(noModel?: (err: Error) => void) {
    const [{ chatSetup }, { ModelError }, { openSession }] = await Promise.all([
      import("../../lib/sessions/setup.ts"),
      import("../../lib/sessions/model.ts"),
      import("./open_session.ts"),
    ]);
    try {
      return { setup: chatSetup(this.#ctx, { incognito: false }), openSession };
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      if (noModel && err instanceof ModelError && err.reason === "config") noModel(err);
      else this.#status = { text: this.#redact(err.message), tone: "error" };
      return null;
    }
  }

  /** Leaves the screen for good and gives the terminal to `run`, whose status is the exit's. */
  #handOver(run: () => Promise<number>): void {
    this.#screen?.close();
    this.#end(run());
  }

  /** Esc, Ctrl-C: the terminal as it was, exit status 0. */
  #leave(): void {
    this.#screen?.close();
    this.#end(Promise.resolve(0));
  }
}

/** A box's filter problem as a sentence naming the filter. */
function issueText(issue: InputIssue, inline: Record<string, string>): string {
  if (issue.field === "q") return upperFirst(issue.message);
  const given = inline[issue.field];
  if (issue.expected !== undefined && given !== undefined) {
    return `Filter "${issue.field}:" expects ${issue.expected}, got "${given}"`;
  }
  return `Filter "${issue.field}:": ${issue.message}`;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** UTF-8 text in base64, as OSC 52 carries it. */
function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Whether `command` is a program this process could run: a path, or a name on PATH. */
function onPath(command: string, env: Env): boolean {
  const runnable = (path: string) => {
    try {
      const info = Deno.statSync(path);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return runnable(command);
  return (env.get("PATH") ?? "").split(":").some((dir) => dir && runnable(join(dir, command)));
}
