// The search page (`/`): one box (filters folded behind "Filters", or typed inline as
// `agent:codex since:7d`), a total with counts per agent and project to narrow by, hits with
// their conversation's title, agent, project, age and a marked snippet, grouped by conversation
// on request, sorted by relevance or newest; `/`, `j`/`k` and Enter from the keyboard.

import { teamQuery } from "../api/team.ts";
import { searchTeamFor, teamConfigured } from "../_team.ts";
import type { TeamSearchResult } from "../../lib/team/search.ts";
import type { SearchInput } from "../../lib/filters.ts";
import { Hono } from "hono";
import { html } from "hono/html";
import { homeDir } from "../../lib/paths.ts";
import { AGENTS, KINDS, ROLES } from "../../lib/sources/adapter.ts";
import { INLINE_FILTERS, resolveSearch, splitInline } from "../../lib/filters.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import {
  countMatches,
  type MatchCounts,
  type SearchFilters,
  type SearchHit,
} from "../../lib/store/search.ts";
import { type SearchPage, searchPage, searchQuery } from "../api/search.ts";
import { type AppEnv, type Route, type Services, usingStore } from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseFields } from "../_input.ts";
import { ago, conversationHref, type Html, layout, marked, notice, tilde } from "./layout.ts";

type Form = Record<string, string>;

/** The form's filter fields (folded behind "Filters"). */
const FILTERS = [...INLINE_FILTERS, "limit"];

/** What a page of hits knows about their conversations. */
interface Titles {
  title: Map<string, string | null>;
}

/** The route. */
export const searchPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/", async (c) => {
    const startedAt = Date.now();
    const form: Form = {};
    for (const [key, value] of Object.entries(c.req.query())) form[key] = value;
    const home = homeDir(svc.ctx.env);
    if (!form.q?.trim()) {
      return c.html(
        layout("Search", "search", html`${searchForm(form, teamConfigured(svc))}${hint()}`),
      );
    }
    // `agent:codex since:7d words` searches for the words with those filters (a field set in
    // the form wins).
    const { text, inline } = splitInline(form.q);
    if (!text) {
      const message =
        "Add words to search for: the filters in the box narrow a search, they are not one";
      return c.html(
        layout(
          "Search",
          "search",
          html`${searchForm(form, teamConfigured(svc))}${notice(message, "error")}`,
        ),
        400,
      );
    }
    const effective: Form = { ...inline, ...nonEmpty(form), q: text };
    if (form.scope === "team" && teamConfigured(svc)) {
      const { offset, machine, session: _s, sort: _o, group: _g, scope: _t, ...input } =
        parseFields(effective, teamQuery, ["q"]) as Record<string, unknown>;
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
        return c.html(
          layout(
            "Search",
            "search",
            html`${searchForm(form, true)}${notice(err.message, "error")}`,
          ),
          err.status,
        );
      }
      return c.html(
        layout(
          `Team search: ${form.q}`,
          "search",
          html`${searchForm(form, true)}${teamResults(result, home)}`,
        ),
      );
    }
    let page: SearchPage;
    try {
      page = await searchPage(svc, parseFields(effective, searchQuery, ["q"]), startedAt);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) {
        throw err;
      }
      return c.html(
        layout(
          "Search",
          "search",
          html`${searchForm(form, teamConfigured(svc))}${notice(err.message, "error")}`,
        ),
        err.status,
      );
    }
    // A stopped search matched too much to count here in time: it has no counts.
    const extra = usingStore(svc, (store) => ({
      counts: page.ftsQuery === null || page.stopped
        ? null
        : countMatches(store, page.ftsQuery, filtersOf(store, svc, effective)),
    }));
    const body = html`${searchForm(form, teamConfigured(svc))}${
      page.note
        ? notice(upperFirst(page.note))
        : page.mode === "literal"
        ? notice("The query is not valid FTS5 syntax: this is a literal substring scan")
        : ""
    }${page.stopNote ? notice(page.stopNote) : ""}${
      results(svc, page, form, extra.counts, titlesOf(page.hits), home)
    }`;
    return c.html(layout(`Search: ${form.q}`, "search", body));
  });

/** Hits from the team database: one row each, marked with the machine that pushed it. */
function teamResults(result: TeamSearchResult, home: string | undefined): Html {
  if (!result.hits.length) return html`<p role="status">No matches in the team database</p>`;
  const short = (path: string | null) =>
    path && home && path.startsWith(home + "/") ? "~" + path.slice(home.length) : path ?? "";
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
            <span class="title">${hit.title ?? hit.conversation}</span> <span class="muted">${hit
              .agent} · ${short(
                hit.project ?? hit.cwd,
              )} · ${hit.timestamp?.slice(0, 16).replace("T", " ") ?? ""}</span></div>
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

/** Each hit's conversation title, as the search gave it (already through the gate). */
function titlesOf(hits: readonly SearchHit[]): Titles {
  const title = new Map<string, string | null>();
  for (const hit of hits) if (!title.has(hit.conversation)) title.set(hit.conversation, hit.title);
  return { title };
}

function hint(): Html {
  return html`<p class="muted">Press <kbd>/</kbd> anywhere to jump to the search box, <kbd>j</kbd>
and <kbd>k</kbd> to move between hits and <kbd>Enter</kbd> to open one. Words match whole words and
prefixes with <code>*</code>; quote a phrase. Filters can be typed in the box:
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
  const set = FILTERS.filter((name) => form[name]).length;
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
${text("project", "Project directory", "/home/me/src/app")}
${select("agent", "Agent", AGENTS)}
${text("session", "Conversation", "claude:3f2a…")}
${select("kind", "Kind", KINDS)}
${select("role", "Role", ROLES)}
${text("since", "Since", "7d, 2026-03-10")}
${text("until", "Until", "today")}
${select("limit", "Hits per page", ["20", "50", "100"], "")}
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

function results(
  svc: Services,
  page: SearchPage,
  form: Form,
  counts: MatchCounts | null,
  titles: Titles,
  home: string | undefined,
): Html {
  if (!page.hits.length) {
    return html`<p role="status">${page.offset ? "No more matches" : "No matches"}</p>`;
  }
  const first = page.offset + 1;
  const last = page.offset + page.hits.length;
  const pageLink = (offset: number) => {
    const params = new URLSearchParams(nonEmpty(form));
    params.delete("offset");
    if (offset > 0) params.set("offset", String(offset));
    return `/?${params}`;
  };
  const pager = html`<nav class="pager" aria-label="Result pages">${
    page.offset > 0
      ? html`<a href="${pageLink(Math.max(0, page.offset - page.limit))}" rel="prev">← Previous</a>`
      : ""
  }${
    page.next !== null ? html`<a href="${pageLink(page.next)}" rel="next">More results →</a>` : ""
  }</nav>`;
  const sort = form.sort === "newest" ? "newest" : "relevance";
  const grouped = form.group === "1";
  const total = counts
    ? html`
      <strong>${counts.capped ? "Over " : ""}${counts.total.toLocaleString(
        "en",
      )}</strong> ${counts.total === 1 ? "match" : "matches"} ·
    `
    : "";
  const summary =
    html`<div class="summary-line"><p role="status">${total}Matches ${first} to ${last}</p>
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
  const item = (hit: SearchHit, i: number) =>
    hitItem(svc, hit, page.highlights[i] ?? [], titles, home);
  let list: Html;
  if (grouped) {
    const groups = new Map<string, number[]>();
    page.hits.forEach((hit, i) => {
      const at = groups.get(hit.conversation) ?? [];
      at.push(i);
      groups.set(hit.conversation, at);
    });
    list = html`${
      [...groups].map(([conversation, indexes]) =>
        html`
          <section class="group" aria-label="${titles.title.get(conversation) ?? conversation}">
            <h3><a href="${conversationHref(conversation)}">${titles.title.get(conversation) ??
              conversation}</a> <span class="muted">${indexes.length} ${indexes.length === 1
              ? "hit"
              : "hits"}</span></h3>
            <ol class="hits">${indexes.map((i) => item(page.hits[i]!, i))}</ol>
          </section>
        `
      )
    }`;
  } else list = html`<ol class="hits" start="${first}">${page.hits.map(item)}</ol>`;
  return html`<div class="results"><div class="list">${summary}${list}${pager}</div>${
    counts ? facets(counts, form, home) : ""
  }</div>`;
}

function facets(counts: MatchCounts, form: Form, home: string | undefined): Html {
  const row = (label: string, count: number, href: string | null) =>
    html`<li>${
      href ? html`<a href="${href}" title="${label}">${label}</a>` : label
    }<span class="muted">${count.toLocaleString("en")}</span></li>`;
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

function hitItem(
  svc: Services,
  hit: SearchHit,
  ranges: [number, number][],
  titles: Titles,
  home: string | undefined,
): Html {
  const what = hit.role ? `${hit.kind}/${hit.role}` : hit.kind;
  const project = hit.project ?? hit.cwd;
  const href = conversationHref(hit.conversation, { hit: hit.record, anchor: hit.record });
  const title = titles.title.get(hit.conversation) ?? hit.conversation;
  return html`
    <li class="hit">
      <a class="title" href="${href}">${title}</a>
      <div
        class="meta-line"><span class="badge">${hit.agent}</span> · ${tilde(project, home)} · ${ago(
          hit.timestamp,
          svc.now(),
        )} · ${what}</div>
      <p class="snippet">${marked(hit.snippet, ranges)}</p>
    </li>
  `;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
