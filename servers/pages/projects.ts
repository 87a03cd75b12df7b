// The projects page (`/projects`): every project in the history store with its conversations
// per agent and its last activity, linking to its sessions and to a search within it.

import { Hono } from "hono";
import { html } from "hono/html";
import { homeDir } from "../../lib/paths.ts";
import { projectSummaries } from "../../lib/store/conversations.ts";
import { iso } from "../../lib/store/records.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { sessionsHref } from "./sessions.ts";
import { ago, layout, projectAnchor, tilde } from "./layout.ts";

/** The route. */
export const projectsPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/projects", (c) => {
    const projects = withStore(svc, "projects", (store) => projectSummaries(store));
    const home = homeDir(svc.ctx.env);
    const now = svc.now();
    const total = projects.reduce((n, p) => n + p.conversations, 0);
    const body = html`
      <h1>Projects</h1>
      <p role="status"
        class="muted">${projects.length} ${projects.length === 1
          ? "project"
          : "projects"}, ${total} ${total === 1
          ? "conversation"
          : "conversations"}, most recently active first</p>
      <ul class="rows projects">${projects.map((p) => {
        const name = p.project === null ? "(no project directory)" : tilde(p.project, home);
        const headingId = p.project === null ? "p-none" : projectAnchor(p.project);
        return html`
          <li id="${headingId}">
            <span class="title">${p.project === null
              ? name
              : html`<a href="${sessionsHref(p.project)}" title="${p.project}">${name}</a>`}</span>
            <span class="side">${ago(iso(p.lastTs), now)}</span>
            <span class="meta-line">${p.agents.map((a, i) =>
              html`${i ? " " : ""}<span class="badge">${a.agent} ${a.conversations}</span>`
            )} · ${p.conversations} ${p.conversations === 1
              ? "conversation"
              : "conversations"}${p.project === null ? "" : html`
              · <a href="${sessionsHref(p.project)}">sessions</a>
            `}</span>
          </li>
        `;
      })}</ul>
    `;
    return c.html(layout("Projects", "projects", body));
  });
