// A conversation's records as a chat, for the conversation page and its HTML export: user and
// assistant turns as messages with their Markdown rendered, each tool call folded to one line
// (the tool, the first line of its input, its result's size) that opens in place on its input
// and its result (paired by the call's id), reasoning folded, local commands as small event
// lines, `meta` and empty records quiet (hidden until asked for), and each record's raw bytes
// (through the gate, escaped) one small control away.

import { Buffer } from "node:buffer";
import { html, raw } from "hono/html";
import { formatBytes } from "../../lib/format.ts";
import {
  type Adapter,
  adapterOf,
  pathOfLocator,
  type SourceRef,
  type ToolCall,
  type ToolParts,
} from "../../lib/sources/adapter.ts";
import type { ShownRecord } from "../_redact.ts";
import { isInjected } from "../../lib/sources/injected.ts";
import { localCommand } from "../../lib/sources/local_command.ts";
import type { RenderMarkdown } from "./_markdown.ts";
import { type Html, time } from "./layout.ts";

/** How a record is shown. */
export type Shape = "message" | "context" | "tool" | "result" | "reasoning" | "event" | "quiet";

/**
 * How `rec` is shown: quiet ones are hidden until the reader asks for them, and what the agent of
 * the conversation (`agent`, where known) told the model is folded.
 */
export function shapeOf(rec: ShownRecord, agent?: string): Shape {
  if (rec.kind === "meta" || !rec.text.trim()) return "quiet";
  if (agent !== undefined && isInjected(agent, rec)) return "context";
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
      return localCommand(rec.text) ? "event" : "message";
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

/** What a record says about its tool calls and results (null: nothing, or not a tool record). */
export type ToolLookup = (rec: ShownRecord) => ToolParts | null;

/**
 * The lookup that asks each record's adapter (of the conversation's `agent`) what tools its raw
 * bytes (already through the gate) hold; every string it returns passes `redact` too.
 */
export function toolLookup(
  adapters: readonly Adapter[],
  agent: string,
  redact: (text: string) => string,
): ToolLookup {
  return (rec) => {
    if (rec.kind !== "tool_call" && rec.kind !== "tool_result") return null;
    const adapter = adapterOf(adapters, agent, rec.source);
    // The locator's own grammar: `#<row>` ends a database row's locator, and a folder may hold
    // a `#` too (`/mnt/backup#2/…`), which pathOfLocator keeps in the path.
    const path = pathOfLocator(rec.source);
    const ref: SourceRef = {
      agent: agent as SourceRef["agent"],
      locator: rec.source,
      path,
      format: path !== rec.source ? "rows" : path.endsWith(".zst") ? "jsonl.zst" : "jsonl",
    };
    const parts = adapter?.toolOf?.(Buffer.from(rec.raw, "base64"), ref);
    if (!parts) return null;
    return {
      calls: parts.calls.map((c) => ({ ...c, name: redact(c.name), input: redact(c.input) })),
      results: parts.results,
      output: parts.output === null ? null : redact(parts.output),
    };
  };
}

/** Tool calls and the results that answer them, on one page. */
export interface ToolPairs {
  parts: Map<number, ToolParts>;
  /** The results of each call, by `<record id>:<call index>`. */
  results: Map<string, ShownRecord[]>;
  /** Records shown inside their call's fold rather than on their own. */
  paired: Set<number>;
}

/** Pairs each result on the page with the latest call before it that has the id it names. */
export function pairTools(records: readonly ShownRecord[], lookup?: ToolLookup): ToolPairs {
  const pairs: ToolPairs = { parts: new Map(), results: new Map(), paired: new Set() };
  if (!lookup) return pairs;
  const calls = new Map<string, string>();
  for (const rec of records) {
    const parts = lookup(rec);
    if (!parts) continue;
    pairs.parts.set(rec.id, parts);
    parts.calls.forEach((call, i) => {
      if (call.id) calls.set(call.id, `${rec.id}:${i}`);
    });
    const at = parts.results.map((r) => calls.get(r.id)).find((key) => key !== undefined);
    if (rec.kind !== "tool_result" || at === undefined) continue;
    pairs.results.set(at, [...pairs.results.get(at) ?? [], rec]);
    pairs.paired.add(rec.id);
  }
  return pairs;
}

/** Options of `chatRecords`. */
export interface ChatOptions {
  /** The record a search hit opened: marked and opened. */
  hit?: number | undefined;
  /** False leaves each record's raw bytes out (a file has no use for them). */
  raw?: boolean;
  /** How the page's tool calls and results pair (see `pairTools`). */
  tools?: ToolPairs;
  /** The conversation's agent: what it injected (its rules, AGENTS.md) is folded. */
  agent?: string;
}

/** The records as chat items. */
export function chatRecords(
  records: readonly ShownRecord[],
  render: RenderMarkdown,
  options: ChatOptions = {},
): Html {
  const view: View = {
    render,
    hit: options.hit,
    withRaw: options.raw ?? true,
    tools: options.tools ?? pairTools(records),
    agent: options.agent,
  };
  return html`${
    records.filter((rec) => !view.tools.paired.has(rec.id)).map((rec) => chatItem(rec, view))
  }`;
}

interface View {
  render: RenderMarkdown;
  hit: number | undefined;
  withRaw: boolean;
  tools: ToolPairs;
  agent: string | undefined;
}

function chatItem(rec: ShownRecord, view: View): Html {
  const shape = shapeOf(rec, view.agent);
  const text = rec.text.trim();
  const isHit = rec.id === view.hit;
  const classes = [
    "rec",
    `kind-${rec.kind}`,
    rec.role ? `role-${rec.role}` : "",
    `shape-${shape}`,
    shape === "quiet" ? "quiet" : "",
    isHit ? "is-hit" : "",
  ].filter(Boolean).join(" ");
  const label = `${
    shape === "message" || shape === "context" ? speaker(rec) : words(rec.kind)
  }, record ${rec.id}${isHit ? ", the search hit" : ""}`;
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
<div class="md">${raw(view.render(text))}</div>`;
      break;
    case "context":
      body = html`
        <details class="fold context" ${open}>
          <summary><span class="tag">${rec.role === "user"
            ? "context"
            : rec.role}</span> ${firstLine(text, 100)}</summary>
          <div class="md">${raw(view.render(text))}</div>
        </details>
      `;
      break;
    case "reasoning":
      body = html`
        <details class="fold thinking" ${open}>
          <summary><span class="tag">thinking</span> ${raw(
            view.render.inline(firstLine(text, 100)),
          )}</summary>
          <div class="md">${raw(view.render(text))}</div>
        </details>
      `;
      break;
    case "tool":
      body = toolCalls(rec, view);
      break;
    case "result":
      body = html`
        <details class="fold result" ${open}>
          <summary><span class="tag">result</span> ${formatBytes(byteLength(text))} · <span
              class="first">${firstLine(text)}</span></summary>
          <pre>${preText(rec.text)}</pre>
        </details>
      `;
      break;
    case "event":
      body = eventLine(text, open);
      break;
    default:
      body = html`<div class="fold quiet-line"><span class="tag">${rec.kind}</span> ${
        rec.role ?? ""
      } ${time(rec.timestamp)}</div>`;
  }
  return html`<article class="${classes}" id="r${rec.id}" aria-label="${label}">
${body}
${view.withRaw ? rawView(rec) : ""}
</article>`;
}

/**
 * A tool-call record: one folded line per call (its tool, the first line of its input, and its
 * result's size when the result is on the page), opening on the input and the result.
 */
function toolCalls(rec: ShownRecord, view: View): Html {
  const parts = view.tools.parts.get(rec.id);
  // Without what the adapter says, the text is the tool's name, then its input.
  const [name = "tool", ...input] = rec.text.trim().split("\n");
  const calls: ToolCall[] = parts?.calls.length
    ? parts.calls
    : [{ id: null, name, input: input.join("\n") }];
  return html`${
    calls.map((call, i) => {
      const results = view.tools.results.get(`${rec.id}:${i}`) ?? [];
      const output = parts?.output ?? null;
      const hitInside = rec.id === view.hit || results.some((r) => r.id === view.hit);
      const failed = results.some((r) =>
        view.tools.parts.get(r.id)?.results.some((x) => x.error && x.id === call.id)
      );
      const size = output !== null
        ? byteLength(output.trim())
        : results.length
        ? results.reduce((n, r) => n + byteLength(r.text.trim()), 0)
        : null;
      return html`
        <details class="fold tool" ${hitInside ? raw(" open") : ""}>
          <summary><span class="tag">${firstLine(call.name, 40)}</span> <code>${firstLine(
            call.input,
          )}</code>${size === null ? "" : html`
            <span class="out${failed ? " failed" : ""}">→ ${failed ? "failed, " : ""}${size
              ? formatBytes(size)
              : "no output"}</span>
          `}</summary>
          ${call.input.trim() ? html`<pre class="input">${call.input.trim()}</pre>` : ""}
          ${output !== null && output.trim()
            ? html`<pre class="output">${output.trim()}</pre>`
            : ""}
          ${results.map((result) => pairedResult(result, view))}
        </details>
      `;
    })
  }`;
}

/** A result shown inside its call's fold, keeping its own anchor, mark and raw bytes. */
function pairedResult(rec: ShownRecord, view: View): Html {
  const text = preText(rec.text);
  const isHit = rec.id === view.hit;
  return html`
    <div class="rec result-in${isHit ? " is-hit" : ""}" id="r${rec.id}" role="group"
      aria-label="Result, record ${rec.id}${isHit ? ", the search hit" : ""}">
    <p class="result-head"><span class="tag">result</span> ${text
      ? formatBytes(byteLength(rec.text.trim()))
      : "no output"}${isHit
      ? html`
        <span class="hit-tag">search hit</span>
      `
      : ""}</p>
    ${text ? html`<pre class="output">${text}</pre>` : ""}
    ${view.withRaw ? rawView(rec) : ""}
    </div>
  `;
}

/** An event as one small line: a local command as what was typed, its output folded. */
function eventLine(text: string, open: Html | string): Html {
  const local = localCommand(text);
  if (local && "command" in local) {
    return html`<p class="fold event-line"><span class="tag">command</span> <code>${local.command}</code></p>`;
  }
  if (local && "note" in local) {
    return html`<p class="fold event-line"><span class="tag">note</span> ${
      firstLine(local.note)
    }</p>`;
  }
  const body = local && "output" in local ? local.output : text;
  const tag = local ? "output" : "event";
  return html`
    <details class="fold event" ${open}>
      <summary><span class="tag">${tag}</span> ${firstLine(body)}</summary>
      <pre>${body}</pre>
    </details>
  `;
}

/** A kind in plain words. */
function words(kind: string): string {
  return kind.replaceAll("_", " ");
}

/** Text for a `<pre>`: without blank lines around it, its first line's indent kept. */
function preText(text: string): string {
  return text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
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
