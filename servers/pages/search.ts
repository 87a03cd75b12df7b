// The search page (`/`): one box (filters folded behind "Filters", or typed inline as
// `agent:codex since:7d`), a total with counts per agent and project to narrow by, hits with
// their conversation's title, agent, project, age and a marked snippet, grouped by conversation
// on request, sorted by relevance or newest; `/`, `j`/`k` and Enter from the keyboard. The
// results below the box are also served alone (`/search/results`), for the page's script to put
// in place as you type: one rendering of them, the server's.
import { teamQuery } from "../api/team.ts";
import { searchTeamFor, teamConfigured } from "../_team.ts";
import type { TeamSearchResult } from "../../lib/team/search.ts";
import type { SearchInput } from "../../lib/filters.ts";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { html } from "hono/html";
import { storeExists } from "../../lib/context.ts";
import { formatBytes, formatCount, plural, tilde } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { type Agent, AGENTS } from "../../lib/agents.ts";
import { FILTER_NAMES, FILTERS, type FilterSpec } from "../../lib/filters_table.ts";
import { recentConversationRows } from "../../lib/store/conversations.ts";
import { conversationJson } from "../../lib/store/records.ts";
import { INLINE_FILTERS, projectOfNamed, resolveSearch, splitInline } from "../../lib/filters.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import {
  countMatches,
  type Forgiven,
  type MatchCounts,
  type SearchFilters,
  type SearchHit,
} from "../../lib/store/search.ts";
import {
  DEFAULT_LIMIT,
  type GroupPage,
  searchGroupPage,
  type SearchPage,
  searchPage,
  searchQuery,
} from "../api/search.ts";
import {
  type AppEnv,
  noStore,
  type Route,
  type Services,
  usingStore,
  withStore,
} from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseFields } from "../_input.ts";
import { ago, conversationHref, type Html, layout, marked, notice, shortTime } from "./layout.ts";
import { sessionsHref } from "./sessions.ts";
import { RESULTS_TITLE_HEADER } from "./assets.ts";

type Form = Record<string, string>;

/** Hits per page offered besides the default (`DEFAULT_LIMIT`, sent as no `limit` at all). */
const LIMITS = ["50", "100"];

/** The best hits shown of each conversation when hits are grouped. */
const GROUP_HITS = 3;

/**
 * The routes: the page, and its results alone at `/search/results` (the same query string), which
 * the page's script fetches as you type and puts in place of the results below the box.
 */
export const searchPageRoute: Route = (svc) =>
  new Hono<AppEnv>()
    .get("/", async (c) => {
      const form = formOf(c.req.query());
      const shown = await resultsFor(svc, form, Date.now());
      return c.html(
        layout(
          shown.title,
          "search",
          html`${form.q?.trim() ? "" : demoNotice(svc)}${
            searchForm(form, teamConfigured(svc))
          }<div id="results" aria-live="polite" aria-busy="false">${shown.body}</div>`,
        ),
        shown.status,
      );
    })
    .get("/search/results", async (c) => {
      const shown = await resultsFor(svc, formOf(c.req.query()), Date.now());
      c.header(RESULTS_TITLE_HEADER, encodeURIComponent(`${shown.title} · logbook`));
      return c.html(shown.body, shown.status);
    });

function formOf(query: Record<string, string>): Form {
  const form: Form = {};
  for (const [key, value] of Object.entries(query)) form[key] = value;
  return form;
}

/** What is shown below the box for `form`, the page's title, and the answer's status. */
interface Shown {
  title: string;
  body: Html;
  status: ContentfulStatusCode;
}

/** The results of the search `form` asks for, within the budget counted from `startedAt`. */
async function resultsFor(svc: Services, form: Form, startedAt: number): Promise<Shown> {
  const home = homeDir(svc.ctx.env);
  if (!form.q?.trim()) {
    // No words: the recent conversations (of the project and agent given), newest first, as
    // the search screen opens.
    return { title: "Search", body: html`${recentList(svc, form, home)}${hint()}`, status: 200 };
  }
  // `agent:codex since:7d words` searches for the words with those filters (a field set in
  // the form wins).
  const { text, inline } = splitInline(form.q);
  if (!text) {
    const message =
      "Add words to search for: the filters in the box narrow a search, they are not one";
    return { title: "Search", body: notice(message, "error"), status: 400 };
  }
  const effective: Form = { ...inline, ...nonEmpty(form), q: text };
  if (form.scope === "team" && teamConfigured(svc)) {
    const { offset, machine, session: _s, sort: _o, group: _g, scope: _t, ...input } = parseFields(
      effective,
      teamQuery,
      ["q"],
    ) as Record<string, unknown>;
    let result: TeamSearchResult;
    try {
      result = await searchTeamFor(svc, input as unknown as SearchInput, {
        startedAt,
        ...(typeof offset === "number" ? { offset } : {}),
        ...(typeof machine === "string" ? { machine } : {}),
      });
    } catch (err) {
      if (!(err instanceof ApiError)) {
        throw err;
      }
      return { title: "Search", body: notice(err.message, "error"), status: err.status };
    }
    const body = html`${forgivenNote(result.forgiven, form)}${teamResults(result, form, home)}`;
    return { title: `Team search: ${form.q}`, body, status: 200 };
  }
  const grouped = form.group === "1";
  let page: SearchPage | GroupPage;
  try {
    const query = parseFields(effective, searchQuery, ["q"]);
    page = grouped
      ? await searchGroupPage(svc, query, GROUP_HITS, startedAt)
      : await searchPage(svc, query, startedAt);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) {
      throw err;
    }
    return { title: "Search", body: notice(err.message, "error"), status: err.status };
  }
  // A stopped search matched too much to count here in time: it has no counts.
  const extra = usingStore(svc, (store) => ({
    counts: page.ftsQuery === null || page.stopped
      ? null
      : countMatches(store, page.ftsQuery, filtersOf(store, svc, effective), svc.redact),
  }));
  const body = html`${forgivenNote(page.forgiven ?? undefined, form)}${
    page.note
      ? notice(upperFirst(page.note))
      : page.mode === "literal"
      ? notice("The query is not valid FTS5 syntax: this is a literal substring scan")
      : ""
  }${page.stopNote ? notice(page.stopNote) : ""}${
    "groups" in page
      ? groupResults(svc, page, form, extra.counts, home)
      : results(svc, page, form, extra.counts, home)
  }`;
  return { title: `Search: ${form.q}`, body, status: 200 };
}

/**
 * A search that found nothing for the words as typed and shows what it searched instead says so
 * (`no hits for "lanternfsh"; showing "lanternfish"`), with the way back to the words as typed.
 */
function forgivenNote(forgiven: Forgiven | undefined, form: Form): Html | "" {
  if (!forgiven) return "";
  const { text } = splitInline(form.q ?? "");
  const back = html`<a href="${
    linkWith(form, { forgive: "exact" })
  }">search for "${text}" exactly</a>`;
  return html`<p class="notice forgiven" role="note">${upperFirst(forgiven.note)} · ${back}</p>`;
}

/** The search page listing a project's conversations, newest first (no words to search for). */
export function projectConversationsHref(project: string): string {
  return `/?${new URLSearchParams({ project })}`;
}

/** Conversations per page of a listing without words. */
const LIST_LIMIT = 25;

/** The conversations of the form's project and agent, newest first, as compact rows. */
function recentList(svc: Services, form: Form, home: string | undefined): Html {
  if (!storeExists(svc.ctx)) return notice(noStore().message);
  const offset = Math.max(0, Math.min(Number.parseInt(form.offset ?? "0", 10) || 0, 1e9));
  const agent = (AGENTS as readonly string[]).includes(form.agent ?? "")
    ? form.agent as Agent
    : undefined;
  const { rows, total, project } = withStore(svc, "recent_conversations", (store) => {
    const project = form.project ? projectOfNamed(form.project, svc.ctx, store) : undefined;
    return {
      project,
      ...recentConversationRows(store, {
        ...(project === undefined ? {} : { project }),
        ...(agent === undefined ? {} : { agent }),
        limit: LIST_LIMIT,
        offset,
      }),
    };
  });
  const list = rows.map((row) => conversationJson(row, svc.redact));
  // Shown and linked as the gate shows it, as every project on these pages.
  const shown = project === undefined ? undefined : svc.redact(project);
  const where = [
    shown === undefined ? null : `in ${tilde(shown, home)}`,
    agent === undefined ? null : `of ${agent}`,
  ].filter(Boolean).join(" ");
  const now = svc.now();
  const link = (at: number) => pageLink(form, at);
  return html`<h2>Recent conversations${where ? ` ${where}` : ""}</h2>
${
    list.length
      ? html`
        <p role="status"
          class="muted">${total > list.length
            ? `${formatCount(offset + 1)}–${formatCount(offset + list.length)} of ${
              formatCount(total)
            }`
            : `${formatCount(total)}`} ${total === 1
            ? "conversation"
            : "conversations"}, newest first${shown === undefined ? "" : html`
            · <a href="${sessionsHref(shown)}">sessions</a>
          `} · type words above to search them</p>
        <ol class="rows recent">${list.map((conv) =>
          html`
            <li>
              <a class="title" href="${conversationHref(conv.id)}">${conv.title ?? conv.id}</a>
              <span class="side">${conv.lastTimestamp ? ago(conv.lastTimestamp, now) : ""}</span>
              <span class="meta-line">${joined([
                html`<span class="badge">${conv.agent}</span>`,
                shown === undefined && conv.project ? tilde(conv.project, home) : null,
                conv.messages ? plural(conv.messages, "message") : null,
                formatBytes(conv.bytes),
              ])}</span>
            </li>
          `
        )}</ol>
        <nav class="pager" aria-label="Conversation pages">${offset > 0
          ? html`<a href="${link(Math.max(0, offset - LIST_LIMIT))}" rel="prev">← Newer</a>`
          : ""}${offset + list.length < total
          ? html`<a href="${link(offset + LIST_LIMIT)}" rel="next">Older →</a>`
          : ""}</nav>
      `
      : html`<p role="status">${offset ? "No more conversations" : "No conversations here yet"}</p>`
  }`;
}

/** Hits from the team database: one row each, marked with the machine that pushed it. */
function teamResults(result: TeamSearchResult, form: Form, home: string | undefined): Html {
  if (!result.hits.length) {
    return html`<p role="status">No matches in the team database${
      result.suggestion
        ? html`; indexed words begin with it: try <a href="${
          linkWith(form, { q: result.suggestion })
        }">${result.suggestion}</a>`
        : ""
    }</p>`;
  }
  const short = (path: string | null) => (path ? tilde(path, home) : "");
  return html`
    <div class="results">
      <div class="list">
        <p role="status">${result.hits.length} ${result.hits.length === 1
          ? "match"
          : "matches"} in the team database${result.mode === "substring"
          ? " (matched as a substring)"
          : ""}</p>
        <ol class="hits">${result.hits.map((hit) =>
          html`
            <li class="hit">
              <div class="hit-head"><span class="machine">${hit.machine}</span>
            <span class="title">${hit.title ??
              hit.conversation}</span> <span class="muted">${joined([
                hit.agent,
                short(hit.project ?? hit.cwd) || null,
                hit.timestamp ? shortTime(hit.timestamp) : null,
                hitWords(hit),
              ])}</span></div>
              <code class="id">${hit.conversation}</code>
              <p class="snippet">${hit.snippet}</p>
            </li>
          `
        )}</ol>
      </div>
    </div>
  `;
}

function nonEmpty(form: Form): Form {
  return Object.fromEntries(Object.entries(form).filter(([, v]) => v !== ""));
}

/** The store-side filters of a form `searchPage` accepted, for counting its matches. */
function filtersOf(store: HistoryStore, svc: Services, form: Form): SearchFilters {
  const { offset: _o, sort: _s, ...input } = parseFields(form, searchQuery, ["q"]);
  const { query: _q, limit: _l, ...filters } = resolveSearch(input, svc.ctx, store);
  return filters;
}

/** In `start`'s demo, what the dashboard shows: sample transcripts, not the user's. */
function demoNotice(svc: Services): Html | "" {
  if (!svc.demo) return "";
  return html`<p class="notice" role="note"><strong>This is a demo</strong>: logbook's bundled
sample transcripts, captured into the temporary store <code>${svc.ctx.paths.root}</code> (removed
when <code>start</code> exits), not your own histories.</p>`;
}

function hint(): Html {
  return html`<p class="muted">Press <kbd>/</kbd> anywhere to jump to the search box, <kbd>j</kbd>
and <kbd>k</kbd> to move between hits and <kbd>Enter</kbd> to open one. Words match whole words and
prefixes with <code>*</code>; quote a phrase. Words that find nothing are searched as the words they
begin, their other forms, then the closest spellings. Filters can be typed in the box:
<code>agent:codex</code>, <code>project:/home/me/app</code>, <code>since:7d</code>,
<code>until:2026-03-10</code>, <code>kind:tool_call</code>, <code>role:user</code>.</p>`;
}

function searchForm(form: Form, team = false): Html {
  const select = (name: string, label: string, values: readonly string[], any = "any") =>
    html`<label>${label}<select name="${name}">${
      any ? html`<option value="">${any}</option>` : ""
    }${
      values.map((v) =>
        (form[name] || (any ? "" : values[0])) === v
          ? html`<option value="${v}" selected>${v}</option>`
          : html`<option value="${v}">${v}</option>`
      )
    }</select></label>`;
  const text = (name: string, label: string, placeholder: string) =>
    html`<label>${label}<input name="${name}" value="${
      form[name] ?? ""
    }" placeholder="${placeholder}" autocomplete="off"></label>`;
  // A field left at its default is no filter: the panel stays folded after a plain search.
  const limit = form.limit && form.limit !== String(DEFAULT_LIMIT) ? form.limit : "";
  const set = INLINE_FILTERS.filter((name) => form[name]).length + (limit ? 1 : 0);
  const keep = (name: string) =>
    form[name] ? html`<input type="hidden" name="${name}" value="${form[name]}">` : "";
  return html`<h1 class="visually-hidden">Search</h1>
<form class="search" method="get" action="/" role="search" aria-label="Search conversations">
<div class="q"><label for="q" class="visually-hidden">Search text (press /)</label><input id="q" name="q" type="search"
value="${
    form.q ?? ""
  }" required maxlength="4096" autocomplete="off" placeholder="Search every conversation  (/ to focus;  agent:codex since:7d)"
aria-describedby="q-hint">
<button type="submit" class="primary">Search</button></div>
<span id="q-hint" class="visually-hidden">Filters can be typed in the box, like agent:codex since:7d</span>
${keep("sort")}${keep("group")}${
    team
      ? html`<fieldset class="scope"><legend class="visually-hidden">Scope</legend>
<label><input type="radio" name="scope" value=""${
        form.scope === "team" ? "" : html`
          checked
        `
      }> this machine</label>
<label><input type="radio" name="scope" value="team"${
        form.scope === "team"
          ? html`
            checked
          `
          : ""
      }> team</label></fieldset>`
      : ""
  }
<details class="filters"${
    set
      ? html`
        open
      `
      : ""
  }><summary>Filters${set ? ` (${set})` : ""}</summary>
<div class="grid">
${
    FILTER_NAMES.flatMap((name) => {
      const spec: FilterSpec = FILTERS[name];
      if (!spec.form) return [];
      const { label, placeholder = "" } = spec.form;
      // A field a line, as the page's source reads best.
      return [
        spec.values ? select(name, label, spec.values) : text(name, label, placeholder),
        "\n",
      ];
    })
  }<label>Hits per page<select name="limit"><option value="">${DEFAULT_LIMIT}</option>${
    LIMITS.map((v) =>
      v === limit
        ? html`<option value="${v}" selected>${v}</option>`
        : html`<option value="${v}">${v}</option>`
    )
  }</select></label>
</div>
</details>
</form>`;
}

/** The page's address with `changes` made (and back to the first page). */
function linkWith(form: Form, changes: Record<string, string | null>): string {
  const params = new URLSearchParams(nonEmpty(form));
  params.delete("offset");
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) params.delete(key);
    else params.set(key, value);
  }
  return `/?${params}`;
}

/** The link to another page of the same search. */
function pageLink(form: Form, offset: number): string {
  const params = new URLSearchParams(nonEmpty(form));
  params.delete("offset");
  if (offset > 0) params.set("offset", String(offset));
  return `/?${params}`;
}

function pager(form: Form, page: { offset: number; limit: number; next: number | null }): Html {
  return html`<nav class="pager" aria-label="Result pages">${
    page.offset > 0
      ? html`<a href="${
        pageLink(form, Math.max(0, page.offset - page.limit))
      }" rel="prev">← Previous</a>`
      : ""
  }${
    page.next !== null
      ? html`<a href="${pageLink(form, page.next)}" rel="next">More results →</a>`
      : ""
  }</nav>`;
}

/** `2 matches`, or where this page is among them: `21–40 of 1,214 matches`. */
function totalLine(
  counts: MatchCounts | null,
  first: number,
  last: number,
  whole: boolean,
): Html {
  if (!counts) return html`Matches ${formatCount(first)}–${formatCount(last)}`;
  const total = html`<strong>${counts.capped ? "over " : ""}${formatCount(counts.total)}</strong> ${
    counts.total === 1 ? "match" : "matches"
  }`;
  return whole ? total : html`${formatCount(first)}–${formatCount(last)} of ${total}`;
}

/** The line above the hits: the total, and the sort and grouping to switch to. */
function summaryLine(form: Form, status: Html): Html {
  const sort = form.sort === "newest" ? "newest" : "relevance";
  const grouped = form.group === "1";
  return html`<div class="summary-line"><p role="status">${status}</p>
<span class="sort">Sort: ${
    sort === "relevance"
      ? html`<a href="${linkWith(form, { sort: null })}" aria-current="true">relevance</a>`
      : html`<a href="${linkWith(form, { sort: null })}">relevance</a>`
  } ${
    sort === "newest"
      ? html`<a href="${linkWith(form, { sort: "newest" })}" aria-current="true">newest</a>`
      : html`<a href="${linkWith(form, { sort: "newest" })}">newest</a>`
  } · <a href="${linkWith(form, { group: grouped ? null : "1" })}">${
    grouped ? "ungroup" : "group by conversation"
  }</a></span></div>`;
}

function results(
  svc: Services,
  page: SearchPage,
  form: Form,
  counts: MatchCounts | null,
  home: string | undefined,
): Html {
  if (!page.hits.length) return noMatches(page, form);
  const first = page.offset + 1;
  const last = page.offset + page.hits.length;
  const whole = page.offset === 0 && page.next === null;
  const list = html`<ol class="hits" start="${first}">${
    page.hits.map((hit, i) => hitItem(svc, hit, page.highlights[i] ?? [], home))
  }</ol>`;
  return html`<div class="results"><div class="list">${
    summaryLine(form, totalLine(counts, first, last, whole))
  }${list}${pager(form, page)}</div>${counts ? facets(counts, form, home) : ""}</div>`;
}

/**
 * Hits grouped by conversation across the whole search: a page of conversations, each with its
 * best few hits and a link to the rest of its hits (the search narrowed to it).
 */
function groupResults(
  svc: Services,
  page: GroupPage,
  form: Form,
  counts: MatchCounts | null,
  home: string | undefined,
): Html {
  if (!page.groups.length) return noMatches(page, form);
  const first = page.offset + 1;
  const last = page.offset + page.groups.length;
  const conversations = page.total ?? last;
  const noun = conversations === 1 ? "conversation" : "conversations";
  const status = page.offset === 0 && page.next === null
    ? html`<strong>${formatCount(conversations)}</strong> ${noun}`
    : html`${formatCount(first)}–${formatCount(last)} of <strong>${
      page.total === null ? "more" : formatCount(page.total)
    }</strong> ${noun}`;
  const matches = counts
    ? html`
      · ${counts.capped ? "over " : ""}${formatCount(counts.total)} ${counts.total === 1
        ? "match"
        : "matches"}
    `
    : "";
  const list = html`${
    page.groups.map((group) => {
      const title = group.title ?? group.conversation;
      const top = group.top ?? { hits: [group], highlights: [[]] };
      const more = group.hits - top.hits.length;
      const project = group.project ?? group.cwd;
      return html`
        <section class="group" aria-label="${title}">
          <h3><a href="${conversationHref(group.conversation, {
            hit: group.record,
            anchor: group.record,
          })}">${title}</a></h3>
          <div class="meta-line">${joined([
            html`<span class="badge">${group.agent}</span>`,
            project ? tilde(project, home) : null,
            plural(group.hits, "hit"),
          ])}</div>
          <ol class="hits">${top.hits.map((hit, i) =>
            hitItem(svc, hit, top.highlights[i] ?? [], home, true)
          )}</ol>
          ${more > 0
            ? html`<p class="more"><a href="${
              linkWith(form, {
                session: group.conversation,
                group: null,
              })
            }">${formatCount(more)} more in this conversation</a></p>`
            : ""}
        </section>
      `;
    })
  }`;
  return html`<div class="results"><div class="list">${
    summaryLine(form, html`${status}${matches}`)
  }${list}${pager(form, page)}</div>${counts ? facets(counts, form, home) : ""}</div>`;
}

/**
 * What a search that found nothing says: why (`explainNoMatch`, as the search screen says it),
 * and the searches it points to as links: the suggested prefix, each filter that keeps every
 * match out left out, the projects closest to one no conversation is in.
 */
function noMatches(page: SearchPage | GroupPage, form: Form): Html {
  const why = page.noMatch;
  if (page.offset || !why) {
    return html`<p role="status">${page.offset ? "No more matches" : "No matches"}</p>`;
  }
  const { text, inline } = splitInline(form.q ?? "");
  // The box again with `changes` made to its words and filters (inline or in their fields).
  const changed = (changes: { words?: string; drop?: string; project?: string }) => {
    const kept = Object.entries(inline).filter(([name]) =>
      name !== changes.drop && (changes.project === undefined || name !== "project")
    ).map(([name, value]) => `${name}:${/\s/.test(value) ? `"${value}"` : value}`);
    const q = [...kept, changes.words ?? text].join(" ");
    const fields: Record<string, string | null> = { q };
    if (changes.drop) fields[changes.drop] = null;
    if (changes.project !== undefined) fields.project = changes.project;
    return linkWith(form, fields);
  };
  const links = [
    ...(why.suggestion
      ? [html`<a href="${changed({ words: why.suggestion })}">${why.suggestion}</a>`]
      : []),
    ...why.blocking.map((b) =>
      html`<a href="${changed({ drop: b.name })}">without ${
        b.name === "subagents"
          ? "leaving out subagents"
          : `${b.name}:${inline[b.name] ?? form[b.name] ?? ""}`
      }</a>`
    ),
    ...why.closest.map((project) => html`<a href="${changed({ project })}">in ${project}</a>`),
  ];
  return html`<p role="status">${why.text}</p>${
    links.length
      ? html`<p class="muted">Search again: ${
        links.map((link, i) => html`${i ? " · " : ""}${link}`)
      }</p>`
      : ""
  }`;
}

/** Pieces joined by ` · `, leaving out the missing ones. */
function joined(pieces: (Html | string | null)[]): Html {
  const kept = pieces.filter((p) => p !== null && p !== "");
  return html`${kept.map((p, i) => html`${i ? " · " : ""}${p}`)}`;
}

function facets(counts: MatchCounts, form: Form, home: string | undefined): Html {
  const row = (label: string, count: number, href: string | null) =>
    html`<li>${
      href ? html`<a href="${href}" title="${label}">${label}</a>` : label
    }<span class="muted">${formatCount(count)}</span></li>`;
  return html`<aside aria-label="Narrow the search">
<h2>Agents</h2>
<ul>${
    counts.byAgent.map((a) =>
      row(a.agent, a.count, form.agent === a.agent ? null : linkWith(form, { agent: a.agent }))
    )
  }</ul>
<h2>Projects</h2>
<ul>${
    counts.byProject.slice(0, 12).map((p) =>
      row(
        tilde(p.project, home),
        p.count,
        p.project === null || form.project === p.project
          ? null
          : linkWith(form, { project: p.project }),
      )
    )
  }</ul>${
    form.agent || form.project
      ? html`<p><a href="${
        linkWith(form, { agent: null, project: null })
      }">All agents and projects</a></p>`
      : ""
  }
</aside>`;
}

/** What a hit is, in plain words: a question, an answer, a tool call… */
function hitWords(hit: { kind: string; role: string | null }): string {
  switch (hit.kind) {
    case "message":
      return hit.role === "user"
        ? "question"
        : hit.role === "assistant"
        ? "answer"
        : hit.role
        ? `${hit.role} message`
        : "message";
    case "prompt":
      return "typed prompt";
    case "tool_call":
      return "tool call";
    case "tool_result":
      return "tool result";
    case "reasoning":
      return "thinking";
    case "summary":
      return "summary";
    case "event":
      return "event";
    default:
      return "other record";
  }
}

/**
 * One hit: its conversation's title as the link, then agent, project, age and what it is, and
 * the snippet. In a conversation's group the title is above, so what the hit is links instead.
 */
function hitItem(
  svc: Services,
  hit: SearchHit,
  ranges: [number, number][],
  home: string | undefined,
  inGroup = false,
): Html {
  const project = hit.project ?? hit.cwd;
  const href = conversationHref(hit.conversation, { hit: hit.record, anchor: hit.record });
  const title = hit.title ?? hit.conversation;
  const age = hit.timestamp ? ago(hit.timestamp, svc.now()) : null;
  const meta = inGroup
    ? joined([html`<a class="title" href="${href}">${hitWords(hit)}</a>`, age])
    : joined([
      html`<span class="badge">${hit.agent}</span>`,
      project ? tilde(project, home) : null,
      age,
      hitWords(hit),
    ]);
  return html`
    <li class="hit">
      ${inGroup ? "" : html`<a class="title" href="${href}">${title}</a>`}
      <div class="meta-line">${meta}</div>
      <p class="snippet">${marked(hit.snippet, ranges)}</p>
    </li>
  `;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
