// The conversation page (`/conversations/:id`): the conversation as a chat (see `_chat.ts`) under
// a header that stays in view (title, agent, project, branch, dates, size, and the resume, fork
// and export actions), numbered pages, and a search hit (`?hit=`) shown with the question before
// it and marked.

import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { plural, tilde } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { commandLine, conversationRow, resumeCommand } from "../../lib/sessions/resume.ts";
import {
  contextStart,
  DEFAULT_PAGE_LIMIT,
  findConversation,
  type HitContext,
  pageStarts,
} from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import {
  type ConversationJson,
  type ConversationRow,
  TextDeriver,
} from "../../lib/store/records.ts";
import { pageQuery, shownPage } from "../api/conversations.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { parseId, parseQuery, queryInt } from "../_input.ts";
import type { ShownPage } from "../_redact.ts";
import { chatRecords, pairTools, shapeOf, toolLookup } from "./_chat.ts";
import { markdownRenderer } from "./_markdown.ts";
import { EXPORT_FORMATS, exportHref } from "./export.ts";
import { conversationHref, type Html, layout, projectAnchor, shortTime, time } from "./layout.ts";

/** The page sizes offered (records per page). */
const PAGE_SIZES = [10, 25, 50, 100, 200];

/** The query string of the page: paging, and the record a search hit opened. */
const viewQuery = pageQuery.extend({ hit: queryInt(1, 1e12).optional() });
type ViewQuery = z.infer<typeof viewQuery>;

/** The route. */
export const conversationPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/conversations/:id", async (c) => {
    const id = parseId(c);
    const query = parseQuery(c, viewQuery);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    // Where the page starts, its numbered neighbours, the page, and the question before the
    // hit when it lies before the page (shown first, then a gap): one store, one deriver.
    const { page, after, question, skipped, starts, resume } = withStore(
      svc,
      "conversation_pages",
      (store) => {
        const row = findConversation(store, id);
        const deriver = new TextDeriver(store, svc.adapters, svc.redact);
        const context = query.after === undefined && query.hit !== undefined
          ? hitContext(store, deriver, row, query.hit, limit)
          : null;
        const after = context?.after ?? query.after ?? 0;
        return {
          page: shownPage(svc, deriver, store, row, { ...query, after }),
          after,
          question: !context || context.question === null
            ? null
            : shownPage(svc, deriver, store, row, { after: context.question - 1, limit: 1 })
              .records[0] ?? null,
          skipped: context?.skipped ?? 0,
          starts: pageStarts(store, row.id, limit),
          resume: row.subagent ? null : resumeOf(row, svc.redact),
        };
      },
    );
    const render = await markdownRenderer();
    const home = homeDir(svc.ctx.env);
    const conv = page.conversation;
    const keepLimit = query.limit === undefined ? {} : { limit: query.limit };
    const tools = pairTools(page.records, toolLookup(svc.adapters, conv.agent, svc.redact));
    const quiet = page.records.filter((r) => shapeOf(r) === "quiet" && !tools.paired.has(r.id))
      .length;
    const nav = (where: "top" | "bottom", extra: Html | string = "") =>
      pager(page, query, after, starts, where, extra);
    const body = html`${header(conv, home, resume)}${nav("top", quietToggle(quiet))}
<section class="chat" aria-label="Messages">${
      question
        ? html`${chatRecords([question], render, { agent: conv.agent })}<p class="gap"><a href="${
          conversationHref(conv.id, { ...keepLimit, after: question.id })
        }">… ${plural(skipped, "earlier record")}</a></p>`
        : ""
    }${chatRecords(page.records, render, { hit: query.hit, tools, agent: conv.agent })}</section>
${page.next === null ? html`<p class="end" role="status">End of the conversation</p>` : ""}${
      nav("bottom")
    }`;
    return c.html(layout(conv.title ?? conv.id, "conversation", body));
  });

/**
 * The header that stays in view: the title with the resume, fork and export actions on one row,
 * the facts on the next (both one line on a phone, the facts scrolling sideways).
 */
function header(conv: ConversationJson, home: string | undefined, resume: Resume | null): Html {
  const agent = conv.agentVersion ? `${conv.agent} ${conv.agentVersion}` : conv.agent;
  const project = conv.project ?? conv.cwd;
  const facts: (Html | string)[] = [
    html`<span class="badge agent-${conv.agent}">${agent}</span>`,
    project
      ? html`<a href="/projects#${projectAnchor(project)}" title="${project}">${
        tilde(project, home)
      }</a>`
      : "no project",
  ];
  if (conv.cwd && conv.project && conv.cwd !== conv.project) {
    facts.push(html`<span title="Directory">in ${tilde(conv.cwd, home)}</span>`);
  }
  if (conv.branch) facts.push(html`<span title="Branch">⎇ ${conv.branch}</span>`);
  const span = timeSpan(conv.firstTimestamp, conv.lastTimestamp);
  if (span) facts.push(span);
  facts.push(plural(conv.messages, "message"));
  if (conv.parent) {
    facts.push(
      html`${conv.subagent ? "subagent of" : "forked from"} <a href="${
        conversationHref(conv.parent)
      }">${conv.parent}</a>`,
    );
  }
  if (conv.sourceGone) facts.push("source deleted upstream; kept here");
  const exports = EXPORT_FORMATS.map((format) =>
    html`<a href="${exportHref(conv.id, format)}" download>${EXPORT_NAMES[format]}</a>`
  );
  return html`
    <header class="conv-head">
      <div class="head-row">
        <h1 title="${conv.title ?? conv.id}">${conv.title ?? conv.id}</h1>
        <div
          class="actions">${resume
            ? html`
              <details class="menu resume">
                <summary>Resume</summary>
                <div class="menu-body">
                  <p id="resume-label">In its own agent, from any directory:</p>
                  <p class="cmd-line"><code class="cmd" id="resume-cmd">${resume.line}</code>
                  <button type="button" data-copy="${resume.line}" data-copy-for="resume-cmd"
                    aria-describedby="resume-label" hidden>Copy</button></p>${resume.note
                      ? html`<p class="muted resume-note">Note: ${resume.note}</p>`
                      : ""}
                  <p class="muted conv-id">${conv.id} · ${plural(conv.records, "record")}</p>
                </div>
              </details>
            `
            : ""}${forkForm(conv)}<details class="menu export"><summary>Export</summary><div
              class="menu-body" role="group" aria-label="Export as">${exports}</div></details></div>
      </div>
      <p class="facts">${facts.map((f, i) =>
        html`${i ? html`<span class="sep"> · </span>` : ""}${f}`
      )}</p>
    </header>
  `;
}

/** What each export is called in the menu. */
const EXPORT_NAMES: Record<(typeof EXPORT_FORMATS)[number], string> = {
  md: "Markdown",
  html: "HTML",
  json: "JSON",
  text: "Plain text",
};

/** `2026-09-14 08:47 – 08:58 UTC` (the date once when both times share it), or null for none. */
function timeSpan(first: string | null, last: string | null): Html | null {
  if (!first && !last) return null;
  if (!first || !last || first === last) return time(first ?? last);
  const [firstDay, lastDay] = [first.slice(0, 10), last.slice(0, 10)];
  if (firstDay !== lastDay) return html`${time(first)} – ${time(last)}`;
  return html`
    <time datetime="${first}">${shortTime(first).replace(" UTC", "")}</time> – <time
      datetime="${last}">${last.slice(11, 16)} UTC</time>
  `;
}

/** The checkbox that shows the page's `meta` and empty records. */
function quietToggle(quiet: number): Html | string {
  return quiet
    ? html`
      <label
        class="toggle"><input type="checkbox" id="show-quiet"> Show ${quiet} meta and empty ${quiet ===
            1
          ? "record"
          : "records"}</label>
    `
    : "";
}

/**
 * A button that forks the conversation into a logbook session any model continues (through the
 * gate, as `fork` does), then shows it among its project's sessions. Subagents are not sessions.
 */
function forkForm(conv: ConversationJson): Html | string {
  const project = conv.project ?? conv.cwd;
  if (conv.subagent || project === null) return "";
  const action = `/sessions/${encodeURIComponent(conv.id)}/fork?${new URLSearchParams({
    project,
  })}`;
  return html`
    <form method="post" action="${action}" class="fork">
      <button type="submit"
        aria-describedby="fork-note">Fork<span class="long"> into a logbook session</span></button>
      <span class="muted visually-hidden"
        id="fork-note">a copy of its messages (secrets redacted) to continue with any model; this conversation is left as it is</span>
    </form>
  `;
}

/** The command that resumes a conversation, and the note owed when it runs elsewhere. */
interface Resume {
  line: string;
  note: string | null;
}

/**
 * The command that resumes the conversation in its own agent, with `cd` to its directory (shown
 * away from any shell), or to its nearest existing ancestor when that is gone, with the note that
 * says so (`resumeCommand`, as `resume --print` and the search screen have it); both through the
 * gate, as everything the page shows. Null when its directory is not known.
 */
function resumeOf(row: ConversationRow, redact: (text: string) => string): Resume | null {
  const picker = conversationRow(row, redact);
  if (picker.cwd === null) return null;
  const { command, note } = resumeCommand(picker, "");
  return { line: redact(commandLine(command, "")), note: note === null ? null : redact(note) };
}

/** Numbered pages (the current one and two on each side, first and last), next, and the size. */
function pager(
  page: ShownPage,
  query: ViewQuery,
  after: number,
  starts: number[],
  where: "top" | "bottom",
  extra: Html | string,
): Html {
  const id = page.conversation.id;
  const keep = query.limit === undefined ? {} : { limit: query.limit };
  // The page shown is the last numbered one starting at or before its first record.
  const firstShown = page.records[0]?.id ?? after + 1;
  let current = 0;
  starts.forEach((start, i) => {
    if (start < firstShown) current = i;
  });
  const link = (i: number) => {
    const start = starts[i]!;
    const href = conversationHref(id, start === 0 ? keep : { ...keep, after: start });
    return i === current && after === start
      ? html`<a href="${href}" aria-current="page">${i + 1}</a>`
      : html`<a href="${href}">${i + 1}</a>`;
  };
  const shown = new Set(
    [0, starts.length - 1, current - 2, current - 1, current, current + 1, current + 2].filter((
      i,
    ) => i >= 0 && i < starts.length),
  );
  const numbers: Html[] = [];
  let last = -1;
  for (const i of [...shown].sort((a, b) => a - b)) {
    if (i > last + 1) numbers.push(html`<span class="gap">…</span>`);
    numbers.push(link(i));
    last = i;
  }
  const aligned = after === starts[current];
  const prevStart = aligned ? (current > 0 ? starts[current - 1] : undefined) : starts[current];
  // Back to the start is the link before it.
  const prev = prevStart === undefined || (prevStart === 0 && after > 0)
    ? ""
    : html`<a href="${
      conversationHref(id, prevStart === 0 ? keep : { ...keep, after: prevStart })
    }" rel="prev">← Previous</a>`;
  const next = page.next !== null
    ? html`<a href="${conversationHref(id, { ...keep, after: page.next })}" rel="next">Next →</a>`
    : "";
  const sizes = html`
    <form method="get" action="${conversationHref(id)}"
      class="size">${query.after !== undefined
        ? html`<input type="hidden" name="after" value="${query.after}">`
        : ""}<label>Per page <select name="limit">${PAGE_SIZES.map((n) =>
          n === (query.limit ?? DEFAULT_PAGE_LIMIT)
            ? html`<option value="${n}" selected>${n}</option>`
            : html`<option value="${n}">${n}</option>`
        )}</select></label> <button type="submit">Show</button></form>
  `;
  const start = after > 0
    ? html`<a href="${conversationHref(id, keep)}">⇤ Start of the conversation</a>`
    : "";
  return html`
    <nav class="pager"
      aria-label="${where === "top" ? "Pages" : "Pages (end)"}">${start}${prev}${starts.length > 1
        ? html`<span class="numbers">${numbers}</span>`
        : ""}${next}${extra}${sizes}</nav>
  `;
}

/** Where a page opened at a hit starts; a hit that is not in the conversation opens its start. */
function hitContext(
  store: HistoryStore,
  deriver: TextDeriver,
  row: ConversationRow,
  hit: number,
  limit: number,
): HitContext | null {
  try {
    return contextStart(store, deriver, row, hit, { limit });
  } catch (err) {
    if (err instanceof RangeError) return null;
    throw err;
  }
}
