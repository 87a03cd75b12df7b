// The projects page (`/projects`): every project in the history store with its conversations
// per agent (subagents counted apart, as the status page counts them) and its last activity,
// its name linking to its conversations (the search page narrowed to it, newest first) and a
// link to its sessions.

import { Hono } from "hono";
import { html } from "hono/html";
import { plural, tilde } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { projectSummaries } from "../../lib/store/conversations.ts";
import { iso } from "../../lib/store/records.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { projectConversationsHref } from "./search.ts";
import { sessionsHref } from "./sessions.ts";
import { ago, type Html, layout, projectAnchor } from "./layout.ts";

/** The route. */
export const projectsPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/projects", (c) => {
    const projects = withStore(svc, "projects", (store) => projectSummaries(store, svc.redact));
    const home = homeDir(svc.ctx.env);
    const now = svc.now();
    const total = projects.reduce((n, p) => n + p.conversations, 0);
    const subagents = projects.reduce((n, p) => n + p.subagents, 0);
    const body = html`
      <h1>Projects</h1>
      <p role="status" class="muted">${projects.length} ${projects.length === 1
        ? "project"
        : "projects"}, ${conversations(total, subagents)}, most recently active first</p>
      <ul class="rows projects">${projects.map((p) => {
        const headingId = p.project === null ? "p-none" : projectAnchor(p.project);
        const when = p.lastTs === null ? "" : ago(iso(p.lastTs), now);
        const badges = p.agents.map((a, i) =>
          html`${i ? " " : ""}<span class="badge">${a.agent} ${a.conversations}</span>`
        );
        if (p.project === null) {
          return html`
            <li id="${headingId}">
              <span class="title">(no project directory)</span>
              <span class="side">${when}</span>
              <span
                class="meta-line">${badges} · ${conversations(
                  p.conversations,
                  p.subagents,
                )} whose transcripts record no working directory, so no project holds them;
                search finds them with every project's</span>
            </li>
          `;
        }
        return html`
          <li id="${headingId}">
            <a class="title" href="${projectConversationsHref(p.project)}" title="${p
              .project}">${tilde(p.project, home)}</a>
            <span class="side">${when}</span>
            <span class="meta-line">${badges} · ${conversations(
              p.conversations,
              p.subagents,
            )} · <a href="${sessionsHref(p.project)}"
                aria-label="Sessions of ${tilde(p.project, home)}">sessions</a></span>
          </li>
        `;
      })}</ul>
    `;
    return c.html(layout("Projects", "projects", body));
  });

/** `12 conversations (+3 subagents)`. */
function conversations(n: number, subagents: number): Html {
  return html`${plural(n, "conversation")}${
    subagents ? ` (+${plural(subagents, "subagent")})` : ""
  }`;
}
