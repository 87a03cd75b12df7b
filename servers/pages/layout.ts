// The frame every dashboard page shares (skip link, navigation, the inline style and script)
// and small formatting helpers; every value goes into the HTML escaped by `html`.

import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { timeAgo } from "../../lib/format.ts";
import { SCRIPT, STYLE } from "./assets.ts";

/** A piece of HTML as `html` builds it. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** Which navigation entry is current. */
export type Section =
  | "search"
  | "projects"
  | "sessions"
  | "usage"
  | "status"
  | "conversation"
  | "error";

/** A whole page: the frame around `body`. */
export function layout(title: string, section: Section, body: Html): Html {
  const link = (href: string, label: string, key: string, own: Section) =>
    html`
      <a href="${href}" accesskey="${key}" ${section === own
        ? raw(' aria-current="page"')
        : ""}>${label}</a>
    `;
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <link rel="icon" href="data:,">
        <title>${title} · logbook</title>
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <span class="brand">logbook</span>
          <nav aria-label="Dashboard">${link("/", "Search", "s", "search")}${link(
            "/projects",
            "Projects",
            "p",
            "projects",
          )}${link("/sessions", "Sessions", "r", "sessions")}${link(
            "/usage",
            "Usage",
            "u",
            "usage",
          )}${link(
            "/status",
            "Status",
            "t",
            "status",
          )}</nav>
        </header>
        <main id="main" tabindex="-1">
    ${body}
        </main>
        <script>${raw(SCRIPT)}</script>
      </body>
    </html>
  `;
}

/** A page that only says what went wrong. */
export function errorPage(status: number, message: string): Html {
  const title = status === 401
    ? "Access token needed"
    : status === 403
    ? "Not allowed"
    : status === 404
    ? "Not found"
    : status >= 500
    ? "Something went wrong"
    : "Bad request";
  return layout(
    title,
    "error",
    html`
      <h1>${title}</h1>
      <p class="notice error" role="alert">${message}</p>
    `,
  );
}

/** A notice box (`role="alert"` for errors). */
export function notice(message: string, kind: "info" | "error" = "info"): Html {
  return kind === "error"
    ? html`<p class="notice error" role="alert">${message}</p>`
    : html`<p class="notice">${message}</p>`;
}

/** `2026-09-14 08:47` from an ISO time, in UTC as stored; `-` for none. */
export function shortTime(iso: string | null): string {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "-";
}

/** `<time>` saying how long ago, with the exact time as its tooltip. */
export function ago(iso: string | null, now: number): Html {
  if (!iso) return html`-`;
  const then = Date.parse(iso);
  // A time that cannot be read, or one after now, is shown as it is.
  const words = Number.isFinite(then) && then <= now ? timeAgo(then, now) : shortTime(iso);
  return html`<time datetime="${iso}" title="${shortTime(iso)}">${words}</time>`;
}

/** `<time>` for an ISO time. */
export function time(iso: string | null): Html {
  return iso ? html`<time datetime="${iso}">${shortTime(iso)}</time>` : html`-`;
}

/** `text` with the `[start, end)` ranges wrapped in `<mark>`, everything escaped. */
export function marked(text: string, ranges: readonly [number, number][]): Html {
  const merged: [number, number][] = [];
  for (const [a, b] of [...ranges].sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const parts: Html[] = [];
  let at = 0;
  for (const [a, b] of merged) {
    if (a < at || b > text.length) continue;
    parts.push(html`${text.slice(at, a)}<mark>${text.slice(a, b)}</mark>`);
    at = b;
  }
  parts.push(html`${text.slice(at)}`);
  return html`${parts}`;
}

/** The link to a conversation page, optionally starting at a record. */
export function conversationHref(
  id: string,
  options: { after?: number; limit?: number; anchor?: number; hit?: number } = {},
): string {
  const params = new URLSearchParams();
  if (options.after !== undefined) params.set("after", String(options.after));
  if (options.hit !== undefined) params.set("hit", String(options.hit));
  if (options.limit !== undefined) params.set("limit", String(options.limit));
  const query = params.size ? `?${params}` : "";
  const anchor = options.anchor === undefined ? "" : `#r${options.anchor}`;
  return `/conversations/${encodeURIComponent(id)}${query}${anchor}`;
}

/** The anchor of a project on the projects page. */
export function projectAnchor(project: string): string {
  return `p-${encodeURIComponent(project).replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
