// Compaction of a long session: where to cut (never between a tool call and its result, the
// newest rounds kept whole), a plain-text snapshot written before anything is replaced, and a
// summary from the model that is never accepted cut off, empty or oversized.

import { join } from "../path.ts";
import type { DataPaths } from "../paths.ts";
import { writeFileAtomic } from "../private_fs.ts";
import type { ChatMessage, Completion, ModelClient } from "./model.ts";
import type { SessionMessage, SessionRecord } from "./records.ts";
import { formatCount, messageOf } from "../format.ts";

/** The largest summary accepted, in bytes of UTF-8. */
export const SUMMARY_MAX_BYTES = 65_536;
/** How many of the newest rounds a compaction keeps whole. */
export const KEEP_ROUNDS = 2;
/** How many snapshots are kept (the newest). */
export const SNAPSHOTS_KEPT = 300;

/** Thrown when the snapshot cannot be written: the compaction is refused, nothing changes. */
export class SnapshotError extends Error {
  override name = "SnapshotError";
}

/** Thrown when the model's summary was rejected twice: the record stays as it was. */
export class CompactionError extends Error {
  override name = "CompactionError";
}

/** A message as the cut sees it: record messages may carry tool calls and tool results. */
export interface CutMessage {
  role: string;
  tool_calls?: readonly { id: string }[];
  tool_call_id?: string;
}

/**
 * Where to cut `messages`: everything before the returned index is replaced by a summary, the
 * rest stays. A round starts at each user message; the newest `keepRounds` rounds stay whole,
 * and the cut moves earlier until no tool result is kept whose call would be replaced (or the
 * other way round). Returns 0 when there is nothing to replace.
 */
export function planCut(messages: readonly CutMessage[], keepRounds = KEEP_ROUNDS): number {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "user") starts.push(i);
  });
  if (starts.length <= keepRounds) return 0;
  let cut = starts[starts.length - keepRounds]!;
  while (cut > 0 && splitsToolPair(messages, cut)) cut--;
  return cut;
}

/** True when a tool call and its result would fall on different sides of `cut`. */
function splitsToolPair(messages: readonly CutMessage[], cut: number): boolean {
  const before = new Set<string>();
  for (const m of messages.slice(0, cut)) {
    for (const call of m.tool_calls ?? []) before.add(call.id);
  }
  const after = new Set<string>();
  for (const m of messages.slice(cut)) for (const call of m.tool_calls ?? []) after.add(call.id);
  for (const m of messages.slice(cut)) {
    if (m.tool_call_id !== undefined && before.has(m.tool_call_id)) return true;
  }
  for (const m of messages.slice(0, cut)) {
    if (m.tool_call_id !== undefined && after.has(m.tool_call_id)) return true;
  }
  return false;
}

/** A rough token count (4 characters a token), enough to decide when to compact. */
export function estimateTokens(messages: readonly { content: string }[]): number {
  return Math.ceil(messages.reduce((n, m) => n + m.content.length + 8, 0) / 4);
}

/** The default token budget for a model: most of its context window, leaving room to answer. */
export function defaultBudget(model: string): number {
  const name = model.toLowerCase();
  if (/claude|gemini-1\.5|gemini-2/.test(name)) return 150_000;
  if (/gpt-4o|gpt-4\.1|gpt-5|o[134]|128k/.test(name)) return 100_000;
  if (/32k|mixtral|qwen/.test(name)) return 24_000;
  return 48_000;
}

// ---- snapshots ----

/**
 * The whole conversation as plain text: every message ever held (the archive, then what is
 * live), with roles and times, and the summaries of earlier compactions. Never image bytes:
 * messages hold text only, and data URLs are cut to their type.
 */
export function snapshotText(record: SessionRecord, at: string): string {
  const lines = [
    `logbook session snapshot, taken ${at} before a compaction`,
    `session: ${record.id}`,
    `title: ${record.title}`,
    `cwd: ${record.cwd}`,
    `branch: ${record.branch ?? "-"}`,
    `started: ${record.startedAt}`,
    "",
  ];
  const render = (m: SessionMessage) => {
    const when = m.at ? ` ${m.at}` : "";
    const turn = m.turn !== undefined ? ` (turn ${m.turn})` : "";
    const content = m.content.replace(
      /data:[\w.+-]+\/[\w.+-]+;base64,[A-Za-z0-9+/=]+/g,
      (url) => `[${url.slice(5, url.indexOf(";"))} data omitted]`,
    );
    return `--- ${m.role}${turn}${when}\n${content}\n`;
  };
  record.compactions.forEach((c, i) => {
    const summary = typeof c.summary === "string" ? c.summary : "";
    lines.push(`=== summary of compaction ${i + 1}\n${summary}\n`);
  });
  for (const m of record.archive) lines.push(render(m));
  for (const m of record.messages) lines.push(render(m));
  return lines.join("\n");
}

/** Writes the snapshot (owner-only, atomic) and keeps the newest 300; returns its path. */
export function writeSnapshot(
  paths: DataPaths,
  record: SessionRecord,
  now: number,
  write: typeof writeFileAtomic = writeFileAtomic,
): string {
  const at = new Date(now).toISOString();
  const name = `${at.replace(/[:.]/g, "-")}-${record.id}.txt`;
  const path = join(paths.pruneArchives, name);
  try {
    write(path, snapshotText(record, at), paths.root);
  } catch (err) {
    const reason = messageOf(err);
    throw new SnapshotError(
      `Cannot write the snapshot before compacting, so nothing was compacted: ${reason}. ` +
        "Free some space and try again, or compact once without a snapshot (--no-snapshot)",
      { cause: err },
    );
  }
  pruneSnapshots(paths.pruneArchives);
  return path;
}

/** Removes all but the newest `keep` snapshots (by name, which starts with the time). */
export function pruneSnapshots(dir: string, keep = SNAPSHOTS_KEPT): number {
  const names = snapshotNames(dir);
  let removed = 0;
  for (const name of names.slice(0, Math.max(0, names.length - keep))) {
    try {
      Deno.removeSync(join(dir, name));
      removed++;
    } catch {
      // A snapshot that cannot be removed is simply kept.
    }
  }
  return removed;
}

/** How many snapshots there are and their total size, for `status`. */
export function snapshotStats(dir: string): { count: number; bytes: number } {
  let bytes = 0;
  const names = snapshotNames(dir);
  for (const name of names) {
    try {
      bytes += Deno.statSync(join(dir, name)).size;
    } catch {
      // removed meanwhile
    }
  }
  return { count: names.length, bytes };
}

function snapshotNames(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)]
      .filter((e) => e.isFile && e.name.endsWith(".txt") && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

// ---- the summary ----

const INSTRUCTIONS =
  "You are compacting the earlier part of a conversation so that it can continue within a " +
  "limited context. Write a faithful summary of the conversation below for the assistant who " +
  "will continue it: the user's goals and instructions, decisions made and why, facts learned, " +
  "file names, commands and identifiers that matter, what was done, and questions still open. " +
  "Keep corrections and commitments exactly. Plain text, at most about 1,500 words.";

/** The summary and what asking for it spent. */
export interface Summary {
  text: string;
  /** Every request made (one or two), for the session's spend. */
  completions: { completion: Completion | null; ms: number; accepted: boolean }[];
}

/**
 * Asks the model for a summary of `replaced` (and of the previous summary, which it replaces).
 * A reply cut off by the provider, an empty one or one over 65,536 bytes is never accepted; it
 * gets one plain retry, then CompactionError names the reason.
 */
export async function summarise(
  model: ModelClient,
  replaced: readonly ChatMessage[],
  previous: string | null,
  options: { signal?: AbortSignal; clock?: () => number } = {},
): Promise<Summary> {
  const clock = options.clock ?? (() => performance.now());
  const transcript = replaced.map((m) => `${m.role.toUpperCase()}:\n${m.content}`).join("\n\n");
  const request: ChatMessage[] = [
    { role: "system", content: INSTRUCTIONS },
    {
      role: "user",
      content: (previous ? `Summary of what came before:\n${previous}\n\n` : "") +
        `Conversation to summarise:\n\n${transcript}`,
    },
  ];
  const completions: Summary["completions"] = [];
  let reason = "";
  for (let attempt = 1; attempt <= 2; attempt++) {
    const started = clock();
    const completion = await model.complete(request, {
      stream: false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const ms = clock() - started;
    reason = rejection(completion);
    completions.push({ completion, ms, accepted: reason === "" });
    if (reason === "") return { text: completion.text.trim(), completions };
  }
  throw Object.assign(
    new CompactionError(`Compaction summary rejected after 2 attempts: ${reason}`),
    { completions },
  );
}

/** Why a reply cannot be a summary, or "" when it can. */
export function rejection(completion: Completion): string {
  if (completion.finishReason === "length") return "the reply was cut off by the provider";
  if (completion.text.trim() === "") return "the reply was empty";
  if (new TextEncoder().encode(completion.text).length > SUMMARY_MAX_BYTES) {
    return `the reply was longer than ${formatCount(SUMMARY_MAX_BYTES)} bytes`;
  }
  return "";
}

/** The note placed before the live messages of a request once a session was compacted. */
export function summaryMessage(summary: string): ChatMessage {
  return {
    role: "system",
    content:
      `Summary of the earlier part of this conversation (replaced to save context):\n\n${summary}`,
  };
}

/** The summary of the newest compaction of a record, or null. */
export function latestSummary(record: Pick<SessionRecord, "compactions">): string | null {
  const last = record.compactions.at(-1);
  return last && typeof last.summary === "string" ? last.summary : null;
}
