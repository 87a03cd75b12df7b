// The conversation page (`/conversations/:id`): the conversation as a chat (see `_chat.ts`) under
// a header that stays in view (title, agent, project, branch, dates, size, and the resume, fork
// and export actions), numbered pages, and a search hit (`?hit=`) shown with the question before
// it and marked.

import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { plural } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { commandLine, nativeCommand, type RowAgent } from "../../lib/sessions/resume.ts";
import {
  contextStart,
  DEFAULT_PAGE_LIMIT,
  findConversation,
  pageStarts,
} from "../../lib/store/conversations.ts";
import type { ConversationJson } from "../../lib/store/records.ts";
import { conversationPage, pageQuery } from "../api/conversations.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { parseId, parseQuery, queryInt } from "../_input.ts";
import type { ShownPage } from "../_redact.ts";
import { chatRecords, shapeOf } from "./_chat.ts";
import { markdownRenderer } from "./_markdown.ts";
import { EXPORT_FORMATS, exportHref } from "./export.ts";
import { conversationHref, type Html, layout, projectAnchor, tilde, time } from "./layout.ts";

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
    // Where the page starts and where its numbered neighbours start.
    const place = withStore(svc, "conversation_pages", (store) => {
      const row = findConversation(store, id);
      const after = query.after ?? (query.hit === undefined ? 0 : hitStart(store, row, query.hit));
      return { after, starts: pageStarts(store, row.id, limit) };
    });
    const page = conversationPage(svc, id, { ...query, after: place.after });
    const render = await markdownRenderer();
    const home = homeDir(svc.ctx.env);
    const conv = page.conversation;
    const quiet = page.records.filter((r) => shapeOf(r) === "quiet").length;
    const nav = (where: "top" | "bottom") => pager(page, query, place.after, place.starts, where);
    const body = html`${header(conv, home, quiet)}${nav("top")}
<section class="chat" aria-label="Messages">${
      chatRecords(page.records, render, { hit: query.hit })
    }</section>
${page.next === null ? html`<p class="end" role="status">End of the conversation</p>` : ""}${
      nav("bottom")
    }`;
    return c.html(layout(conv.title ?? conv.id, "conversation", body));
  });

function header(conv: ConversationJson, home: string | undefined, quiet: number): Html {
  const resume = conv.subagent ? null : resumeCommand(conv);
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
  facts.push(html`${time(conv.firstTimestamp)} – ${time(conv.lastTimestamp)}`);
  facts.push(`${conv.messages} messages`);
  if (conv.parent) {
    facts.push(
      html`${conv.subagent ? "subagent of" : "forked from"} <a href="${
        conversationHref(conv.parent)
      }">${conv.parent}</a>`,
    );
  }
  if (conv.sourceGone) facts.push("source deleted upstream; kept here");
  const exports = EXPORT_FORMATS.map((format) =>
    html`<a href="${exportHref(conv.id, format)}" download>${format.toUpperCase()}</a>`
  );
  return html`
    <header class="conv-head">
      <h1>${conv.title ?? conv.id}</h1>
      <p class="facts">${facts.map((f, i) =>
        html`${i ? html`<span class="sep"> · </span>` : ""}${f}`
      )}</p>
      <div class="actions">
    ${resume
      ? html`
        <span
          class="resume"><span id="resume-label">Resume:</span> <code class="cmd" id="resume-cmd">${resume}</code>
        <button type="button" data-copy="${resume}" data-copy-for="resume-cmd" aria-describedby="resume-label" hidden>Copy</button></span>
      `
      : ""}${forkForm(conv)}<span class="export" aria-label="Export">Export: ${exports.map((
        link,
        i,
      ) => html`${i ? " " : ""}${link}`)}</span>${quiet
      ? html`
        <label
          class="toggle"><input type="checkbox" id="show-quiet"> Show ${quiet} meta and empty ${quiet ===
              1
            ? "record"
            : "records"}</label>
      `
      : ""}
      </div>
      <p class="muted conv-id">${conv.id} · ${plural(conv.records, "record")}</p>
    </header>
  `;
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
      <button type="submit" aria-describedby="fork-note">Fork into a logbook session</button>
      <span class="muted visually-hidden"
        id="fork-note">a copy of its messages (secrets redacted) to continue with any model; this conversation is left as it is</span>
    </form>
  `;
}

/** The command that resumes the conversation in its own agent, with `cd` to its directory. */
function resumeCommand(conv: ConversationJson): string | null {
  if (!conv.cwd) return null;
  const cmd = nativeCommand({
    key: conv.id,
    agent: conv.agent as RowAgent,
    nativeId: conv.nativeId,
    title: conv.title ?? conv.id,
    updatedAt: 0,
    size: conv.bytes,
    messages: conv.messages,
    cwd: conv.cwd,
    manifest: false,
  }, conv.cwd);
  // Shown away from any shell, so always with the `cd`.
  return commandLine(cmd, "");
}

/** Numbered pages (the current one and two on each side, first and last), next, and the size. */
function pager(
  page: ShownPage,
  query: ViewQuery,
  after: number,
  starts: number[],
  where: "top" | "bottom",
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
        : ""}${next}${sizes}</nav>
  `;
}

/** Where a page opened at a hit starts; a hit that is not in the conversation opens its start. */
function hitStart(
  store: Parameters<typeof contextStart>[0],
  row: Parameters<typeof contextStart>[1],
  hit: number,
): number {
  try {
    return contextStart(store, row, hit);
  } catch (err) {
    if (err instanceof RangeError) return 0;
    throw err;
  }
}
