// The session runner: a conversation with a model turn by turn, every message through the gate,
// each turn's spend, the in-session commands (/rename, /undo, /clear, /status, /exit), and the
// loop that drives it from a terminal or piped input.

import { dirname, join, resolve } from "node:path";
import type { Io } from "../commands/_terminal/io.ts";
import { formatDuration } from "./format.ts";
import { type Context, gateFor } from "./context.ts";
import { type Gate, type GateDecision, trailEntry } from "./gate.ts";
import type { ChatMessage, Completion, ModelClient } from "./model.ts";
import { createModelClient, ModelError, modelSettings } from "./model.ts";
import { projectOf } from "./paths.ts";
import {
  HistoryWalker,
  lineReader,
  PromptHistory,
  readLine,
  stdinTerminal,
} from "./prompt_history.ts";
import {
  cleanTitle,
  newRecord,
  type SessionRecord,
  SessionStore,
  spendTotal,
  type TrailLine,
  type TurnSpend,
} from "./store/sessions.ts";
import { resumeHint } from "./resume.ts";
import { VERSION } from "./version.ts";
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
import type { DataPaths } from "./paths.ts";
import { operation } from "./stage_markers.ts";

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

/**
 * The Git branch checked out in `dir`'s work tree (read from the files, no `git` process), a
 * short commit id when HEAD is detached, or null outside Git.
 */
export function currentBranch(dir: string): string | null {
  for (let current = resolve(dir);; current = dirname(current)) {
    const dotGit = join(current, ".git");
    let gitDir: string | undefined;
    try {
      const info = Deno.statSync(dotGit);
      if (info.isDirectory) gitDir = dotGit;
      else if (info.isFile) {
        const m = /^gitdir:[ \t]*(.*?)\s*$/m.exec(Deno.readTextFileSync(dotGit));
        if (m?.[1]) gitDir = resolve(current, m[1]);
      }
    } catch {
      // No .git here (or not readable): look further up.
    }
    if (gitDir !== undefined) {
      try {
        const head = Deno.readTextFileSync(join(gitDir, "HEAD")).trim();
        const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
        if (ref) return ref[1]!;
        if (/^[0-9a-f]{7,}$/i.test(head)) return head.slice(0, 12);
      } catch {
        // A .git without a readable HEAD is not a repository Git would use either.
      }
    }
    if (dirname(current) === current) return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing a session down, or saying once that it cannot be.

/**
 * Where a session's files go: the session store and the prompt history. A write that fails does
 * not stop the session; the first failure becomes one warning, later ones are silent.
 */
export class Persistence {
  readonly store: SessionStore;
  readonly history: PromptHistory | undefined;
  #warned = false;
  #pending: string[] = [];

  constructor(store: SessionStore, history?: PromptHistory) {
    this.store = store;
    this.history = history;
  }

  /** True when nothing at all is written (it cannot be turned off). */
  get incognito(): boolean {
    return this.store.incognito;
  }

  /** Runs a write; a failure (other than a programming error) is turned into the one warning. */
  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) throw err;
      if (!this.#warned) {
        this.#warned = true;
        const reason = err instanceof Error ? err.message : String(err);
        this.#pending.push(
          `This session is not being saved: cannot write in the data dir "${this.store.root}": ${reason}`,
        );
      }
      return undefined;
    }
  }

  /** Queues a warning to show (every call is shown once). */
  note(warning: string): void {
    this.#pending.push(warning);
  }

  /** Warnings not yet shown; each is returned once. */
  takeWarnings(): string[] {
    const out = this.#pending;
    this.#pending = [];
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Showing a streamed reply through the gate.

/**
 * Passes streamed text through the gate for display a line at a time (a secret can only be
 * recognised whole), holding a private key block back until it ends.
 */
export class StreamRedactor {
  #buffer = "";
  readonly #gate: Gate;

  constructor(gate: Gate) {
    this.#gate = gate;
  }

  /** Adds a piece; returns what can be shown now. */
  push(delta: string): string {
    this.#buffer += delta;
    const openKey = this.#buffer.lastIndexOf("-----BEGIN ");
    const limit = openKey !== -1 && this.#buffer.indexOf("-----END ", openKey) === -1
      ? this.#buffer.lastIndexOf("\n", openKey)
      : this.#buffer.lastIndexOf("\n");
    if (limit < 0) return "";
    const ready = this.#buffer.slice(0, limit + 1);
    this.#buffer = this.#buffer.slice(limit + 1);
    return this.#gate.redact(ready, { destination: "display" }).text;
  }

  /** Everything still held, shown at the end of the reply. */
  flush(): string {
    const rest = this.#buffer;
    this.#buffer = "";
    return rest === "" ? "" : this.#gate.redact(rest, { destination: "display" }).text;
  }
}

// ---------------------------------------------------------------------------------------------
// Spend.

/** Time measured within one turn, in milliseconds. */
export interface TurnTimes {
  wallMs: number;
  waitingModelMs: number;
  runningToolsMs: number;
  waitingUserMs: number;
}

/**
 * A turn's wall time split four ways in whole milliseconds that add up exactly: waiting on the
 * model, running tools and waiting for the user as measured, and the remainder as `otherMs`.
 */
export function splitWallTime(times: TurnTimes): {
  wallMs: number;
  waitingModelMs: number;
  runningToolsMs: number;
  waitingUserMs: number;
  otherMs: number;
} {
  const part = (n: number) => Math.max(0, Math.round(n));
  const waitingModelMs = part(times.waitingModelMs);
  const runningToolsMs = part(times.runningToolsMs);
  const waitingUserMs = part(times.waitingUserMs);
  const measured = waitingModelMs + runningToolsMs + waitingUserMs;
  // Rounding can make the parts exceed the whole by a millisecond: the whole then grows to fit.
  const wallMs = Math.max(part(times.wallMs), measured);
  return { wallMs, waitingModelMs, runningToolsMs, waitingUserMs, otherMs: wallMs - measured };
}

// ---------------------------------------------------------------------------------------------
// Resuming.

/** What a resume brings back from a record, and nothing else. */
export interface RestoredState {
  messages: SessionRecord["messages"];
  plan: SessionRecord["plan"];
  spend: SessionRecord["spend"];
  branch: SessionRecord["branch"];
  trust: SessionRecord["trust"];
  btw: SessionRecord["btw"];
}

/**
 * The state a resume restores: the conversation, the plan, the spend, the branch, the trust map
 * and allowed commands, and the side questions. Copies, so the record is not shared.
 */
export function restoredState(record: SessionRecord): RestoredState {
  return structuredClone({
    messages: record.messages,
    plan: record.plan,
    spend: record.spend,
    branch: record.branch,
    trust: record.trust,
    btw: record.btw,
  });
}

/** The notes a resume prints: a record from another build, and a changed Git branch. */
export function resumeNotes(
  record: SessionRecord,
  here: { branch: string | null; build?: string },
): string[] {
  const notes: string[] = [];
  const build = here.build ?? VERSION;
  if (record.build !== build) {
    notes.push(
      `This session was recorded by logbook ${
        record.build || "(unknown)"
      }; this is logbook ${build}`,
    );
  }
  if ((record.branch ?? null) !== here.branch) {
    notes.push(
      `The Git branch changed: the session ran on ${branchName(record.branch)}, ` +
        `this is ${branchName(here.branch)}`,
    );
  }
  return notes;
}

function branchName(branch: string | null): string {
  return branch === null ? "no branch" : `"${branch}"`;
}

// ---------------------------------------------------------------------------------------------
// The session.

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

    const disk: GateDecision[] = [];
    const model: GateDecision[] = [];
    const forDisk = o.gate.redact(prompt, { destination: "disk" });
    const forModel = o.gate.redact(prompt, { destination: "model" });
    disk.push(forDisk);
    model.push(forModel);
    let stored = forDisk.text;
    let sent = forModel.text;
    for (const item of options.untrusted ?? []) {
      const ref = o.gate.quarantine.put(item.content, { source: item.source });
      const source = o.gate.redact(item.source, { destination: "disk" }).text;
      disk.push({ gates: ["quarantine"], quarantined: [ref] });
      stored += `\n\n[untrusted content from ${source}: ${ref}]`;
      sent += `\n\n<untrusted source="${item.source}">\n${
        o.gate.redact(item.content, { destination: "model" }).text
      }\n</untrusted>`;
    }
    if (record.title === "") record.title = defaultTitle(stored);
    record.messages.push({ role: "user", content: stored, at, turn });
    this.#wire.push({ role: "user", content: sent });

    // Compaction (a later build) runs here: it may shorten the request, never the record.
    const request = o.beforeRequest
      ? await o.beforeRequest(this.request, this.record)
      : this.request;

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
      if (err.reason === "cancelled" || options.signal?.aborted) {
        this.#restore(before);
        return { outcome: "cancelled" };
      }
      const spend = this.#spend(
        turn,
        at,
        null,
        clock() - started,
        clock() - modelStarted,
        "failed",
      );
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
      return { outcome: "failed", error: err, spend };
    }
    const waitingModelMs = clock() - modelStarted;
    const rest = shown.flush();
    if (rest) options.onText?.(rest);

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
    let snapshot: string | null = null;
    if (!options.noSnapshot) {
      const paths = o.paths;
      if (!paths || o.persistence.incognito) {
        throw new SnapshotError(
          "Cannot write the snapshot before compacting " +
            (paths ? "in an incognito session" : "without a data dir") +
            ", so nothing was compacted; compact once without a snapshot (--no-snapshot) to go on",
        );
      }
      snapshot = op.stageSync("snapshot.write", () => writeSnapshot(paths, record, now()));
    }
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
    this.#restore(snapshot);
    this.#undo = undefined;
    const at = new Date((this.#o.now ?? Date.now)()).toISOString();
    this.#commit({ at, event: "undo", turn });
    return true;
  }

  /** Renames the session and rewrites the record at once; an empty title is refused. */
  rename(title: string): void {
    const clean = cleanTitle(title);
    if (clean === "") {
      throw new RangeError(`Cannot rename session "${this.id}": the title is empty`);
    }
    const gated = this.#o.gate.redact(clean, { destination: "disk" });
    this.#record.title = gated.text;
    this.#undo = undefined;
    const at = new Date((this.#o.now ?? Date.now)()).toISOString();
    this.#commit({ at, event: "rename", disk: trailEntry(gated) });
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

/** One line saying what a compaction did. */
export function describeCompaction(result: CompactResult): string {
  if (result.outcome === "nothing") return `Nothing to compact: ${result.reason}\n`;
  return `Compacted: ${result.replaced} messages replaced by a summary of ${result.summaryBytes} bytes` +
    `; ${result.kept} kept${result.snapshot ? `; snapshot ${result.snapshot}` : "; no snapshot"}\n`;
}

/** The conversation turns of a record (compaction requests are in the spend but are not turns). */
export function turnsOf(record: Pick<SessionRecord, "spend">): number {
  return record.spend.turns.filter((t) => t.outcome !== "compaction").length;
}

/** `/status` as lines of text. */
export function formatStatus(s: SessionStatus): string {
  const names = {
    waitingModelMs: "waiting on the model",
    runningToolsMs: "running tools",
    waitingUserMs: "waiting for you",
    otherMs: "other",
  } as const;
  const parts = Object.entries(s.parts).map(([k, v]) =>
    `${names[k as keyof typeof names]} ${formatDuration(v)}`
  );
  const saving = s.saving === "saved"
    ? `saved in ${s.path}`
    : s.saving === "incognito"
    ? "incognito: nothing is written"
    : s.saving === "not saved"
    ? "not saved (the data dir cannot be written)"
    : "not saved yet (nothing to save before the first turn)";
  return [
    `Session   ${s.id}`,
    `Title     ${s.title || "(none yet)"}`,
    `Directory ${s.cwd}${s.branch ? ` (branch ${s.branch})` : ""}`,
    `Model     ${s.model} at ${s.endpoint}${
      s.answeredBy && s.answeredBy !== s.model ? `; answered by ${s.answeredBy}` : ""
    }`,
    `Turns     ${s.turns} (${s.messages} messages), tokens ${s.tokensIn} in / ${s.tokensOut} out`,
    `Time      ${formatDuration(s.wallMs)}${parts.length ? `: ${parts.join(", ")}` : ""}`,
    `Record    ${saving}`,
    ...(s.forkedFrom ? [`Forked    from ${s.forkedFrom}`] : []),
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// The loop.

/** What the loop reads from and writes to: a terminal, or piped input. */
export interface ChatUi {
  /** The next line, or undefined when the user leaves (end of input, Ctrl-D). */
  read(): Promise<string | undefined>;
  /** Reply text as it streams (stdout). */
  reply(text: string): void;
  /** Notes, warnings and command output (stderr). */
  note(text: string): void;
  /** Runs `fn` with a signal that aborts when the user interrupts (Ctrl-C). */
  interruptible<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/** The in-session commands. */
export const SLASH_COMMANDS = ["rename", "compact", "undo", "clear", "status", "exit", "help"];

/** A line's in-session command (`/rename NAME`), or undefined for an ordinary prompt. */
export function slashCommand(line: string): { name: string; arg: string } | undefined {
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!m) return undefined;
  return { name: m[1]!, arg: (m[2] ?? "").trim() };
}

/** How the loop ended: the session in use at the end, and any it left behind with /clear. */
export interface LoopResult {
  session: ChatSession;
  earlier: ChatSession[];
  /** True when the last turn failed (for one-shot runs). */
  failed: boolean;
}

/**
 * Drives sessions from `ui` until the user leaves: prompts become turns, `/…` lines in-session
 * commands. Every prompt is recorded in the prompt history (a cancelled one removed again).
 * With `once`, runs `firstPrompt` as a single turn and returns.
 */
export async function runChatLoop(
  session: ChatSession,
  ui: ChatUi,
  options: { persistence: Persistence; firstPrompt?: string; once?: boolean },
): Promise<LoopResult> {
  const { persistence } = options;
  let current = session;
  const earlier: ChatSession[] = [];
  let pending = options.firstPrompt;
  let failed = false;
  const warn = () => {
    for (const w of persistence.takeWarnings()) ui.note(`warning: ${w}\n`);
  };
  while (true) {
    warn();
    const line = pending ?? (options.once ? undefined : await ui.read());
    pending = undefined;
    if (line === undefined) break;
    if (line.trim() === "") continue;
    const history = persistence.history;
    const mark = options.once || history === undefined
      ? undefined
      : persistence.attempt(() => history.add(line));

    const command = slashCommand(line);
    if (command !== undefined) {
      if (command.name === "exit" || command.name === "quit") break;
      const next = await runSlash(current, command, ui);
      if (next !== current) {
        earlier.push(current);
        current = next;
      }
      continue;
    }

    const result = await ui.interruptible((signal) =>
      current.turn(line, { signal, onText: (text) => ui.reply(text) })
    );
    if (result.outcome === "cancelled") {
      if (mark && history) persistence.attempt(() => history.remove(mark));
      ui.note("\nCancelled: the turn was not kept\n");
      failed = false;
    } else if (result.outcome === "failed") {
      ui.note(
        `error: ${result.error.message}\n` +
          (options.once
            ? "The session is kept: resume it to try again.\n"
            : "The prompt is kept in the session: send another, or leave and resume later.\n"),
      );
      failed = true;
    } else {
      ui.reply(result.text.endsWith("\n") ? "" : "\n");
      failed = false;
    }
    if (options.once) break;
  }
  warn();
  return { session: current, earlier, failed };
}

/** Runs one in-session command; returns the session to continue with. */
async function runSlash(
  session: ChatSession,
  command: { name: string; arg: string },
  ui: ChatUi,
): Promise<ChatSession> {
  switch (command.name) {
    case "rename":
      try {
        session.rename(command.arg);
        ui.note(`Renamed to "${session.title}"\n`);
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        ui.note(`error: ${err.message}\n`);
      }
      return session;
    case "undo":
      ui.note(session.undo() ? "Took the last turn back\n" : "Nothing to undo\n");
      return session;
    case "clear": {
      const next = session.clear();
      ui.note(
        session.written
          ? `New session started; the previous one ("${session.title}", ${session.id}) stays resumable\n`
          : "New session started\n",
      );
      return next;
    }
    case "status":
      ui.note(formatStatus(session.status()));
      return session;
    case "compact": {
      const noSnapshot = command.arg === "--no-snapshot" || command.arg === "no-snapshot";
      if (command.arg !== "" && !noSnapshot) {
        ui.note(`error: Unknown option "${command.arg}": try /compact or /compact --no-snapshot\n`);
        return session;
      }
      try {
        const result = await ui.interruptible((signal) => session.compact({ noSnapshot, signal }));
        ui.note(describeCompaction(result));
      } catch (err) {
        if (
          !(err instanceof SnapshotError || err instanceof CompactionError ||
            err instanceof ModelError)
        ) throw err;
        ui.note(`error: ${err.message}\n`);
      }
      return session;
    }
    case "help":
      ui.note(
        "/rename NAME  rename this session\n/undo         take the last turn back\n" +
          "/compact      replace the oldest rounds by a summary (a snapshot is written first)\n" +
          "/clear        start a new session (this one stays resumable)\n" +
          "/status       this session at a glance\n/exit         leave\n",
      );
      return session;
    default:
      ui.note(
        `error: Unknown command "/${command.name}": try ${
          SLASH_COMMANDS.map((c) => `/${c}`).join(", ")
        }\n`,
      );
      return session;
  }
}

/**
 * The chat UI on the process's own stdin: a line editor with Up/Down history on a terminal,
 * plain lines from piped input. Replies go to `io.out`, notes to `io.err`; Ctrl-C interrupts a
 * reply being streamed.
 */
export function consoleUi(
  io: Io,
  options: { history?: PromptHistory; prompt?: string } = {},
): ChatUi {
  const terminal = Deno.stdin.isTerminal();
  const readPiped = terminal ? undefined : lineReader(Deno.stdin.readable);
  const raw = terminal ? stdinTerminal() : undefined;
  const prompt = options.prompt ?? "> ";
  return {
    read: async () => {
      if (readPiped) return await readPiped();
      const walker = new HistoryWalker(options.history?.texts() ?? []);
      const result = await readLine(raw!, prompt, walker);
      return "line" in result ? result.line : undefined;
    },
    reply: (text) => io.out(text),
    note: (text) => io.err(text),
    interruptible: async (fn) => {
      const controller = new AbortController();
      const onInterrupt = () => controller.abort();
      let listening = false;
      try {
        Deno.addSignalListener("SIGINT", onInterrupt);
        listening = true;
      } catch {
        // Signals are not available everywhere (Windows without a console): no interrupting.
      }
      try {
        return await fn(controller.signal);
      } finally {
        if (listening) Deno.removeSignalListener("SIGINT", onInterrupt);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Wiring for the commands that open a session (chat, resume, fork).

/** Everything a command needs to open sessions in a context. */
export interface ChatSetup {
  persistence: Persistence;
  /** Session options without the directory, which each session sets. */
  options: Omit<SessionOptions, "cwd">;
}

/**
 * The gate, the session store, the prompt history and the model client of a command run. Throws
 * ModelError (reason `config`) when no model is configured, before anything is written.
 */
export function chatSetup(
  ctx: Context,
  options: { incognito: boolean; model?: ModelClient },
): ChatSetup {
  const model = options.model ?? createModelClient(modelSettings(ctx.config));
  const gate = gateFor(ctx);
  const sessions = new SessionStore(ctx.paths, { incognito: options.incognito });
  const history = new PromptHistory({
    path: ctx.paths.promptHistory,
    root: ctx.paths.root,
    project: projectOf(ctx.cwd).root,
    redact: (text) => gate.redactText(text),
    incognito: options.incognito,
    now: ctx.now,
  });
  const persistence = new Persistence(sessions, history);
  return {
    persistence,
    options: {
      persistence,
      gate,
      model,
      now: ctx.now,
      paths: ctx.paths,
      ...(ctx.config.tokenBudget !== undefined ? { tokenBudget: ctx.config.tokenBudget } : {}),
    },
  };
}

/**
 * Runs a session on this process's terminal (or piped input) until the user leaves, then, with
 * the terminal restored, prints the command that resumes each session that was written. Returns
 * the exit status: 1 when a one-shot turn failed.
 */
export async function converse(
  io: Io,
  ctx: Context,
  session: ChatSession,
  setup: ChatSetup,
  options: { firstPrompt?: string; once?: boolean; notes?: string[] } = {},
): Promise<number> {
  const { persistence } = setup;
  for (const note of options.notes ?? []) io.err(`note: ${note}\n`);
  if (!options.once && Deno.stdin.isTerminal()) {
    const model = setup.options.model;
    io.err(
      `logbook chat with ${model.model} at ${model.endpoint}${
        persistence.incognito ? " (incognito: nothing is written)" : ""
      }. /help for commands, /exit or Ctrl-D to leave.\n`,
    );
  }
  const ui = consoleUi(io, persistence.history ? { history: persistence.history } : {});
  const result = await runChatLoop(session, ui, {
    persistence,
    ...(options.firstPrompt !== undefined ? { firstPrompt: options.firstPrompt } : {}),
    ...(options.once ? { once: true } : {}),
  });
  for (const earlier of result.earlier) {
    if (earlier.written) {
      io.err(
        `Earlier session "${earlier.title}": ${resumeHint(earlier.id, earlier.cwd, ctx.cwd)}\n`,
      );
    }
  }
  if (result.session.written) {
    io.err(`Resume with: ${resumeHint(result.session.id, result.session.cwd, ctx.cwd)}\n`);
  }
  return result.failed ? 1 : 0;
}
