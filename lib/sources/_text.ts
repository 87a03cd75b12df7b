// Small text helpers the adapters share: base64 detection, titles, flattening tool input.

import type { ToolParts, Usage } from "./adapter.ts";

const BASE64_RUN = /^[A-Za-z0-9+/=_-]{200,}$/;

/** True for a long run of base64 characters with no spaces: a payload, not text. */
export function looksLikeBase64(text: string): boolean {
  if (text.length < 200) return false;
  if (text.startsWith("data:") && text.includes(";base64,")) return true;
  return BASE64_RUN.test(text.length > 4096 ? text.slice(0, 4096) : text);
}

// A title candidate is bounded so that redacting it stays cheap; what the bound cuts off lies far
// beyond the 80 characters a title keeps, whatever redaction shortens before it.
const TITLE_LINE_MAX = 4096;

/**
 * The first non-empty line of `text`, trimmed: a title candidate. Capture redacts it and only
 * then cuts it (`cutTitle` in the store), so a cut never leaves part of a secret the gate cannot
 * recognise.
 */
export function titleFrom(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0) ?? "";
  return line.length > TITLE_LINE_MAX ? line.slice(0, TITLE_LINE_MAX) : line;
}

/**
 * The string leaves of a JSON value, joined by newlines: tool inputs become searchable as the
 * commands, paths and patterns they carry, without JSON punctuation. Base64 payloads and the
 * values of `skipKeys` are left out.
 */
export function stringLeaves(value: unknown, skipKeys: ReadonlySet<string>, out: string[] = []) {
  if (typeof value === "string") {
    if (!looksLikeBase64(value)) out.push(value);
  } else if (typeof value === "number" || typeof value === "boolean") {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const item of value) stringLeaves(item, skipKeys, out);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (!skipKeys.has(key)) stringLeaves(item, skipKeys, out);
    }
  }
  return out;
}

/** Epoch milliseconds of an ISO string or a number, or null. */
export function toEpochMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) {
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** The value as a non-empty string, or null. */
export function str(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** The JSON object one line's bytes hold, or null for anything else. */
export function jsonRecord(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    return obj(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return null;
  }
}

/** A row of another program's database as stored (`{"table":…,…}`), of one of `tables`; or why not. */
export function storedRow<T extends string>(
  bytes: Uint8Array,
  tables: readonly T[],
): { table: T; row: Record<string, unknown> } | { bad: string } {
  let row: Record<string, unknown> | null;
  try {
    row = obj(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return { bad: "a row that is not JSON" };
  }
  const table = row?.table;
  if ((tables as readonly unknown[]).includes(table)) return { table: table as T, row: row! };
  return { bad: `a row of table ${JSON.stringify(table ?? null)}` };
}

/**
 * The `{"type": …}` items of a JSON list a message keeps as a string in one of its columns (its
 * `noun`: `parts`, `content`), or why they cannot be read.
 */
export function typedItems(
  text: unknown,
  noun: string,
  item: string,
): (Record<string, unknown> & { type: string })[] | { bad: string } {
  const are = noun.endsWith("s") ? "are" : "is";
  if (typeof text !== "string") return { bad: `a message without ${noun}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { bad: `a message whose ${noun} ${are} not JSON` };
  }
  if (!Array.isArray(value)) return { bad: `a message whose ${noun} ${are} not a list` };
  const items: (Record<string, unknown> & { type: string })[] = [];
  for (const entry of value) {
    const found = obj(entry);
    const type = found && str(found.type);
    if (!found || !type) return { bad: `${item} without a type` };
    items.push({ ...found, type });
  }
  return items;
}

/** A token count as an agent wrote it: a whole number of 0 or more, else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * A model call's usage as the Gemini API reports it (`promptTokenCount` includes the cached
 * tokens, which are cache reads; thoughts are billed as output), by `call`.
 */
export function geminiApiUsage(
  call: string,
  model: string | null,
  prompt: unknown,
  cached: unknown,
  output: unknown,
  thoughts: unknown,
): Usage | null {
  const read = tokenCount(cached);
  const input = Math.max(0, tokenCount(prompt) - read);
  const out = tokenCount(output) + tokenCount(thoughts);
  if (!input && !read && !out) return null;
  return { call, model, input, output: out, cacheWrite: 0, cacheRead: read, cost: null };
}

/** The value as a plain object, or null. */
export function obj(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
}

/**
 * The tool calls and results of Anthropic-style content blocks (`tool_use {id, name, input}`,
 * `tool_result {tool_use_id, is_error}`), as Droid and Cline write them; null for none.
 */
export function blockToolParts(content: unknown, skipKeys: ReadonlySet<string>): ToolParts | null {
  if (!Array.isArray(content)) return null;
  const parts: ToolParts = { calls: [], results: [], output: null };
  for (const item of content) {
    const block = obj(item);
    const resultOf = str(block?.tool_use_id);
    if (block?.type === "tool_use") {
      parts.calls.push({
        id: str(block.id),
        name: str(block.name) ?? "tool",
        input: stringLeaves(block.input, skipKeys).join("\n"),
      });
    } else if (block?.type === "tool_result" && resultOf) {
      parts.results.push({ id: resultOf, error: block.is_error === true });
    }
  }
  return parts.calls.length || parts.results.length ? parts : null;
}
