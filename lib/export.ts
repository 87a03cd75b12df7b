// A whole conversation as a document to keep or share (`show --format`): Markdown with tool calls
// in collapsible `<details>` blocks and none of the transcript's HTML or images (see
// `_safe_markdown.ts`), one self-contained HTML file (no script, no external asset, every
// transcript string escaped), the JSON of `show --json` with every record, or plain text.
// Texts arrive already through the gate (the deriver's redaction); this module only lays them out.
// A document is read later with cat and less as well as in a viewer, so the three text formats
// hold nothing a terminal would act on or a reader could not see, wherever they go (a file, a
// pipe, a dashboard download): every string is shown as the terminal filter shows it
// (`safe_text.ts`) before it is laid out and escaped, so text spelt out of tag characters is
// escaped as any other. JSON keeps every character, such ones escaped. What the agent put into the
// conversation (its rules, Codex's AGENTS.md and environment: `isInjected`) is folded as context,
// as `show` and the dashboard fold it, never laid out as someone's message with its headings.

import { safeMarkdown } from "./_safe_markdown.ts";
import { formatLocalTime } from "./format.ts";
import { mapStrings } from "./gate/secrets.ts";
import { safeJson } from "./safe_json.ts";
import { safeText } from "./safe_text.ts";
import { isInjected } from "./sources/injected.ts";
import type { Page, RecordJson } from "./store/conversations.ts";
import type { ConversationJson } from "./store/records.ts";

/** The formats `show --format` writes. */
export const EXPORT_FORMATS = ["md", "html", "json", "text"] as const;
/** One of them. */
export type ExportFormat = typeof EXPORT_FORMATS[number];

/** Kinds shown folded: a line in text, a collapsible block in Markdown and HTML. */
const FOLDED = new Set(["tool_call", "tool_result", "event", "reasoning"]);

/** A record as a document shows it: its text made visible, and whether the agent injected it. */
type Shown = RecordJson & { injected: boolean };

/**
 * `conversation` with all its `records` in `format`. Records of kind `meta` and records without
 * text are left out of the documents (JSON keeps every record), unless `all`.
 */
export function exportConversation(
  format: ExportFormat,
  conversation: ConversationJson,
  records: readonly RecordJson[],
  options: { all?: boolean } = {},
): string {
  if (format === "json") {
    const page: Page = { conversation, records: [...records], next: null };
    return safeJson(page) + "\n";
  }
  const visible = (text: string) => safeText(text, { multiline: true });
  const shown = records
    .filter((r) => options.all === true || (r.kind !== "meta" && r.text.trim() !== ""))
    .map((r) => ({ ...r, text: visible(r.text), injected: isInjected(conversation.agent, r) }));
  const about = mapStrings(conversation, visible);
  if (format === "md") return markdown(about, shown);
  if (format === "html") return html(about, shown);
  return text(about, shown);
}

/**
 * Who a record is, as a heading says it: the role of a message, else its kind; what the agent
 * injected as a user message (Codex's AGENTS.md, its environment) is `context`.
 */
function speaker(record: Shown): string {
  if (record.injected && record.role === "user") return "context";
  if (record.kind === "message") return record.role ?? "message";
  if (record.kind === "reasoning") return "thinking";
  return record.kind;
}

function facts(c: ConversationJson): [string, string][] {
  const rows: [string, string][] = [["Conversation", c.id], ["Agent", c.agent]];
  if (c.project ?? c.cwd) rows.push(["Project", (c.project ?? c.cwd)!]);
  if (c.cwd && c.cwd !== c.project) rows.push(["Directory", c.cwd]);
  if (c.branch) rows.push(["Branch", c.branch]);
  if (c.firstTimestamp) rows.push(["Started", formatLocalTime(c.firstTimestamp)]);
  if (c.lastTimestamp) rows.push(["Last record", formatLocalTime(c.lastTimestamp)]);
  return rows;
}

function titleOf(c: ConversationJson): string {
  return (c.title ?? c.id).replace(/\s+/g, " ").trim();
}

// --- Markdown ---

/** A fence longer than any run of backticks in `text`, so the block cannot be closed early. */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** Shown as a collapsible block: tool calls and the like, and what the agent injected. */
function folded(record: Shown): boolean {
  return FOLDED.has(record.kind) || record.injected;
}

function markdown(c: ConversationJson, records: readonly Shown[]): string {
  const out = [`# ${escapeMarkdownLine(titleOf(c))}`, ""];
  for (const [name, value] of facts(c)) out.push(`- **${name}:** ${inlineCode(value)}`);
  out.push("");
  for (const record of records) {
    const when = record.timestamp === null ? "" : ` · ${formatLocalTime(record.timestamp)}`;
    const body = record.text.trim();
    if (folded(record)) {
      const f = fence(body);
      out.push(
        "<details>",
        `<summary>${escapeHtml(`${speaker(record)}${when}`)}</summary>`,
        "",
        `${f}text`,
        body,
        f,
        "",
        "</details>",
        "",
      );
      continue;
    }
    out.push(`### ${speaker(record)}${when}`, "", safeMarkdown(body), "");
  }
  return out.join("\n");
}

/**
 * `text` as inline code, with a backtick run longer than any inside it, on one line (a blank
 * line would end the span and let what follows be read as Markdown, HTML too).
 */
function inlineCode(text: string): string {
  const value = text.replace(/\r\n|\r|\n/g, " ");
  const longest = Math.max(0, ...[...value.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = value.startsWith("`") || value.endsWith("`") ? " " : "";
  return `${ticks}${pad}${value}${pad}${ticks}`;
}

/** A title as one Markdown heading line: markup characters escaped. */
function escapeMarkdownLine(text: string): string {
  return text.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`);
}

// --- HTML ---

/** `text` with every character HTML gives meaning to escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem;
  color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5rem; margin-bottom: .5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; color: #555;
  font-size: .9rem; }
dt { font-weight: 600; }
dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
section { margin: 1.25rem 0; }
h2 { font-size: .95rem; margin: 0 0 .25rem; color: #555; }
h2 .who { color: #1d1d1f; text-transform: capitalize; }
.user h2 .who { color: #0b5cad; }
.assistant h2 .who { color: #1a7f37; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .4rem 0; border-left: 3px solid #ddd; padding-left: .6rem; color: #444; }
summary { cursor: pointer; font-size: .9rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.4 ui-monospace, monospace;
  background: #f6f6f7; padding: .5rem; }
@media (prefers-color-scheme: dark) {
  body { color: #e8e8ea; background: #161618; } h2 .who { color: #e8e8ea; }
  dl, h2, details { color: #aaa; } pre { background: #222226; }
}`;

function html(c: ConversationJson, records: readonly Shown[]): string {
  const title = escapeHtml(titleOf(c));
  const out = [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // Nothing may load or run: the page is the file.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="referrer" content="no-referrer">',
    `<title>${title}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    "<header>",
    `<h1>${title}</h1>`,
    "<dl>",
    ...facts(c).map(([name, value]) => `<dt>${name}</dt><dd>${escapeHtml(value)}</dd>`),
    "</dl>",
    "</header>",
    "<main>",
  ];
  for (const record of records) {
    const when = record.timestamp
      ? `<time datetime="${escapeHtml(record.timestamp)}">${
        escapeHtml(formatLocalTime(record.timestamp))
      }</time>`
      : "";
    const who = escapeHtml(speaker(record));
    const body = escapeHtml(record.text.trim());
    if (folded(record)) {
      const kind = record.injected ? "context" : record.kind;
      out.push(
        `<details class="${escapeHtml(kind)}"><summary>${who} · ${when}</summary>`,
        `<pre>${body}</pre></details>`,
      );
      continue;
    }
    out.push(
      `<section class="${who}">`,
      `<h2><span class="who">${who}</span> · ${when}</h2>`,
      `<div class="text">${body}</div>`,
      "</section>",
    );
  }
  out.push("</main>", "</body>", "</html>", "");
  return out.join("\n");
}

// --- Plain text ---

function text(c: ConversationJson, records: readonly Shown[]): string {
  const out = [titleOf(c), ...facts(c).map(([name, value]) => `${name}: ${value}`), ""];
  for (const record of records) {
    out.push(`[${formatLocalTime(record.timestamp)}] ${speaker(record)}`, record.text.trim(), "");
  }
  return out.join("\n");
}
