// The sessions page (`/sessions?project=…`): a project's sessions as `resume` lists them, each with
// the command that resumes it to copy, a fork button and, for logbook's own, a rename form; the
// forms post here and come back to the list (303), so a reload never posts twice.

import { Hono } from "hono";
import { z } from "zod";
import { storeExists } from "../../lib/context.ts";
import { recentConversationRows } from "../../lib/store/conversations.ts";
import { conversationJson } from "../../lib/store/records.ts";
import type { Context } from "hono";
import { html } from "hono/html";
import { formatBytes, plural, tilde } from "../../lib/format.ts";
import { homeDir, type Project } from "../../lib/paths.ts";
import {
  forkSession,
  projectFrom,
  projectQuery,
  renameBody,
  renameSession,
  type SessionJson,
  type SessionsPage,
  sessionsPage,
  sessionsQuery,
} from "../api/sessions.ts";
import { type AppEnv, noStore, type Route, type Services, withStore } from "../_deps.ts";
import { ApiError, fromZod } from "../_errors.ts";
import { conversationId, parseId, parseQuery, queryInt } from "../_input.ts";
import { ago, conversationHref, type Html, layout, notice } from "./layout.ts";

/** The link to a project's sessions page, with extra query parameters. */
export function sessionsHref(project: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({ project, ...extra });
  return `/sessions?${params}`;
}

/** What the page says above the list after a fork or a rename. */
type Outcome = { forked: string } | { renamed: string } | { error: ApiError } | null;

/** The routes: the page, and the fork and rename forms (then back to the page). */
export const sessionsPageRoute: Route = (svc) =>
  new Hono<AppEnv>()
    .get("/sessions", (c) => {
      const raw = c.req.query("project") ?? "";
      if (!raw) return c.html(recentPage(svc, parseQuery(c, recentQuery)));
      let query;
      let project: Project;
      try {
        query = parseQuery(c, sessionsQuery);
        project = projectFrom(svc, query.project);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        return c.html(
          layout("Sessions", "sessions", html`${projectForm(raw)}${notice(err.message, "error")}`),
          err.status,
        );
      }
      const outcome = outcomeOf(c.req.query("forked"), c.req.query("renamed"));
      return c.html(page(svc, sessionsPage(svc, project, query), outcome));
    })
    .post("/sessions/:id/fork", (c) => {
      const id = parseId(c);
      const project = projectFrom(svc, parseQuery(c, projectQuery).project);
      try {
        const fork = forkSession(svc, project, id);
        return c.redirect(
          `${sessionsHref(svc.redact(project.root), { forked: fork.id })}#session-${fork.id}`,
          303,
        );
      } catch (err) {
        return failed(c, svc, project, err);
      }
    })
    .post("/sessions/:id/rename", async (c) => {
      const id = parseId(c);
      const project = projectFrom(svc, parseQuery(c, projectQuery).project);
      try {
        const form = await c.req.parseBody();
        const parsed = renameBody.safeParse({ title: form.title });
        if (!parsed.success) throw fromZod(parsed.error);
        const renamed = renameSession(svc, project, id, parsed.data.title);
        return c.redirect(
          `${
            sessionsHref(svc.redact(project.root), { renamed: renamed.id })
          }#session-${renamed.id}`,
          303,
        );
      } catch (err) {
        return failed(c, svc, project, err);
      }
    });

/** The list again, saying what went wrong, with the error's status. */
function failed(
  c: Context<AppEnv>,
  svc: Services,
  project: Project,
  err: unknown,
): Response | Promise<Response> {
  if (!(err instanceof ApiError) || err.status >= 500) throw err;
  return c.html(page(svc, sessionsPage(svc, project, {}), { error: err }), err.status);
}

function outcomeOf(forked: string | undefined, renamed: string | undefined): Outcome {
  if (forked !== undefined && conversationId.safeParse(forked).success) return { forked };
  if (renamed !== undefined && conversationId.safeParse(renamed).success) return { renamed };
  return null;
}

function page(svc: Services, list: SessionsPage, outcome: Outcome): Html {
  const home = homeDir(svc.ctx.env);
  const body = html`${projectForm(tilde(list.project, home))}
${outcomeNotice(list, outcome)}
${
    list.storeProblem
      ? notice(
        `The history store could not be read, so only logbook's own sessions are listed: ${list.storeProblem}`,
        "error",
      )
      : ""
  }
${
    list.corrupt.length
      ? notice(
        `${list.corrupt.length} session record${
          list.corrupt.length === 1 ? "" : "s"
        } of this project cannot be read and ${
          list.corrupt.length === 1 ? "is" : "are"
        } left out: ${list.corrupt.map((c) => `${tilde(c.path, home)} (${c.reason})`).join("; ")}`,
      )
      : ""
  }
${list.sessions.length ? sessionList(list, svc.now()) : empty(list)}`;
  return layout("Sessions", "sessions", body);
}

/** The query string of the sessions of every project. */
const recentQuery = z.object({
  limit: queryInt(1, 500).optional(),
  offset: queryInt(0, 1e9).optional(),
});

/** Sessions per page of the list of every project's. */
const RECENT_LIMIT = 50;

/** The most recent sessions of every project, as compact rows. */
function recentPage(svc: Services, query: z.infer<typeof recentQuery>): Html {
  const home = homeDir(svc.ctx.env);
  const limit = query.limit ?? RECENT_LIMIT;
  const offset = query.offset ?? 0;
  if (!storeExists(svc.ctx)) {
    return layout(
      "Sessions",
      "sessions",
      html`${projectForm("")}${notice(noStore().message)}`,
    );
  }
  const { rows, total } = withStore(
    svc,
    "recent_sessions",
    (store) => recentConversationRows(store, { limit, offset }),
  );
  const now = svc.now();
  const pageLink = (at: number) => {
    const params = new URLSearchParams();
    if (at > 0) params.set("offset", String(at));
    if (limit !== RECENT_LIMIT) params.set("limit", String(limit));
    return params.size ? `/sessions?${params}` : "/sessions";
  };
  const list = rows.map((row) => conversationJson(row, svc.redact));
  const body = html`${projectForm("")}
<h2>Recent sessions of every project</h2>
${
    list.length
      ? html`<p role="status" class="muted">Sessions ${offset + 1} to ${
        offset + list.length
      } of ${total}, newest first</p>
<ol class="rows recent">${
        list.map((conv) =>
          html`
            <li>
              <a class="title" href="${conversationHref(conv.id)}">${conv.title ?? conv.id}</a>
              <span class="side">${conv.lastTimestamp ? ago(conv.lastTimestamp, now) : ""}</span>
              <span
                class="meta-line"><span class="badge">${conv.agent}</span> · ${conv.project
                  ? html`<a href="${
                    sessionsHref(conv.project)
                  }" title="Sessions of ${conv.project}">${tilde(conv.project, home)}</a>`
                  : "no project"}${conv.messages
                  ? ` · ${conv.messages} ${conv.messages === 1 ? "message" : "messages"}`
                  : ""} · ${formatBytes(conv.bytes)}</span>
            </li>
          `
        )
      }</ol>
<nav class="pager" aria-label="Session pages">${
        offset > 0
          ? html`<a href="${pageLink(Math.max(0, offset - limit))}" rel="prev">← Newer</a>`
          : ""
      }${
        offset + list.length < total
          ? html`<a href="${pageLink(offset + limit)}" rel="next">Older →</a>`
          : ""
      }</nav>`
      : html`<p role="status">No sessions captured yet.</p>`
  }`;
  return layout("Sessions", "sessions", body);
}

function projectForm(project: string): Html {
  return html`
    <h1>Sessions</h1>
    <form class="search" method="get" action="/sessions" aria-label="Choose a project">
      <div
        class="q"><label for="project"><span>Project directory</span><input id="project" name="project"
    value="${project}" required maxlength="4096" autocomplete="off" placeholder="all projects: type one to see its sessions"></label>
    <button type="submit">Show sessions</button></div>
    </form>
  `;
}

function outcomeNotice(list: SessionsPage, outcome: Outcome): Html | string {
  if (outcome === null) return "";
  if ("error" in outcome) return notice(outcome.error.message, "error");
  const id = "forked" in outcome ? outcome.forked : outcome.renamed;
  const row = list.sessions.find((s) => s.nativeId === id || s.id === id);
  if (!row) return "";
  return "forked" in outcome
    ? html`
      <p class="notice ok"
        role="status">Forked into a new logbook session, “${row
          .title}”. Continue it with <code class="cmd">${row.resume}</code></p>
    `
    : html`<p class="notice ok" role="status">Renamed to “${row.title}”.</p>`;
}

function empty(list: SessionsPage): Html {
  return list.offset > 0
    ? html`<p role="status">No more sessions</p>`
    : html`<p role="status">No sessions in this project yet: logbook's own start with
<code>logbook chat</code>, and the other agents' appear once they are captured.</p>`;
}

/** A project's sessions; `list` is through the gate, its project too, which links carry. */
function sessionList(list: SessionsPage, now: number): Html {
  const first = list.offset + 1;
  const last = list.offset + list.sessions.length;
  const pageLink = (offset: number) =>
    sessionsHref(list.project, {
      ...(offset > 0 ? { offset: String(offset) } : {}),
      ...(list.limit !== 50 ? { limit: String(list.limit) } : {}),
    });
  const pager = html`<nav class="pager" aria-label="Session pages">${
    list.offset > 0
      ? html`<a href="${pageLink(Math.max(0, list.offset - list.limit))}" rel="prev">← Newer</a>`
      : ""
  }${
    list.next !== null ? html`<a href="${pageLink(list.next)}" rel="next">Older →</a>` : ""
  }</nav>`;
  return html`<p role="status">Sessions ${first} to ${last} of ${list.total}, newest first</p>
<ol class="rows sessions" start="${first}">${
    list.sessions.map((s, i) => sessionItem(s, list.offset + i, list.project, now))
  }</ol>${pager}`;
}

/**
 * One session as a compact row, as the list of every project's has them: its title and age,
 * then what it is beside the command that resumes it (to copy), fork, and rename in place.
 */
function sessionItem(s: SessionJson, n: number, project: string, now: number): Html {
  const titleId = `title-${n}`;
  const cmdId = `cmd-${n}`;
  const action = (verb: string) =>
    `/sessions/${encodeURIComponent(s.id)}/${verb}?${new URLSearchParams({ project })}`;
  const title = s.conversation
    ? html`<a href="${conversationHref(s.conversation)}" id="${titleId}">${s.title}</a>`
    : html`<strong id="${titleId}">${s.title}</strong>`;
  const facts = [
    s.agent,
    formatBytes(s.size),
    ...(s.messages ? [plural(s.messages, "message")] : []),
    ...(s.forkedFrom ? [html`forked from ${forkedFrom(s.forkedFrom)}`] : []),
  ];
  const fork = s.canFork
    ? html`<form method="post" action="${action("fork")}">
<button type="submit" aria-describedby="${titleId}">Fork</button></form>`
    : "";
  const rename = s.canRename
    ? html`
      <details class="rename">
        <summary aria-describedby="${titleId}">Rename</summary>
        <form method="post" action="${action("rename")}"><label>New title<input name="title"
      value="${s
        .title}" required maxlength="1000" autocomplete="off" aria-describedby="${titleId}"></label>
      <button type="submit" aria-describedby="${titleId}">Rename</button></form>
      </details>
    `
    : "";
  const mark = s.manifest
    ? html`
      <span class="warn">[manifest run]</span>
    `
    : "";
  const why = s.manifest
    ? html`
      <span class="muted">(no conversation: it cannot be forked or continued;
      resume prints what it produced)</span>
    `
    : "";
  const label = s.manifest ? "See what it produced" : "Resume";
  return html`
    <li class="session${s.manifest ? " manifest" : ""}" id="session-${s.nativeId}">
      <span class="title">${mark}${title}${why}</span>
      <span class="side">${ago(s.updatedAt, now)}</span>
      <div class="meta-line">${facts.map((f, i) => html`${i ? " · " : ""}${f}`)}</div>
      <div
        class="actions"><span class="resume"><span class="visually-hidden">${label}:</span><code class="cmd" id="${cmdId}" title="${s
          .resume}">${s.resume}</code>
    <button type="button" data-copy="${s
      .resume}" data-copy-for="${cmdId}" aria-describedby="${titleId}" hidden>Copy</button></span>${fork}${rename}</div>${s
        .resumeNote
      ? html`<div class="muted resume-note">Note: ${s.resumeNote}</div>`
      : ""}
    </li>
  `;
}

/** Where a fork came from: another agent's conversation links to its page. */
function forkedFrom(key: string): Html | string {
  return key.startsWith("logbook:") ? key : html`<a href="${conversationHref(key)}">${key}</a>`;
}
