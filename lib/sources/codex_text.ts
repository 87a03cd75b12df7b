// The text of Codex rollout lines: what capture indexes and what reading shows, apart from the
// capture code so that `search` and `show` load only this (lib/sources/readers.ts).

import type { TextReader } from "./adapter.ts";
import { looksLikeBase64, obj, str, stringLeaves } from "./_text.ts";

/** The text of one rollout line's bytes ("" for a line that is not a JSON record). */
export function codexLineText(bytes: Uint8Array): string {
  try {
    const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    return record ? textOfRecord(record) : "";
  } catch {
    return "";
  }
}

/**
 * Line types that record state, not conversation, kept raw as `meta`: surveyed from Codex
 * 0.169's rollout item variants (`token_usage_record` is its token accounting).
 */
export const STATE_LINES = new Set([
  "inter_agent_communication",
  "token_usage_record",
  "dynamic_tools_updated",
  "retained_context",
  "security_risk_score",
  "realtime_item",
]);

/** The top-level line types of the current format. */
export const LINE_TYPES = new Set([
  ...STATE_LINES,
  "session_meta",
  "response_item",
  "event_msg",
  "turn_context",
  "compacted",
  "world_state",
  "inter_agent_communication_metadata",
]);

/** Base64 payloads and data URLs: never indexed, also when a line is streamed. */
export const CODEX_SKIP_KEYS: ReadonlySet<string> = new Set([
  "encrypted_content",
  "image_url",
  "images",
]);

/** Codex rollouts, for reading. */
export const codexTranscriptText: TextReader = {
  agent: "codex",
  textOf: codexLineText,
  skipKeys: CODEX_SKIP_KEYS,
};

/** The searchable text of a line: what was said, run, returned or thought; never payloads. */
export function textOfRecord(record: Record<string, unknown>): string {
  const type = str(record.type);
  if (type === "compacted") return str(obj(record.payload)?.message) ?? "";
  if (type === "event_msg") return eventText(obj(record.payload));
  if (type === "response_item") return itemText(obj(record.payload));
  if (type && !LINE_TYPES.has(type) && !("payload" in record)) return itemText(record); // older
  return "";
}

function itemText(item: Record<string, unknown> | null): string {
  if (!item) return "";
  switch (item.type) {
    case "message":
    case "agent_message":
      return joinParts(contentParts(item.content));
    case "reasoning":
      return joinParts([...contentParts(item.summary), ...contentParts(item.content)]);
    case "function_call":
    case "tool_search_call":
      return joinParts([str(item.name) ?? "", ...argumentLeaves(item.arguments)]);
    case "custom_tool_call":
      return joinParts([str(item.name) ?? "", str(item.input) ?? ""]);
    case "function_call_output":
    case "custom_tool_call_output":
      return outputText(item.output);
    case "local_shell_call": {
      const action = obj(item.action);
      const command = Array.isArray(action?.command) ? action.command : [];
      return command.filter((c): c is string => typeof c === "string").join(" ");
    }
    case "web_search_call": {
      const action = obj(item.action);
      return joinParts(stringLeaves(
        action &&
          {
            query: action.query,
            queries: action.queries,
            url: action.url,
            pattern: action.pattern,
          },
        CODEX_SKIP_KEYS,
      ));
    }
    case "image_generation_call":
      return str(item.revised_prompt) ?? "";
    default:
      return "";
  }
}

/**
 * Events repeat indexed items. An agent message's words are its text (indexed only when no
 * response item repeats them, see `pairAgentMessage`); a review's findings exist only in an
 * event.
 */
function eventText(event: Record<string, unknown> | null): string {
  if (event?.type === "agent_message") return str(event.message) ?? "";
  if (!event || event.type !== "exited_review_mode") return "";
  const review = obj(event.review_output);
  if (!review) return "";
  const findings = Array.isArray(review.findings) ? review.findings.map(obj) : [];
  return joinParts([
    ...findings.flatMap((f) => [str(f?.title) ?? "", str(f?.body) ?? ""]),
    str(review.overall_explanation) ?? "",
  ]);
}

/** The texts of message content (a string, one item, or a list), leaving images and payloads out. */
export function contentParts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  const items = Array.isArray(content) ? content : [content];
  const parts: string[] = [];
  for (const item of items) {
    const block = obj(item);
    if (!block || block.type === "input_image" || block.type === "encrypted_content") continue;
    const text = str(block.text);
    if (text && !looksLikeBase64(text)) parts.push(text);
  }
  return parts;
}

/** A tool's output: a string (often JSON `{output, metadata}`), or content items. */
function outputText(output: unknown): string {
  if (typeof output === "string") {
    if (output.trimStart().startsWith("{")) {
      try {
        const inner = str(obj(JSON.parse(output))?.output);
        if (inner !== null) return inner;
      } catch {
        // Plain text that happens to start with a brace.
      }
    }
    return output;
  }
  const wrapped = obj(output);
  if (wrapped && !("type" in wrapped) && "content" in wrapped) return outputText(wrapped.content);
  return joinParts(contentParts(output));
}

/** A function call's arguments (a JSON string) as the commands, paths and patterns they carry. */
function argumentLeaves(args: unknown): string[] {
  if (typeof args !== "string") return stringLeaves(args, CODEX_SKIP_KEYS);
  try {
    return stringLeaves(JSON.parse(args), CODEX_SKIP_KEYS);
  } catch {
    return [args];
  }
}

export function joinParts(parts: string[]): string {
  return parts.filter((p) => p.length > 0).join("\n");
}

/** The text part Codex opens or closes an attached image with: `<image name=[Image #1] …>`. */
const IMAGE_FRAME = /^\s*(?:<image name=\[Image #\d+\][^>]*>|<\/image>)/;

/** True when `part` is only an image's frame: neither typed nor injected. */
export function isImageFrame(part: string): boolean {
  const frame = IMAGE_FRAME.exec(part);
  return frame !== null && part.slice(frame[0].length).trim() === "";
}

/**
 * Context Codex injects as a user message (`<environment_context>`, `<user_instructions>`, the
 * AGENTS.md instructions): not what the user typed, so never a title, and shown folded. The
 * frames of an image pasted before the words are skipped: a prompt may start with one.
 */
export function isCodexContext(text: string): boolean {
  let start = text;
  for (let frame = IMAGE_FRAME.exec(start); frame; frame = IMAGE_FRAME.exec(start)) {
    start = start.slice(frame[0].length);
  }
  start = start.trimStart();
  if (start === "") return false;
  return start.startsWith("<") || start.startsWith("# AGENTS.md instructions");
}
