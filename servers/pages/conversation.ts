// The conversation page (`/conversations/:id`): a page of records in order with roles, tool calls
// folded in `<details>`, each record's raw bytes viewable (through the gate, escaped), paging, the
// command that resumes the conversation in its agent, to copy, and a button that forks it.

import { Buffer } from "node:buffer";
import { Hono } from "hono";
import { html } from "hono/html";
import { formatBytes } from "../../lib/format.ts";
import { homeDir } from "../../lib/paths.ts";
import { commandLine, nativeCommand, type RowAgent } from "../../lib/sessions/resume.ts";
import type { ConversationJson } from "../../lib/store/records.ts";
import { conversationPage, pageQuery } from "../api/conversations.ts";
import type { AppEnv, Route } from "../_deps.ts";
import { parseId, parseQuery } from "../_input.ts";
import type { ShownPage, ShownRecord } from "../_redact.ts";
import { conversationHref, type Html, layout, tilde, time } from "./layout.ts";

/** The page sizes offered (records per page). */
const PAGE_SIZES = [10, 25, 50, 100, 200];
/** Records folded to one line, as `show` folds them. */
const FOLDED = new Set(["tool_call", "tool_result", "event"]);

/** The route. */
export const conversationPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/conversations/:id", (c) => {
    const id = parseId(c);
    const query = parseQuery(c, pageQuery);
    const page = conversationPage(svc, id, query);
    const home = homeDir(svc.ctx.env);
    const conv = page.conversation;
    const body = html`${header(conv, home)}${pager(page, query, "top")}
<section aria-label="Records">${page.records.map(record)}</section>
${pager(page, query, "bottom")}`;
    return c.html(layout(conv.title ?? conv.id, "conversation", body));
  });

function header(conv: ConversationJson, home: string | undefined): Html {
  const resume = conv.subagent ? null : resumeCommand(conv);
  const row = (label: string, value: Html | string | number) =>
    html`
      <tr>
        <th scope="row">${label}</th>
        <td>${value}</td>
      </tr>
    `;
  return html`<h1>${conv.title ?? conv.id}</h1>
<table class="facts">
${row("Conversation", conv.id)}
${row("Agent", conv.agentVersion ? `${conv.agent} ${conv.agentVersion}` : conv.agent)}
${row("Project", tilde(conv.project, home))}
${conv.cwd && conv.cwd !== conv.project ? row("Directory", tilde(conv.cwd, home)) : ""}
${conv.branch ? row("Branch", conv.branch) : ""}
${row("Time", html`${time(conv.firstTimestamp)} to ${time(conv.lastTimestamp)}`)}
${row("Size", `${conv.messages} messages, ${conv.records} records, ${formatBytes(conv.bytes)}`)}
${
    conv.parent
      ? row(
        conv.subagent ? "Subagent of" : "Forked from",
        html`<a href="${conversationHref(conv.parent)}">${conv.parent}</a>`,
      )
      : ""
  }
${conv.sourceGone ? row("Source", "deleted upstream; kept here") : ""}
</table>
${
    resume
      ? html`<p><span id="resume-label">Resume it:</span> <code class="cmd" id="resume-cmd">${resume}</code>
<button type="button" data-copy="${resume}" data-copy-for="resume-cmd" aria-describedby="resume-label" hidden>Copy</button></p>`
      : ""
  }${forkForm(conv)}`;
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
    <form method="post" action="${action}" class="actions">
      <button type="submit" aria-describedby="fork-note">Fork into a logbook session</button>
      <span class="muted"
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

function pager(
  page: ShownPage,
  query: { after?: number | undefined; limit?: number | undefined },
  where: "top" | "bottom",
): Html {
  const id = page.conversation.id;
  const limit = query.limit;
  const keep = limit === undefined ? {} : { limit };
  const first = query.after !== undefined && query.after > 0
    ? html`<a href="${conversationHref(id, keep)}">⇤ Start of the conversation</a>`
    : "";
  const next = page.next !== null
    ? html`<a href="${
      conversationHref(id, { ...keep, after: page.next })
    }" rel="next">Next page →</a>`
    : html`<span role="status">End of the conversation</span>`;
  const sizes = where === "top"
    ? html`
      <form method="get"
        action="${conversationHref(id)}">${query.after !== undefined
          ? html`<input type="hidden" name="after" value="${query.after}">`
          : ""}<label>Records per page<select name="limit">${PAGE_SIZES.map((n) =>
            n === (limit ?? 100)
              ? html`<option value="${n}" selected>${n}</option>`
              : html`<option value="${n}">${n}</option>`
          )}</select></label> <button type="submit">Show</button></form>
    `
    : "";
  return html`<nav class="pager" aria-label="${
    where === "top" ? "Pages" : "Pages (end)"
  }">${first}${next}${sizes}</nav>`;
}

function record(rec: ShownRecord): Html {
  const who = rec.kind === "message"
    ? (rec.role ?? "message")
    : rec.kind === "reasoning"
    ? "thinking"
    : rec.kind;
  const text = rec.text.trim();
  let body: Html | string;
  if (rec.kind === "meta" || !text) body = "";
  else if (FOLDED.has(rec.kind)) {
    const line = text.replace(/\s+/g, " ");
    const cut = line.length > 110 ? `${line.slice(0, 109)}…` : line;
    const mark = rec.kind === "tool_call" ? "▸" : rec.kind === "tool_result" ? "◂" : "·";
    body = html`
      <details class="fold">
        <summary>${mark} ${cut}</summary>
        <pre>${text}</pre>
      </details>
    `;
  } else body = html`<div class="text">${text}</div>`;
  const classes = `rec kind-${rec.kind}${rec.role ? ` role-${rec.role}` : ""}${
    rec.kind === "reasoning" ? " reasoning" : ""
  }`;
  return html`<article class="${classes}" id="r${rec.id}" aria-label="${who}, record ${rec.id}">
<div class="meta-line"><span class="who">${who}</span> · ${
    time(rec.timestamp)
  } · record ${rec.id}</div>
${body}
${rawView(rec)}
</article>`;
}

function rawView(rec: ShownRecord): Html {
  const bytes = Buffer.from(rec.raw, "base64");
  const note = rec.rawRedacted ? ", secrets redacted" : "";
  return html`
    <details class="raw">
      <summary>Raw bytes (${bytes.length} bytes at offset ${rec.offset}${note})</summary>
      <pre>${escapedText(bytes)}</pre>
    </details>
  `;
}

/** Decoded bytes with control characters (but newlines and tabs) shown as `\xNN`. */
function escapedText(bytes: Uint8Array): Html {
  const text = new TextDecoder().decode(bytes);
  const parts: Html[] = [];
  let at = 0;
  // deno-lint-ignore no-control-regex -- control characters are exactly what is made visible
  for (const m of text.matchAll(/[\x00-\x08\x0b-\x1f\x7f]/g)) {
    const code = m[0].charCodeAt(0).toString(16).padStart(2, "0");
    parts.push(html`${text.slice(at, m.index)}<span class="esc">\\x${code}</span>`);
    at = m.index + 1;
  }
  parts.push(html`${text.slice(at)}`);
  return html`${parts}`;
}
