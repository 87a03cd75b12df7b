// The search page (`/`): the filters of `search` as a form, hits with their matches marked, each
// linking to its conversation at the hit, and paging.

import { Hono } from "hono";
import { html } from "hono/html";
import { homeDir } from "../../lib/paths.ts";
import { AGENTS, KINDS, ROLES } from "../../lib/sources/adapter.ts";
import type { SearchHit } from "../../lib/store/search.ts";
import { type SearchPage, searchPage, searchQuery } from "../api/search.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseQuery } from "../_input.ts";
import { conversationHref, type Html, layout, marked, notice, tilde, time } from "./layout.ts";

type Form = Record<string, string>;

/** The route. */
export const searchPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/", async (c) => {
    const startedAt = Date.now();
    const form: Form = {};
    for (const [key, value] of Object.entries(c.req.query())) form[key] = value;
    const home = homeDir(svc.ctx.env);
    if (!form.q?.trim()) {
      return c.html(layout("Search", "search", html`${searchForm(form)}${hint()}`));
    }
    let page: SearchPage;
    try {
      page = await searchPage(svc, parseQuery(c, searchQuery, ["q"]), startedAt);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return c.html(
        layout("Search", "search", html`${searchForm(form)}${notice(err.message, "error")}`),
        err.status,
      );
    }
    const body = html`${searchForm(form)}${page.note ? notice(upperFirst(page.note)) : ""}${
      results(page, form, home)
    }`;
    return c.html(layout(`Search: ${form.q}`, "search", body));
  });

function hint(): Html {
  return html`<p class="muted">Press <kbd>/</kbd> anywhere to jump to the search box. Words match
whole words and prefixes with <code>*</code>; quote a phrase; dates take
<code>2026-03-10</code>, <code>7d</code>, <code>12h</code>, <code>today</code>.</p>`;
}

function searchForm(form: Form): Html {
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
  return html`<h1>Search</h1>
<form class="search" method="get" action="/" role="search" aria-label="Search conversations">
<div class="q"><label for="q"><span>Search text (press <kbd>/</kbd>)</span><input id="q" name="q" type="search"
value="${form.q ?? ""}" required maxlength="4096" autocomplete="off"></label>
<button type="submit">Search</button></div>
${text("project", "Project directory", "/home/me/src/app")}
${select("agent", "Agent", AGENTS)}
${text("session", "Conversation", "claude:3f2a…")}
${select("kind", "Kind", KINDS)}
${select("role", "Role", ROLES)}
${text("since", "Since", "7d, 2026-03-10")}
${text("until", "Until", "today")}
${select("limit", "Hits per page", ["20", "50", "100"], "")}
</form>`;
}

function results(page: SearchPage, form: Form, home: string | undefined): Html {
  if (!page.hits.length) {
    return html`<p role="status">${page.offset ? "No more matches" : "No matches"}</p>`;
  }
  const first = page.offset + 1;
  const last = page.offset + page.hits.length;
  const pageLink = (offset: number) => {
    const params = new URLSearchParams(form);
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
  return html`<p role="status">Matches ${first} to ${last}</p>
<ol class="hits" start="${first}">${
    page.hits.map((hit, i) => hitItem(hit, page.highlights[i] ?? [], form, home))
  }</ol>${pager}`;
}

function hitItem(
  hit: SearchHit,
  ranges: [number, number][],
  form: Form,
  home: string | undefined,
): Html {
  const what = hit.role ? `${hit.kind}/${hit.role}` : hit.kind;
  const project = hit.project ?? hit.cwd;
  const filter = project && form.project !== project
    ? (() => {
      const params = new URLSearchParams(form);
      params.set("project", project);
      params.delete("offset");
      return html`
        <a href="/?${params}" class="muted">(only this project)</a>
      `;
    })()
    : "";
  const href = conversationHref(hit.conversation, {
    after: Math.max(0, hit.record - 1),
    anchor: hit.record,
  });
  return html`
    <li class="hit">
      <div class="meta-line">${time(hit.timestamp)} · ${hit.agent} · ${tilde(
        project,
        home,
      )}${filter} · ${what}</div>
      <a href="${href}">${hit.conversation} · record ${hit.record}</a>
      <p class="snippet">${marked(hit.snippet, ranges)}</p>
    </li>
  `;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
