// Choosing a session to pick back up, as data: picker rows from logbook's own records and the
// history store's conversations of this project, and the native command that resumes a row.

import { dirname } from "../path.ts";
import { formatBytes, messageOf, timeAgo } from "../format.ts";
import { INVISIBLE_CLASS } from "../invisible.ts";
import type { Context } from "../context.ts";
import { openStore, storeExists } from "../context.ts";
import { type Project, projectKey } from "../paths.ts";
import { ConversationNotFoundError, findConversation } from "../store/conversations.ts";
import type { HistoryStore } from "../store/db.ts";
import type { ConversationRow } from "../store/records.ts";
import { AGENT_SPECS, type AgentSpec } from "../agents.ts";
import {
  type CorruptRecord,
  CorruptRecordError,
  SessionNotFoundError,
  type SessionRecord,
  type SessionStore,
} from "./records.ts";

/** The agent a picker row belongs to: one of lib/agents.ts `AGENTS` (a stored row may name another). */
export type RowAgent = string;

/** One row of the picker: a logbook session or another agent's conversation. */
export interface PickerRow {
  /** `logbook:<uuid>`, `claude:<sessionId>`, `codex:<uuid>`, `opencode:<ses_…>`. */
  key: string;
  agent: RowAgent;
  /** The id without the agent: what the agent's own resume command takes. */
  nativeId: string;
  title: string;
  /** What the list sorts by (epoch ms): a record's `updatedAt`, a conversation's last record. */
  updatedAt: number;
  /** Bytes: the record's size, or the conversation's captured bytes. */
  size: number;
  messages: number;
  cwd: string | null;
  /** A manifest run: marked in the picker and never continued. */
  manifest: boolean;
  /** The record, for logbook rows. */
  record?: SessionRecord;
}

/** The rows of a project, newest first, and what could not be read. */
export interface Rows {
  rows: PickerRow[];
  /** Records left out because they cannot be read. */
  corrupt: CorruptRecord[];
  /** Why the history store's conversations are missing from the list, when they are. */
  storeProblem?: string;
}

/**
 * Every session of `project`, newest first: logbook's own records and, when `store` is given,
 * the history store's top-level conversations of the other agents (subagents are not resumable
 * on their own, and logbook's own captured copies are the records themselves). Titles pass
 * `redact` (the gate's redaction of anything shown): another agent's is its first prompt.
 */
export function pickerRows(
  sessions: SessionStore,
  project: Project,
  options: { store?: HistoryStore | undefined; redact: (text: string) => string },
): Rows {
  const { store, redact } = options;
  const { sessions: records, corrupt } = sessions.list(project.key);
  const rows: PickerRow[] = records.map((record) => ({
    key: `logbook:${record.id}`,
    agent: "logbook",
    nativeId: record.id,
    title: redact(record.title || "Untitled session"),
    updatedAt: Date.parse(record.updatedAt),
    size: new TextEncoder().encode(JSON.stringify(record, null, 2) + "\n").length,
    messages: record.messages.length,
    cwd: record.cwd,
    manifest: record.kind === "manifest",
    record,
  }));
  if (store) {
    const found = store.stmt(
      `SELECT * FROM conversations WHERE project_root = ? AND subagent = 0 AND agent != 'logbook'
       ORDER BY last_ts DESC`,
    ).all(project.root) as unknown as ConversationRow[];
    for (const c of found) rows.push(conversationRow(c, redact));
  }
  rows.sort((a, b) => b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : 1));
  return { rows, corrupt };
}

/** The picker row of another agent's captured conversation (its title through `redact`). */
export function conversationRow(c: ConversationRow, redact: (text: string) => string): PickerRow {
  return {
    key: c.key,
    agent: c.agent,
    nativeId: c.native_id,
    title: c.title === null ? "(untitled)" : redact(c.title),
    updatedAt: c.last_ts ?? c.first_ts ?? 0,
    size: c.bytes,
    messages: c.message_count,
    cwd: c.cwd ?? c.project_root,
    manifest: false,
  };
}

/**
 * The row `query` names: first among `listed` (this project's rows, where a prefix is enough),
 * else the captured conversation it names in the history store, whatever its project (the id
 * says which): another agent's conversation as it was captured, a logbook session as its
 * project's record. Throws as `findRow` does, and when the id names a subagent conversation
 * (resumed through its session).
 */
export function findRowAnywhere(
  listed: Rows,
  query: string,
  verb: string,
  options: {
    sessions: SessionStore;
    store: HistoryStore | undefined;
    redact: (t: string) => string;
  },
): PickerRow {
  const q = query.trim().toLowerCase();
  const here = listed.rows.some((r) =>
    r.key.toLowerCase().startsWith(q) || r.nativeId.toLowerCase().startsWith(q)
  );
  try {
    return findRow(listed.rows, query, verb, listed.corrupt);
  } catch (err) {
    if (here || !(err instanceof SessionNotFoundError)) throw err;
  }
  const nowhere = () =>
    new SessionNotFoundError(
      `Cannot ${verb} session "${query.trim()}": no such id in this project, and no captured ` +
        "conversation has it",
    );
  if (!options.store) throw nowhere();
  let conversation: ConversationRow;
  try {
    conversation = findConversation(options.store, query);
  } catch (err) {
    if (!(err instanceof ConversationNotFoundError) || / is ambiguous: /.test(err.message)) {
      throw err;
    }
    throw nowhere();
  }
  if (conversation.subagent) {
    throw new SessionNotFoundError(
      `Cannot ${verb} "${conversation.key}": it is a subagent's conversation; ${verb} its ` +
        `session "${conversation.parent_key ?? "(unknown)"}"`,
    );
  }
  if (conversation.agent !== "logbook") return conversationRow(conversation, options.redact);
  const root = conversation.project_root ?? conversation.cwd;
  const key = conversation.project_key ?? (root === null ? null : projectKey(root));
  const { rows, corrupt } = key === null
    ? { rows: [], corrupt: [] }
    : pickerRows(options.sessions, { root: root!, key }, { redact: options.redact });
  return findRow(rows, conversation.key, verb, corrupt);
}

/**
 * `dir` when it is a directory, else its nearest ancestor that is (the root at worst): where a
 * command recorded in a directory since removed can still run.
 */
export function nearestExistingDir(dir: string): string {
  let at = dir;
  for (;;) {
    try {
      if (Deno.statSync(at).isDirectory) return at;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
        throw err;
      }
    }
    const parent = dirname(at);
    if (parent === at) return at;
    at = parent;
  }
}

/** Where a session's command or chat runs, and its recorded directory when that is gone. */
export interface RunnableDir {
  /** The recorded directory, or its nearest existing ancestor when it is gone. */
  cwd: string;
  /** The recorded directory when it is gone, else null. */
  gone: string | null;
}

/**
 * The one rule for where a session's command or chat runs: `dir`, or its nearest existing
 * ancestor when it is gone. Where the user stands (`userCwd`) is there, whatever a stat says of
 * a directory given by INIT_CWD.
 */
export function runnableDir(dir: string, userCwd: string): RunnableDir {
  if (dir === userCwd) return { cwd: dir, gone: null };
  const cwd = nearestExistingDir(dir);
  return { cwd, gone: cwd === dir ? null : dir };
}

/**
 * What a command run away from its gone directory owes the reader, as a sentence (for display:
 * it names directories, so it goes through the gate where it is shown).
 */
export function goneNote(where: RunnableDir): string | null {
  return where.gone === null
    ? null
    : `the session's directory "${where.gone}" no longer exists; using "${where.cwd}", the ` +
      "nearest that does";
}

/** A session's command where it can run, and the note owed when that is not where it was. */
export interface RunnableCommand {
  command: NativeCommand;
  /** `goneNote`'s sentence when the session's directory is gone, else null. */
  note: string | null;
}

/**
 * The command that resumes `row` (its agent's own, or `logbook resume`), in the row's directory
 * (`fallbackCwd` when it has none), or in its nearest existing ancestor when that is gone, with
 * the note that says so: `resume` (`--print` too), the search screen (Ctrl-O, Ctrl-Y) and the
 * dashboard all take theirs from here. The directory is the real one (the command must run where
 * it says); the note is shown through the gate.
 */
export function resumeCommand(
  row: PickerRow,
  userCwd: string,
  fallbackCwd: string = userCwd,
): RunnableCommand {
  return runnable(nativeCommand(row, fallbackCwd), userCwd);
}

/**
 * The command that forks `row` in its own agent, where it can run (as `resumeCommand`), or null
 * for a logbook session, which forks into logbook only. See `nativeForkCommand`.
 */
export function forkCommand(
  row: PickerRow,
  userCwd: string,
  fallbackCwd: string = userCwd,
): RunnableCommand | null {
  const native = nativeForkCommand(row, fallbackCwd);
  return native === null ? null : runnable(native, userCwd);
}

function runnable(native: NativeCommand, userCwd: string): RunnableCommand {
  const where = runnableDir(native.cwd, userCwd);
  return { command: { ...native, cwd: where.cwd }, note: goneNote(where) };
}

/**
 * Runs `fn` with the history store when it exists and opens (never creating it), else with
 * undefined and the reason; the store is closed afterwards.
 */
export function withHistoryStore<T>(
  ctx: Context,
  fn: (store: HistoryStore | undefined, problem: string | undefined) => T,
): T {
  if (!storeExists(ctx)) return fn(undefined, undefined);
  let store: HistoryStore;
  try {
    store = openStore(ctx, { mustExist: true, readOnly: true });
  } catch (err) {
    return fn(undefined, messageOf(err));
  }
  try {
    return fn(store, undefined);
  } finally {
    store.close();
  }
}

/**
 * The row `query` names: a full key (`logbook:<uuid>`, `claude:<id>`), a native id, or a unique
 * prefix of either. Throws SessionNotFoundError when none or several match, and
 * CorruptRecordError when the id names a record in `corrupt`, which cannot be read.
 */
export function findRow(
  rows: readonly PickerRow[],
  query: string,
  verb = "resume",
  corrupt: readonly CorruptRecord[] = [],
): PickerRow {
  const q = query.trim();
  if (q === "") throw new RangeError(`Cannot ${verb} a session: the id is empty`);
  const exact = rows.filter((r) => r.key === q || r.nativeId === q);
  if (exact.length === 1) return exact[0]!;
  const lower = q.toLowerCase();
  const matches = exact.length > 1
    ? exact
    : rows.filter((r) =>
      r.key.toLowerCase().startsWith(lower) || r.nativeId.toLowerCase().startsWith(lower)
    );
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    const unreadable = corrupt.filter((c) =>
      c.id.toLowerCase().startsWith(lower.replace(/^logbook:/, ""))
    );
    if (unreadable.length === 1) {
      throw new CorruptRecordError(
        `Cannot ${verb} session "${q}": its record "${unreadable[0]!.path}" cannot be read: ${
          unreadable[0]!.reason
        }`,
      );
    }
    throw new SessionNotFoundError(`Cannot ${verb} session "${q}": no such id in this project`);
  }
  const names = matches.slice(0, 5).map((m) => `"${m.key}"`).join(", ");
  throw new SessionNotFoundError(
    `Session id "${q}" is ambiguous: it matches ${names}${matches.length > 5 ? " and more" : ""}`,
  );
}

/** The newest row that can be continued (manifest runs are passed over), if any. */
export function newestContinuable(rows: readonly PickerRow[]): PickerRow | undefined {
  return rows.find((r) => !r.manifest);
}

/** A command to run: the program, its arguments and the directory it runs in. */
export interface NativeCommand {
  command: string;
  args: string[];
  cwd: string;
}

/**
 * The command that resumes a row, in its cwd: the agent's own (`claude --resume <sessionId>`,
 * `codex resume <uuid>`, `opencode --session <id>`, as lib/agents.ts gives them) or
 * `logbook resume <uuid>`.
 */
export function nativeCommand(row: PickerRow, fallbackCwd: string): NativeCommand {
  const { cli } = cliOf(row, "resume");
  return { command: cli.command, args: cli.resume(row.nativeId), cwd: row.cwd ?? fallbackCwd };
}

/**
 * The agent's own command that forks a row into a new session of that agent, the source left as
 * it was, in its cwd (`claude --resume <id> --fork-session`, `codex fork <id>`, as each one's
 * `--help` gives them); null for an agent whose CLI cannot fork (logbook's own sessions).
 */
export function nativeForkCommand(row: PickerRow, fallbackCwd: string): NativeCommand | null {
  const { cli } = cliOf(row, "fork");
  const args = cli.fork(row.nativeId);
  return args === null ? null : { command: cli.command, args, cwd: row.cwd ?? fallbackCwd };
}

/** The registry's entry of a row's agent; throws for an agent this version does not know. */
function cliOf(row: PickerRow, verb: string): AgentSpec {
  const spec = AGENT_SPECS.find((s) => s.name === row.agent);
  if (spec) return spec;
  throw new SessionNotFoundError(
    `Cannot ${verb} "${row.key}": this version of logbook does not know the agent "${row.agent}"`,
  );
}

// Characters a terminal acts on (C0, DEL, C1, bidi controls) and those a reader cannot see (the
// terminal filter would show them as escapes, which pasted back name another directory): never
// printed raw in a command.
const CONTROL = new RegExp(`[\\0-\\x1f\\x7f-\\x9f\\u2028\\u2029${INVISIBLE_CLASS}]`, "u");

/**
 * Quotes a word for a POSIX shell when it needs it. A word with control characters (a directory
 * named by a transcript) is written in `$'…'` quoting with escapes, which bash and zsh read back
 * exactly and which prints nothing a terminal would act on.
 */
function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  if (!CONTROL.test(word)) return `'${word.replaceAll("'", `'\\''`)}'`;
  const escaped = [...word].map((c) => {
    if (c === "\\" || c === "'") return `\\${c}`;
    if (!CONTROL.test(c)) return c;
    const code = c.codePointAt(0)!;
    return code < 0x80
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : code > 0xffff
      ? `\\U${code.toString(16).padStart(8, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  }).join("");
  return `$'${escaped}'`;
}

/** The command as a line to paste into a shell, with `cd <dir> &&` when run elsewhere. */
export function commandLine(cmd: NativeCommand, userCwd: string): string {
  const line = [cmd.command, ...cmd.args].map(shellQuote).join(" ");
  return cmd.cwd === userCwd ? line : `cd ${shellQuote(cmd.cwd)} && ${line}`;
}

/** What to print on leaving a session: the command that resumes it. */
export function resumeHint(sessionId: string, sessionCwd: string, userCwd: string): string {
  return commandLine({ command: "logbook", args: ["resume", sessionId], cwd: sessionCwd }, userCwd);
}

/** A row as the picker shows it: agent, title, age and size; manifest runs marked. */
export function rowLabel(row: PickerRow, now: number, width = 60): string {
  const mark = row.manifest ? "[manifest] " : "";
  const title = (mark + row.title).replace(/\s+/g, " ");
  const cut = [...title].length > width ? [...title].slice(0, width - 1).join("") + "…" : title;
  return `${row.agent.padEnd(8)} ${cut.padEnd(width)}  ${
    timeAgo(row.updatedAt, now, "short").padStart(10)
  }  ${formatBytes(row.size).padStart(8)}`;
}

/** What a manifest run produced, as `resume <id>` prints it. */
export function describeManifest(record: SessionRecord): string {
  const lines = [
    `Manifest run "${record.title || "Untitled"}" (${record.id}), last written ${record.updatedAt}`,
    "It cannot be continued; this is what it produced.",
    "",
  ];
  const plan = record.plan;
  if (plan === null) {
    lines.push("No plan was recorded.");
  } else {
    lines.push(`Goal: ${plan.goal}`, "", "Plan:");
    plan.plan.forEach((p, i) => lines.push(`  ${i + 1}. ${p}`));
    lines.push("", "Steps:");
    if (plan.steps.length === 0) lines.push("  (none were run)");
    plan.steps.forEach((s, i) => {
      lines.push(`  ${i + 1}. [${s.status}] ${s.step}`);
      for (const out of (s.output ?? "").split("\n").filter(Boolean)) lines.push(`       ${out}`);
    });
  }
  return lines.join("\n") + "\n";
}
