// A turn of one of logbook's own sessions, from the prompt to the disk, with no terminal in sight:
// `ChatSession` holds a record and the request it stands for; each method is one thing a user can
// do (a turn, /compact, /undo, /rename, /clear, /status).
//
// How a chat turn travels to disk:
//
// 1. The prompt arrives as a string: commands/_terminal/chat_loop.ts reads it from the terminal
//    or piped input and first adds it, through the gate, to the prompt history
//    (lib/sessions/prompt_history.ts, `prompt-history.jsonl`).
// 2. `turn()` compacts first when the request would go over the token budget
//    (lib/sessions/compaction.ts: a plain-text snapshot in `prune-archives/`, then a summary from
//    the model replaces the oldest rounds in requests; the record keeps them in its archive).
// 3. The gate (lib/gate/) redacts the prompt twice: once for disk, once for the model (which
//    may see a label the user allowed). Untrusted content goes to the quarantine: the model sees
//    it, the record only its reference.
// 4. The model (lib/sessions/model.ts, the `openai` client) streams the reply; every piece passes
//    the gate for display, word by word or a line at a time (`StreamRedactor`), before the
//    caller's `onText`.
// 5. The whole reply passes the gate for disk and for the model, and the turn's spend (tokens, the
//    model that answered, the wall time split four ways) is added to the record.
// 6. The record is validated and rewritten whole, atomically and owner-only
//    (lib/sessions/records.ts: `sessions/<project-key>/<id>.json`), then one line is appended to
//    its trail (`<id>.audit.jsonl`): which gates acted and how often, never the text.
// 7. Later, capture reads the record as the `logbook` source (lib/sources/logbook.ts), so the
//    session is searched with every other agent's conversations.
//
// A failed request is recorded like any other turn and the session kept; a cancelled one leaves
// the session as it was. A write that fails does not stop the session: the first failure becomes
// one warning (lib/sessions/persistence.ts).

import type { Gate, GateDecision } from "../gate/gate.ts";
import { trailEntry } from "../gate/gate.ts";
import { projectOf } from "../paths.ts";
import type { DataPaths } from "../paths.ts";
import { type Operation, operation } from "../stage_markers.ts";
import { VERSION } from "../version.ts";
import { currentBranch } from "./branch.ts";
import {
  CompactionError,
  defaultBudget,
  estimateTokens,
  latestSummary,
  planCut,
  SnapshotError,
  summarise,
  type Summary,
  summaryMessage,
  writeSnapshot,
} from "./compaction.ts";
import type { ChatMessage, Completion, ModelClient } from "./model.ts";
import { ModelError } from "./model.ts";
import type { Persistence } from "./persistence.ts";
import {
  cleanTitle,
  newRecord,
  type SessionRecord,
  spendTotal,
  type TrailLine,
  type TurnSpend,
} from "./records.ts";
import { restoredState, resumeNotes } from "./restore.ts";
import { splitWallTime, turnsOf } from "./spend.ts";
import { StreamRedactor } from "./stream_redactor.ts";

/** The longest default title, in characters (graphemes), before it is cut. */
export const TITLE_LENGTH = 72;

/**
 * A session's default title: the first non-blank line of its first prompt, cut at a word
 * boundary (never inside a character) with `…` when longer than `max`.
 */
export function defaultTitle(prompt: string, max = TITLE_LENGTH): string {
  const line = prompt.split(/\r?\n/).map((l) => l.replace(/\s+/g, " ").trim()).find(Boolean);
  if (line === undefined) return "Untitled session";
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(line)]
    .map((s) => s.segment);
  if (graphemes.length <= max) return line;
  let cut = graphemes.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  if (space > max / 2) cut = cut.slice(0, space);
  return cut.join("").trimEnd() + "…";
}

/** What a session needs around it. */
export interface SessionOptions {
  persistence: Persistence;
  gate: Gate;
  model: ModelClient;
  /** The directory the session runs in. */
  cwd: string;
  /** The Git branch (default: read from `cwd`). */
  branch?: string | null;
  /** The build written into records (default: this one). */
  build?: string;
  /** Stream replies (default true). */
  stream?: boolean;
  /** Wall-clock time for timestamps (epoch ms). */
  now?: () => number;
  /** A monotonic clock for durations (ms). */
  clock?: () => number;
  /** Where snapshots are written before a compaction (none: compaction needs --no-snapshot). */
  paths?: DataPaths;
  /** Tokens a request may hold before the session is compacted (default: per model). */
  tokenBudget?: number;
  /**
   * Runs before every request and may return a different request. It must not change the
   * record: the record keeps everything.
   */
  beforeRequest?: (
    request: ChatMessage[],
    record: Readonly<SessionRecord>,
  ) => ChatMessage[] | Promise<ChatMessage[]>;
}

/** Content a caller marks untrusted (a fetched page, say): quarantined, never written. */
export interface UntrustedContent {
  /** Where it came from (a label, such as a URL), shown beside its reference. */
  source: string;
  content: string;
}

/** Options of one turn. */
export interface TurnOptions {
  /** Receives the reply as it streams, already through the gate for display. */
  onText?: (text: string) => void;
  signal?: AbortSignal;
  untrusted?: UntrustedContent[];
}

/** How a turn ended. */
export type TurnResult =
  | { outcome: "ok"; text: string; completion: Completion; spend: TurnSpend }
  | { outcome: "failed"; error: ModelError; spend: TurnSpend }
  | { outcome: "cancelled" };

/** How a side question ended; `kept` says whether its answer is in the record. */
export type BtwResult =
  | { outcome: "ok"; text: string; kept: boolean; spend: TurnSpend }
  | { outcome: "failed"; error: ModelError; spend: TurnSpend }
  | { outcome: "cancelled" };

/** A side question as the window shows it: the answer held in memory when the record has none. */
export interface SideQuestion {
  question: string;
  answer: string | null;
  at: string | null;
  /** True when the answer lives only in this window (it met untrusted content). */
  windowOnly: boolean;
}

/** What a compaction did. */
export type CompactResult =
  | { outcome: "nothing"; reason: string }
  | {
    outcome: "compacted";
    /** Messages moved to the archive. */
    replaced: number;
    /** Messages still live after the summary. */
    kept: number;
    summaryBytes: number;
    /** The snapshot written first, or null with --no-snapshot. */
    snapshot: string | null;
  };

/** A session at a glance, as `/status` shows it. */
export interface SessionStatus {
  id: string;
  title: string;
  cwd: string;
  project: string;
  branch: string | null;
  model: string;
  endpoint: string;
  answeredBy: string | null;
  turns: number;
  messages: number;
  tokensIn: number;
  tokensOut: number;
  wallMs: number;
  /** Only the parts of the wall time that actually happened. */
  parts: Partial<
    Record<"waitingModelMs" | "runningToolsMs" | "waitingUserMs" | "otherMs", number>
  >;
  saving: "saved" | "not yet saved" | "not saved" | "incognito";
  path: string | undefined;
  forkedFrom: string | null;
}

/** What asking the model came to: its completion, the error that ended it, or a cancel. */
type Answer =
  | { outcome: "ok"; completion: Completion; waitingModelMs: number }
  | { outcome: "failed"; error: ModelError; wallMs: number; waitingModelMs: number }
  | { outcome: "cancelled" };

interface Snapshot {
  messages: SessionRecord["messages"];
  spend: SessionRecord["spend"];
  trust: SessionRecord["trust"];
  wire: ChatMessage[];
}

/** One session: its record (written after every turn unless incognito) and its conversation. */
export class ChatSession {
  readonly #o: SessionOptions;
  readonly #record: SessionRecord;
  #wire: ChatMessage[];
  #undo: Snapshot | undefined;
  #written: boolean;
  /** Answers to side questions kept only while this window is open, by index in `btw`. */
  readonly #windowAnswers = new Map<number, string>();

  private constructor(options: SessionOptions, record: SessionRecord, written: boolean) {
    this.#o = options;
    this.#record = record;
    this.#written = written;
    this.#wire = this.#wireOf(record);
  }

  /** The request a record stands for: the newest compaction's summary, then live messages. */
  #wireOf(record: SessionRecord): ChatMessage[] {
    const gate = this.#o.gate;
    const summary = latestSummary(record);
    return [
      ...(summary === null
        ? []
        : [summaryMessage(gate.redact(summary, { destination: "model" }).text)]),
      ...record.messages.map((m) => ({
        role: m.role,
        content: gate.redact(m.content, { destination: "model" }).text,
      })),
    ];
  }

  /** A new session in `options.cwd` (nothing is written before its first turn or rename). */
  static start(options: SessionOptions): ChatSession {
    const project = projectOf(options.cwd);
    const record = newRecord({
      cwd: options.cwd,
      project: project.root,
      branch: options.branch === undefined ? currentBranch(options.cwd) : options.branch,
      build: options.build ?? VERSION,
      now: (options.now ?? Date.now)(),
    });
    return new ChatSession(options, record, false);
  }

  /**
   * Continues a recorded session: what `restoredState` lists is brought back, the rest of the
   * record is kept as it is for rewriting. Returns the notes to show (another build, a changed
   * branch). With `written: false` (a fork opened incognito, say) the record is taken as unsaved.
   */
  static resume(
    options: SessionOptions,
    record: SessionRecord,
    opts: { written?: boolean } = {},
  ): { session: ChatSession; notes: string[] } {
    if (record.kind === "manifest") {
      throw new Error(
        `Cannot continue session "${record.id}": it is a manifest run, which has no conversation`,
      );
    }
    const here = options.branch === undefined ? currentBranch(options.cwd) : options.branch;
    const notes = resumeNotes(record, { branch: here, build: options.build ?? VERSION });
    const copy = structuredClone(record);
    Object.assign(copy, restoredState(record));
    const session = new ChatSession(options, copy, opts.written ?? true);
    return { session, notes };
  }

  get id(): string {
    return this.#record.id;
  }

  get title(): string {
    return this.#record.title;
  }

  /** The directory the session runs in. */
  get cwd(): string {
    return this.#record.cwd;
  }

  /** True once the record has been written (a session never written has nothing to resume). */
  get written(): boolean {
    return this.#written;
  }

  /** A copy of the record as it stands. */
  get record(): SessionRecord {
    return structuredClone(this.#record);
  }

  /** The messages the next request would start from (after the gate, before compaction). */
  get request(): ChatMessage[] {
    return this.#wire.map((m) => ({ ...m }));
  }

  /** True when `/undo` can take a turn back. */
  get canUndo(): boolean {
    return this.#undo !== undefined;
  }

  /**
   * Runs one turn: the prompt through the gate, the request to the model, the reply through the
   * gate, the spend, and the record and trail written. A failed request is recorded like any
   * other turn (and the session kept); a cancelled one leaves the session as it was.
   */
  async turn(prompt: string, options: TurnOptions = {}): Promise<TurnResult> {
    await this.#autoCompact(prompt, options.signal);
    const o = this.#o;
    const clock = o.clock ?? (() => performance.now());
    const now = o.now ?? Date.now;
    const started = clock();
    const record = this.#record;
    const before = this.#snapshot();
    // The next turn beginning closes the window for undoing the previous one.
    this.#undo = undefined;
    const turn = turnsOf(record) + 1;
    const at = new Date(now()).toISOString();

    const { stored, sent, disk, model } = this.#gatePrompt(prompt, options.untrusted ?? []);
    if (record.title === "") record.title = defaultTitle(stored);
    record.messages.push({ role: "user", content: stored, at, turn });
    this.#wire.push({ role: "user", content: sent });

    // Compaction (a later build) runs here: it may shorten the request, never the record.
    const request = o.beforeRequest
      ? await o.beforeRequest(this.request, this.record)
      : this.request;

    const answer = await this.#ask(request, options, started);
    if (answer.outcome === "cancelled") {
      this.#restore(before);
      return answer;
    }
    if (answer.outcome === "failed") {
      const spend = this.#spend(turn, at, null, answer.wallMs, answer.waitingModelMs, "failed");
      record.spend.turns.push(spend);
      this.#commit({
        at,
        event: "turn",
        turn,
        outcome: "failed",
        disk: trailEntry(disk),
        model: trailEntry(model),
      });
      this.#undo = before;
      return { outcome: "failed", error: answer.error, spend };
    }
    const { completion, waitingModelMs } = answer;

    const replyDisk = o.gate.redact(completion.text, { destination: "disk" });
    const replyModel = o.gate.redact(completion.text, { destination: "model" });
    disk.push(replyDisk);
    model.push(replyModel);
    const replyAt = new Date(now()).toISOString();
    record.messages.push({ role: "assistant", content: replyDisk.text, at: replyAt, turn });
    this.#wire.push({ role: "assistant", content: replyModel.text });
    const spend = this.#spend(turn, at, completion, clock() - started, waitingModelMs, "ok");
    record.spend.turns.push(spend);
    this.#commit({
      at,
      event: "turn",
      turn,
      outcome: "ok",
      disk: trailEntry(disk),
      model: trailEntry(model),
    });
    this.#undo = before;
    const text = o.gate.redact(completion.text, { destination: "display" }).text;
    return { outcome: "ok", text, completion, spend };
  }

  /**
   * Asks the model a side question over the conversation as it stands, without adding either
   * to it: later requests never carry it. The question is kept in the record's `btw` list, and
   * the answer too unless the exchange met untrusted content (then it lives only in this
   * window: a resume brings back the question alone). The request counts in the spend.
   */
  async btw(question: string, options: Omit<TurnOptions, "untrusted"> = {}): Promise<BtwResult> {
    const o = this.#o;
    const clock = o.clock ?? (() => performance.now());
    const now = o.now ?? Date.now;
    const started = clock();
    const record = this.#record;
    const at = new Date(now()).toISOString();
    const forDisk = o.gate.redact(question, { destination: "disk" });
    const forModel = o.gate.redact(question, { destination: "model" });
    const request = [...this.request, { role: "user" as const, content: forModel.text }];
    // Untrusted content in the request may have steered the answer: it is not written down.
    const untrusted = request.some((m) => m.content.includes("\n<untrusted source="));
    const turn = turnsOf(record);
    const answer = await this.#ask(request, options, started);
    if (answer.outcome === "cancelled") return answer;
    if (answer.outcome === "failed") {
      const spend = this.#spend(turn, at, null, answer.wallMs, answer.waitingModelMs, "btw-failed");
      record.spend.turns.push(spend);
      record.btw.push({ question: forDisk.text, answer: null, at });
      this.#commit({
        at,
        event: "btw",
        outcome: "failed",
        disk: trailEntry(forDisk),
        model: trailEntry(forModel),
      });
      return { outcome: "failed", error: answer.error, spend };
    }
    const { completion, waitingModelMs } = answer;
    const answerDisk = o.gate.redact(completion.text, { destination: "disk" });
    const spend = this.#spend(turn, at, completion, clock() - started, waitingModelMs, "btw");
    record.spend.turns.push(spend);
    const index = record.btw.length;
    record.btw.push({ question: forDisk.text, answer: untrusted ? null : answerDisk.text, at });
    if (untrusted) this.#windowAnswers.set(index, answerDisk.text);
    this.#commit({
      at,
      event: "btw",
      outcome: untrusted ? "answer-not-kept" : "ok",
      disk: trailEntry(untrusted ? [forDisk] : [forDisk, answerDisk]),
      model: trailEntry(forModel),
    });
    const text = o.gate.redact(completion.text, { destination: "display" }).text;
    return { outcome: "ok", text, kept: !untrusted, spend };
  }

  /**
   * The prompt as the record keeps it and as the model is sent it, each through the gate for its
   * destination, with what the gates decided: untrusted content goes to the quarantine, the
   * record keeps its reference and the model sees it marked as untrusted.
   */
  #gatePrompt(
    prompt: string,
    untrusted: UntrustedContent[],
  ): { stored: string; sent: string; disk: GateDecision[]; model: GateDecision[] } {
    const gate = this.#o.gate;
    const forDisk = gate.redact(prompt, { destination: "disk" });
    const forModel = gate.redact(prompt, { destination: "model" });
    const disk: GateDecision[] = [forDisk];
    const model: GateDecision[] = [forModel];
    let stored = forDisk.text;
    let sent = forModel.text;
    for (const item of untrusted) {
      const ref = gate.quarantine.put(item.content, { source: item.source });
      const source = gate.redact(item.source, { destination: "disk" }).text;
      disk.push({ gates: ["quarantine"], quarantined: [ref] });
      stored += `\n\n[untrusted content from ${source}: ${ref}]`;
      sent += `\n\n<untrusted source="${item.source}">\n${
        gate.redact(item.content, { destination: "model" }).text
      }\n</untrusted>`;
    }
    return { stored, sent, disk, model };
  }

  /**
   * Sends `request` to the model as the `model.request` stage, the reply streamed through the
   * gate for display to `onText`. Times the wait for the model, and on failure the whole turn
   * from `started`; a cancel (or an aborted signal) is said as such, any other error thrown.
   */
  async #ask(
    request: ChatMessage[],
    options: Omit<TurnOptions, "untrusted">,
    started: number,
  ): Promise<Answer> {
    const o = this.#o;
    const clock = o.clock ?? (() => performance.now());
    const shown = new StreamRedactor(o.gate);
    const modelStarted = clock();
    let completion: Completion;
    try {
      completion = await operation("model").stage("model.request", () =>
        o.model.complete(request, {
          stream: o.stream ?? true,
          ...(options.signal ? { signal: options.signal } : {}),
          onText: (delta) => {
            const visible = shown.push(delta);
            if (visible) options.onText?.(visible);
          },
        }));
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      if (err.reason === "cancelled" || options.signal?.aborted) return { outcome: "cancelled" };
      const wallMs = clock() - started;
      return { outcome: "failed", error: err, wallMs, waitingModelMs: clock() - modelStarted };
    }
    const waitingModelMs = clock() - modelStarted;
    const rest = shown.flush();
    if (rest) options.onText?.(rest);
    return { outcome: "ok", completion, waitingModelMs };
  }

  /** The side questions of this session, with the answers this window holds. */
  get sideQuestions(): SideQuestion[] {
    return this.#record.btw.map((item, i) => {
      const windowAnswer = this.#windowAnswers.get(i);
      return {
        question: item.question,
        answer: item.answer ?? windowAnswer ?? null,
        at: item.at ?? null,
        windowOnly: windowAnswer !== undefined,
      };
    });
  }

  /**
   * Compacts the session: a plain-text snapshot of the whole conversation first (refused with
   * the reason when it cannot be written, unless `noSnapshot`), then a summary from the model
   * replaces the oldest rounds in requests; the replaced messages move to the record's archive.
   * The record is written once, at the end, so a crash mid-way leaves it as it was.
   */
  async compact(
    options: { noSnapshot?: boolean; auto?: boolean; signal?: AbortSignal } = {},
  ): Promise<CompactResult> {
    const o = this.#o;
    const record = this.#record;
    const cut = planCut(record.messages);
    if (cut === 0) {
      return { outcome: "nothing", reason: "the conversation is too short to compact" };
    }
    const op = operation("compaction");
    const now = o.now ?? Date.now;
    const clock = o.clock ?? (() => performance.now());
    const snapshot = options.noSnapshot ? null : this.#writeSnapshot(op, now());
    const replaced = record.messages.slice(0, cut).map((m) => ({
      role: m.role,
      content: o.gate.redact(m.content, { destination: "model" }).text,
    }));
    const at = new Date(now()).toISOString();
    let summary: Summary;
    try {
      summary = await op.stage(
        "compaction.summary",
        () =>
          summarise(o.model, replaced, latestSummary(record), {
            clock,
            ...(options.signal ? { signal: options.signal } : {}),
          }),
      );
    } catch (err) {
      // Rejected summaries were still requests: they count towards the spend.
      const attempts = (err as { completions?: Summary["completions"] }).completions;
      if (err instanceof CompactionError && attempts) {
        for (const a of attempts) record.spend.turns.push(this.#compactionSpend(at, a));
        this.#commit({ at, event: "compaction", outcome: "rejected" });
      }
      throw err;
    }
    return op.stageSync("compaction.apply", () => {
      const text = o.gate.redact(summary.text, { destination: "disk" }).text;
      const accepted = summary.completions.at(-1)?.completion;
      record.archive.push(...record.messages.slice(0, cut));
      record.messages = record.messages.slice(cut);
      record.compactions.push({
        at,
        summary: text,
        replaced: cut,
        snapshot,
        auto: options.auto === true,
        model: o.model.model,
        answeredBy: accepted?.answeredBy ?? null,
      });
      for (const a of summary.completions) record.spend.turns.push(this.#compactionSpend(at, a));
      this.#undo = undefined;
      this.#wire = this.#wireOf(record);
      this.#commit({
        at,
        event: "compaction",
        outcome: "ok",
        replaced: cut,
        snapshot: snapshot !== null,
        auto: options.auto === true,
      });
      return {
        outcome: "compacted" as const,
        replaced: cut,
        kept: record.messages.length,
        summaryBytes: new TextEncoder().encode(text).length,
        snapshot,
      };
    });
  }

  /**
   * Writes the plain-text snapshot a compaction starts with; refused (SnapshotError) where it
   * cannot be written, so that nothing is compacted without one unless asked.
   */
  #writeSnapshot(op: Operation, at: number): string {
    const paths = this.#o.paths;
    if (!paths || this.#o.persistence.incognito) {
      throw new SnapshotError(
        "Cannot write the snapshot before compacting " +
          (paths ? "in an incognito session" : "without a data dir") +
          ", so nothing was compacted; compact once without a snapshot (--no-snapshot) to go on",
      );
    }
    return op.stageSync("snapshot.write", () => writeSnapshot(paths, this.#record, at));
  }

  /** Compacts before a turn when the request would go over the token budget. */
  async #autoCompact(prompt: string, signal?: AbortSignal): Promise<void> {
    const o = this.#o;
    const budget = o.tokenBudget ?? defaultBudget(o.model.model);
    if (estimateTokens([...this.#wire, { content: prompt }]) <= budget) return;
    try {
      await this.compact({ auto: true, ...(signal ? { signal } : {}) });
    } catch (err) {
      if (
        !(err instanceof SnapshotError || err instanceof CompactionError ||
          err instanceof ModelError)
      ) throw err;
      o.persistence.note(
        `The session is over its token budget but was not compacted: ${err.message}`,
      );
    }
  }

  #compactionSpend(at: string, attempt: Summary["completions"][number]): TurnSpend {
    const completion = attempt.completion;
    return {
      turn: turnsOf(this.#record),
      at,
      outcome: "compaction",
      model: this.#o.model.model,
      answeredBy: completion?.answeredBy ?? null,
      tokensIn: completion?.tokensIn ?? null,
      tokensOut: completion?.tokensOut ?? null,
      ...splitWallTime({
        wallMs: attempt.ms,
        waitingModelMs: attempt.ms,
        runningToolsMs: 0,
        waitingUserMs: 0,
      }),
    };
  }

  /** Takes the last turn back (conversation, spend, permissions); false when there is none. */
  undo(): boolean {
    const snapshot = this.#undo;
    if (snapshot === undefined) return false;
    const turn = turnsOf(this.#record);
    // Side questions asked since are not part of the turn: their spend stays.
    const asides = this.#record.spend.turns.slice(snapshot.spend.turns.length)
      .filter((t) => t.outcome === "btw" || t.outcome === "btw-failed");
    this.#restore(snapshot);
    this.#record.spend.turns.push(...asides);
    this.#undo = undefined;
    const at = new Date((this.#o.now ?? Date.now)()).toISOString();
    this.#commit({ at, event: "undo", turn });
    return true;
  }

  /**
   * Renames the session and rewrites the record at once; an empty title is refused. The last
   * turn can still be undone afterwards.
   */
  rename(title: string): void {
    const clean = cleanTitle(title);
    if (clean === "") {
      throw new RangeError(`Cannot rename session "${this.id}": the title is empty`);
    }
    const gated = this.#o.gate.redact(clean, { destination: "disk" });
    this.#record.title = gated.text;
    // A rename is not a turn: /undo after it still takes the last turn back (the title stays).
    const at = new Date((this.#o.now ?? Date.now)()).toISOString();
    this.#commit({ at, event: "rename", disk: trailEntry(gated) });
  }

  /**
   * Removes this session's record and trail, as if it had never been written (a one-shot run
   * whose only turn failed leaves no session without an answer behind). Returns true when the
   * files are gone.
   */
  discard(): boolean {
    if (!this.#written) return true;
    const p = this.#o.persistence;
    const removed = p.attempt(() => p.store.remove(this.#record)) === true;
    if (removed) this.#written = false;
    return removed;
  }

  /** A new session in the same directory; this one stays as it is, resumable. */
  clear(): ChatSession {
    this.#undo = undefined;
    return ChatSession.start({ ...this.#o, cwd: this.#record.cwd });
  }

  /** The session at a glance. */
  status(): SessionStatus {
    const r = this.#record;
    const total = spendTotal(r.spend.turns);
    const parts: SessionStatus["parts"] = {};
    for (const key of ["waitingModelMs", "runningToolsMs", "waitingUserMs", "otherMs"] as const) {
      if (total[key] > 0) parts[key] = total[key];
    }
    const last = [...r.spend.turns].reverse().find((t) => t.answeredBy !== null);
    const p = this.#o.persistence;
    return {
      id: r.id,
      title: r.title,
      cwd: r.cwd,
      project: r.project,
      branch: r.branch,
      model: this.#o.model.model,
      endpoint: this.#o.model.endpoint,
      answeredBy: last?.answeredBy ?? null,
      turns: total.turns,
      messages: r.messages.length,
      tokensIn: total.tokensIn,
      tokensOut: total.tokensOut,
      wallMs: total.wallMs,
      parts,
      saving: p.incognito
        ? "incognito"
        : this.#written
        ? "saved"
        : r.spend.turns.length > 0
        ? "not saved"
        : "not yet saved",
      path: p.incognito ? undefined : p.store.recordPath(r),
      forkedFrom: r.forkedFrom,
    };
  }

  /** Writes the record (and the trail line) now, as after a turn. */
  save(): void {
    this.#commit();
  }

  #spend(
    turn: number,
    at: string,
    completion: Completion | null,
    wall: number,
    waitingModel: number,
    outcome: string,
  ): TurnSpend {
    return {
      turn,
      at,
      outcome,
      model: this.#o.model.model,
      answeredBy: completion?.answeredBy ?? null,
      tokensIn: completion?.tokensIn ?? null,
      tokensOut: completion?.tokensOut ?? null,
      ...splitWallTime({
        wallMs: wall,
        waitingModelMs: waitingModel,
        runningToolsMs: 0,
        waitingUserMs: 0,
      }),
    };
  }

  #snapshot(): Snapshot {
    const r = this.#record;
    return structuredClone({
      messages: r.messages,
      spend: r.spend,
      trust: r.trust,
      wire: this.#wire,
    });
  }

  #restore(s: Snapshot): void {
    const r = this.#record;
    r.messages = structuredClone(s.messages);
    r.spend = structuredClone(s.spend);
    r.trust = structuredClone(s.trust);
    this.#wire = structuredClone(s.wire);
  }

  /** Writes the record and appends the trail line (gate names and counts only). */
  #commit(line?: TrailLine): void {
    const r = this.#record;
    r.updatedAt = new Date((this.#o.now ?? Date.now)()).toISOString();
    r.build = this.#o.build ?? VERSION;
    r.spend.total = spendTotal(r.spend.turns);
    const p = this.#o.persistence;
    if (p.attempt(() => p.store.save(r))) this.#written = true;
    if (line !== undefined && this.#written) p.attempt(() => p.store.appendTrail(r, [line]));
  }
}
