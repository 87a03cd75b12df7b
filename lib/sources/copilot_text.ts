// The text of GitHub Copilot CLI event records (`session-state/<id>/events.jsonl`): what capture
// indexes and what reading shows, apart from the capture code so that `search` and `show` load
// only this (lib/agents.ts READERS).

import type { TextPath, TextReader, ToolParts } from "./adapter.ts";
import { obj, str, stringLeaves } from "./_text.ts";
import { joinParts } from "./codex_text.ts";

/**
 * Keys whose strings are never text: `transformedContent` repeats a prompt with the time put
 * before it, `detailedContent` repeats a tool's output as a diff, `toolTelemetry` is counters.
 */
export const COPILOT_SKIP_KEYS: ReadonlySet<string> = new Set([
  "transformedContent",
  "detailedContent",
  "toolTelemetry",
]);

/**
 * Where a record's text is, for a line too long to parse: what was said (`data.content`), a
 * notice (`data.message`), a tool's output (`data.result.content`) and the tool requests'
 * names and arguments.
 */
export const copilotTextPath: TextPath = (path) => {
  if (path[0] !== "data") return false;
  if (path.length === 2) return path[1] === "content" || path[1] === "message";
  if (path[1] === "result") return path[2] === "content" && path.length === 3;
  if (path[1] !== "toolRequests" || typeof path[2] !== "number") return false;
  return path[3] === "arguments" || (path[3] === "name" && path.length === 4);
};

/** The text of one events.jsonl line's bytes ("" for a line that is not a JSON record). */
export function copilotLineText(bytes: Uint8Array): string {
  try {
    const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    return record ? textOfRecord(record) : "";
  } catch {
    return "";
  }
}

/** Copilot's event logs, for reading. */
export const copilotText: TextReader = {
  agent: "copilot",
  textOf: copilotLineText,
  skipKeys: COPILOT_SKIP_KEYS,
  textPath: copilotTextPath,
};

/**
 * The searchable text of a record: a prompt, the system prompt, an answer with the tools it
 * asks for, a tool's output, a notice (`session.info`, a rewind's say). Everything else (turn
 * marks, usage, the tool run's start that repeats its request) has none.
 */
export function textOfRecord(record: Record<string, unknown>): string {
  const data = obj(record.data);
  if (!data) return "";
  switch (record.type) {
    case "user.message":
    case "system.message":
      return str(data.content) ?? "";
    case "assistant.message": {
      const requests = Array.isArray(data.toolRequests) ? data.toolRequests.map(obj) : [];
      return joinParts([
        str(data.content) ?? "",
        ...requests.flatMap((r) => [str(r?.name) ?? "", ...argumentLeaves(r?.arguments)]),
      ]);
    }
    case "tool.execution_complete":
      return resultText(data);
    case "session.info":
      return str(data.message) ?? "";
    default:
      return "";
  }
}

/** A tool run's output, or its error's message when it failed without one. */
function resultText(data: Record<string, unknown>): string {
  const content = obj(data.result)?.content;
  if (typeof content === "string") return content;
  if (content !== undefined) return joinParts(stringLeaves(content, COPILOT_SKIP_KEYS));
  const error = data.error;
  return str(error) ?? str(obj(error)?.message) ?? "";
}

/** A tool request's arguments: an object, or JSON text (parsed; kept as text when it is not JSON). */
function argumentValue(args: unknown): unknown {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** A tool request's arguments as the strings they carry. */
function argumentLeaves(args: unknown): string[] {
  return stringLeaves(argumentValue(args), COPILOT_SKIP_KEYS);
}

/** Arguments a tool's input is told by first: what it runs, reads or asks. */
const FIRST_ARGUMENTS = ["command", "path", "pattern", "query", "url", "prompt", "description"];

/** A tool request's input as text, what matters first (a command, a path). */
function callInput(args: unknown): string {
  const fields = obj(argumentValue(args));
  if (!fields) return joinParts(argumentLeaves(args));
  const first = FIRST_ARGUMENTS.filter((key) => key in fields);
  const rest = Object.fromEntries(Object.entries(fields).filter(([k]) => !first.includes(k)));
  return joinParts([
    ...first.flatMap((key) => stringLeaves(fields[key], COPILOT_SKIP_KEYS)),
    ...stringLeaves(rest, COPILOT_SKIP_KEYS),
  ]);
}

/**
 * The tool calls an `assistant.message` asks for (`toolRequests`) and the result a
 * `tool.execution_complete` holds (by its `toolCallId`), or null. The run's start
 * (`tool.execution_start`) repeats the request: null, so a call is told once.
 */
export function toolOfRecord(record: Record<string, unknown>): ToolParts | null {
  const data = obj(record.data);
  if (!data) return null;
  if (record.type === "assistant.message") {
    const requests = Array.isArray(data.toolRequests) ? data.toolRequests.map(obj) : [];
    const calls = requests.flatMap((r) =>
      r
        ? [{ id: str(r.toolCallId), name: str(r.name) ?? "tool", input: callInput(r.arguments) }]
        : []
    );
    return calls.length ? { calls, results: [], output: null } : null;
  }
  if (record.type === "tool.execution_complete") {
    const id = str(data.toolCallId);
    return id
      ? { calls: [], results: [{ id, error: data.success === false }], output: null }
      : null;
  }
  return null;
}

/** The tool parts of one line's bytes, or null. */
export function copilotLineTool(bytes: Uint8Array): ToolParts | null {
  try {
    const record = obj(JSON.parse(new TextDecoder().decode(bytes)));
    return record ? toolOfRecord(record) : null;
  } catch {
    return null;
  }
}
