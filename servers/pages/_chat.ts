// A conversation's records as a chat, for the conversation page and its HTML export: user and
// assistant turns as messages with their Markdown rendered, tool calls and results folded to one
// line each, reasoning folded, `meta` and empty records quiet (hidden until asked for), and each
// record's raw bytes (through the gate, escaped) one click away.

import { Buffer } from "node:buffer";
import { html, raw } from "hono/html";
import { formatBytes } from "../../lib/format.ts";
import type { ShownRecord } from "../_redact.ts";
import type { RenderMarkdown } from "./_markdown.ts";
import { type Html, time } from "./layout.ts";

/** How a record is shown. */
export type Shape = "message" | "tool" | "result" | "reasoning" | "event" | "quiet";

/** How `rec` is shown: quiet ones are hidden until the reader asks for them. */
export function shapeOf(rec: ShownRecord): Shape {
  if (rec.kind === "meta" || !rec.text.trim()) return "quiet";
  switch (rec.kind) {
    case "tool_call":
      return "tool";
    case "tool_result":
      return "result";
    case "reasoning":
      return "reasoning";
    case "event":
      return "event";
    default:
      return "message";
  }
}

/** Who a message is from, as its heading says. */
export function speaker(rec: ShownRecord): string {
  if (rec.kind === "summary") return "Summary";
  switch (rec.role) {
    case "user":
      return "User";
    case "assistant":
      return "Assistant";
    case "system":
      return "System";
    case "developer":
      return "Developer";
    default:
      return rec.kind;
  }
}

/** The first line of `text`, cut to `max` characters. */
export function firstLine(text: string, max = 120): string {
  const line = text.trim().split("\n", 1)[0]?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The records as chat items; `hit` is marked and opened; `raw: false` leaves raw bytes out. */
export function chatRecords(
  records: readonly ShownRecord[],
  render: RenderMarkdown,
  options: { hit?: number | undefined; raw?: boolean } = {},
): Html {
  const withRaw = options.raw ?? true;
  return html`${records.map((rec) => chatItem(rec, render, rec.id === options.hit, withRaw))}`;
}

function chatItem(
  rec: ShownRecord,
  render: RenderMarkdown,
  isHit: boolean,
  withRaw: boolean,
): Html {
  const shape = shapeOf(rec);
  const text = rec.text.trim();
  const classes = [
    "rec",
    `kind-${rec.kind}`,
    rec.role ? `role-${rec.role}` : "",
    `shape-${shape}`,
    shape === "quiet" ? "quiet" : "",
    isHit ? "is-hit" : "",
  ].filter(Boolean).join(" ");
  const label = `${shape === "message" ? speaker(rec) : rec.kind}, record ${rec.id}${
    isHit ? ", the search hit" : ""
  }`;
  const open = isHit ? raw(" open") : "";
  let body: Html;
  switch (shape) {
    case "message":
      body = html`<header class="msg-head"><span class="who">${speaker(rec)}</span> ${
        rec.timestamp ? time(rec.timestamp) : ""
      }${
        isHit
          ? html`
            <span class="hit-tag">search hit</span>
          `
          : ""
      }</header>
<div class="md">${raw(render(text))}</div>`;
      break;
    case "reasoning":
      body = html`
        <details class="fold thinking" ${open}>
          <summary><span class="tag">thinking</span> ${firstLine(text, 100)}</summary>
          <div class="md">${raw(render(text))}</div>
        </details>
      `;
      break;
    case "tool": {
      const [name = "tool", ...input] = text.split("\n");
      body = html`
        <details class="fold tool" ${open}>
          <summary><span class="tag">${firstLine(name, 40)}</span> <code>${firstLine(
            input.join("\n"),
          )}</code></summary>
          <pre>${input.join("\n")}</pre>
        </details>
      `;
      break;
    }
    case "result":
      body = html`
        <details class="fold result" ${open}>
          <summary><span class="tag">result</span> ${formatBytes(
            new TextEncoder().encode(text).length,
          )} · <span class="first">${firstLine(text)}</span></summary>
          <pre>${text}</pre>
        </details>
      `;
      break;
    case "event":
      body = html`
        <details class="fold event" ${open}>
          <summary><span class="tag">event</span> ${firstLine(text)}</summary>
          <pre>${text}</pre>
        </details>
      `;
      break;
    default:
      body = html`<div class="fold quiet-line"><span class="tag">${rec.kind}</span> ${
        rec.role ?? ""
      } ${time(rec.timestamp)}</div>`;
  }
  return html`<article class="${classes}" id="r${rec.id}" aria-label="${label}">
${body}
${withRaw ? rawView(rec) : ""}
</article>`;
}

/** A record's raw bytes, through the gate, with control characters made visible. */
export function rawView(rec: ShownRecord): Html {
  const bytes = Buffer.from(rec.raw, "base64");
  const note = rec.rawRedacted ? ", secrets redacted" : "";
  return html`
    <details class="raw">
      <summary aria-label="Raw bytes (${bytes.length} bytes at offset ${rec.offset}${note})"
        title="Raw bytes (${bytes.length} bytes at offset ${rec.offset}${note})">raw</summary>
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
