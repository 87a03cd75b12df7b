// A logbook session built from another agent's captured conversation (`fork` of a `claude:`,
// `codex:` or `opencode:` row): its user and assistant messages through the gate, written as a new
// record with a first trail line.

import { type Gate, type GateDecision, trailEntry } from "../gate/gate.ts";
import type { Redactor } from "../gate/secrets.ts";
import { READERS } from "../agents.ts";
import { pageRows } from "../store/conversations.ts";
import type { HistoryStore } from "../store/db.ts";
import { type ConversationRow, TextDeriver } from "../store/records.ts";
import { VERSION } from "../version.ts";
import {
  forkTitle,
  newRecord,
  type SessionMessage,
  SessionNotFoundError,
  type SessionRecord,
  type SessionStore,
} from "./records.ts";
import type { PickerRow } from "./resume.ts";

/** Derived text as captured: `conversationMessages` passes it through the gate itself. */
const AS_CAPTURED: Redactor = Object.assign((text: string) => text, {
  between: (_before: string, text: string, _after: string) => text,
});

/**
 * The user and assistant messages of a captured conversation, in order, through the gate for
 * disk: consecutive records of one speaker (a reply written as several lines) become one message.
 */
function conversationMessages(
  store: HistoryStore,
  conversation: ConversationRow,
  gate: Gate,
): { messages: SessionMessage[]; decisions: GateDecision[] } {
  const deriver = new TextDeriver(store, READERS, AS_CAPTURED);
  const messages: SessionMessage[] = [];
  const decisions: GateDecision[] = [];
  // The chunks of a long line (rows with seq 1, 2, … after its first) are one text: it passes
  // the gate whole, so a secret cut by a chunk boundary is not kept in two halves.
  let line: { role: "user" | "assistant"; ts: number | null; text: string } | undefined;
  const add = () => {
    if (line === undefined) return;
    const { role, ts, text } = line;
    line = undefined;
    if (text.trim() === "") return;
    const gated = gate.redact(text.trim(), { destination: "disk" });
    decisions.push(gated);
    const last = messages.at(-1);
    if (last && last.role === role) last.content += `\n\n${gated.text}`;
    else {
      const message: SessionMessage = { role, content: gated.text };
      if (ts !== null) message.at = new Date(ts).toISOString();
      messages.push(message);
    }
  };
  let after: number | undefined;
  do {
    const page = pageRows(store, conversation.id, {
      limit: 500,
      ...(after !== undefined ? { after } : {}),
    });
    for (const row of page.rows) {
      if (row.kind !== "message" || (row.role !== "user" && row.role !== "assistant")) continue;
      const text = deriver.textOf(row);
      if (row.seq > 0 && line !== undefined) line.text += text;
      else {
        add();
        line = { role: row.role, ts: row.ts, text };
      }
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  add();
  return { messages, decisions };
}

/**
 * A new logbook session from another agent's conversation (`fork` of a `claude:`/`codex:`/
 * `opencode:` row): its messages through the gate, the title marked `(fork)`, `forkedFrom` naming
 * it. Written (record and a first trail line) unless the session store is incognito.
 */
export function forkConversation(options: {
  sessions: SessionStore;
  store: HistoryStore;
  row: PickerRow;
  gate: Gate;
  now: number;
  build?: string;
}): SessionRecord {
  const { sessions, store, row, gate, now } = options;
  const conversation = store.stmt("SELECT * FROM conversations WHERE key = ?").get(row.key) as
    | ConversationRow
    | undefined;
  if (!conversation) {
    throw new SessionNotFoundError(`Cannot fork "${row.key}": it is not in the history store`);
  }
  const { messages, decisions } = conversationMessages(store, conversation, gate);
  const title = gate.redact(forkTitle(conversation.title ?? "Untitled"), { destination: "disk" });
  const cwd = conversation.cwd ?? conversation.project_root ?? row.cwd;
  if (cwd === null) throw new Error(`Cannot fork "${row.key}": its directory is not known`);
  const record = newRecord({
    cwd,
    project: conversation.project_root ?? cwd,
    branch: conversation.branch,
    build: options.build ?? VERSION,
    now,
    title: title.text,
  });
  record.messages = messages;
  record.forkedFrom = conversation.key;
  record.forkedMessages = messages.length;
  if (sessions.save(record)) {
    sessions.appendTrail(record, [{
      at: record.createdAt,
      event: "fork",
      from: conversation.key,
      disk: trailEntry([title, ...decisions]),
    }]);
  }
  return record;
}

/**
 * A new logbook session forked from a picker row: a copy of a logbook session's record, or a
 * session built from another agent's captured conversation (`forkConversation`). Refuses a
 * manifest run, which has no conversation; `query` is how the user named the row, for that
 * message (default its key).
 */
export function forkRow(options: {
  sessions: SessionStore;
  store: HistoryStore | undefined;
  row: PickerRow;
  gate: Gate;
  now: number;
  query?: string;
}): SessionRecord {
  const { sessions, store, row, gate, now } = options;
  if (row.manifest) {
    throw new Error(
      `Cannot fork session "${
        options.query ?? row.key
      }": it is a manifest run, which has no conversation`,
    );
  }
  if (row.record) return sessions.fork(row.record, now);
  if (!store) {
    throw new SessionNotFoundError(`Cannot fork "${row.key}": the history store is not there`);
  }
  return forkConversation({ sessions, store, row, gate, now });
}
