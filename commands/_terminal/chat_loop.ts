// The chat on a terminal: the loop that turns typed lines into turns and in-session commands
// (/rename, /compact, /undo, /clear, /status, /help, /exit), the UI on the process's own stdin,
// and `converse`, which runs a session there and says how to resume it.

import { type Io, styler } from "./io.ts";
import { safeText } from "../../lib/safe_text.ts";
import type { Context } from "../../lib/context.ts";
import { CompactionError, SnapshotError } from "../../lib/sessions/compaction.ts";
import { describeCompaction, formatStatus } from "../../lib/sessions/describe.ts";
import { ModelError } from "../../lib/sessions/model.ts";
import type { Persistence } from "../../lib/sessions/persistence.ts";
import type { PromptHistory } from "../../lib/sessions/prompt_history.ts";
import { resumeHint } from "../../lib/sessions/resume.ts";
import type { ChatSetup } from "../../lib/sessions/setup.ts";
import type { ChatSession, SideQuestion, TurnResult } from "../../lib/sessions/turn.ts";
import { lineReader, terminalPrompt } from "./prompt.ts";

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
  /** Shows that `model` is being waited for; the function returned takes it away. */
  waiting?(model: string): () => void;
}

/** The in-session commands. */
export const SLASH_COMMANDS = [
  "rename",
  "compact",
  "undo",
  "clear",
  "status",
  "btw",
  "exit",
  "help",
];

/** What Tab completes at the start of a prompt. */
export const SLASH_COMPLETIONS: readonly string[] = SLASH_COMMANDS.map((name) => `/${name}`);

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
  options: {
    persistence: Persistence;
    firstPrompt?: string;
    once?: boolean;
    model?: string;
    /** Kept pointing at the session in use (for the side-question view). */
    track?: { session: ChatSession };
  },
): Promise<LoopResult> {
  const { persistence } = options;
  const model = options.model ?? "the model";
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
      const next = await runSlash(current, command, ui, model);
      if (next !== current) {
        earlier.push(current);
        current = next;
        if (options.track) options.track.session = current;
      }
      continue;
    }

    const result = await streamed(ui, model, (turn) => current.turn(line, turn));
    if (result.outcome === "cancelled" && mark && history) {
      persistence.attempt(() => history.remove(mark));
    }
    failed = endTurn(result, ui, options.once === true);
    if (options.once) break;
  }
  warn();
  return { session: current, earlier, failed };
}

/**
 * Runs `ask` (a turn or a side question) so that Ctrl-C interrupts it, its reply streaming to the
 * UI; until the first piece of the reply arrives, the user sees that `model` is waited for.
 */
async function streamed<T>(
  ui: ChatUi,
  model: string,
  ask: (options: { signal: AbortSignal; onText: (text: string) => void }) => Promise<T>,
): Promise<T> {
  let stopWaiting = ui.waiting?.(model);
  const quiet = () => {
    stopWaiting?.();
    stopWaiting = undefined;
  };
  return await ui.interruptible((signal) =>
    ask({
      signal,
      onText: (text) => {
        quiet();
        ui.reply(text);
      },
    })
  ).finally(quiet);
}

/**
 * Says how a turn ended: cancelled (not kept), failed (the prompt kept in the session), or done
 * (its reply ends its line). Returns whether it failed.
 */
function endTurn(result: TurnResult, ui: ChatUi, once: boolean): boolean {
  if (result.outcome === "cancelled") {
    ui.note("\nCancelled: the turn was not kept\n");
    return false;
  }
  if (result.outcome === "failed") {
    ui.note(
      `error: ${result.error.message}\n` +
        (once
          ? ""
          : "The prompt is kept in the session: send another, or leave and resume later.\n"),
    );
    return true;
  }
  ui.reply(result.text.endsWith("\n") ? "" : "\n");
  return false;
}

/** `/btw QUESTION`: a side question, answered but kept out of the conversation; alone, the list. */
async function sideQuestion(
  session: ChatSession,
  question: string,
  ui: ChatUi,
  model: string,
): Promise<void> {
  if (question === "") {
    ui.note(formatSideQuestions(session.sideQuestions));
    return;
  }
  const result = await streamed(ui, model, (turn) => session.btw(question, turn));
  if (result.outcome === "cancelled") ui.note("\nCancelled: the side question was not kept\n");
  else if (result.outcome === "failed") ui.note(`error: ${result.error.message}\n`);
  else {
    ui.reply(result.text.endsWith("\n") ? "" : "\n");
    ui.note(
      result.kept
        ? "(a side question: kept apart from the conversation; Ctrl-L lists them)\n"
        : "(a side question: the conversation holds untrusted content, so this answer is not " +
          "kept; it stays in this window only)\n",
    );
  }
}

/** The side questions of a session, as the Ctrl-L view and `/btw` alone show them. */
export function formatSideQuestions(list: SideQuestion[]): string {
  if (list.length === 0) return "No side questions yet: ask one with /btw QUESTION\n";
  const lines = [`Side questions (${list.length}):`];
  list.forEach((item, i) => {
    lines.push(`${String(i + 1).padStart(3)}. ${item.question.replaceAll("\n", "\n     ")}`);
    const answer = item.answer === null ? "(no answer kept)" : item.answer +
      (item.windowOnly ? "\n(this answer is not kept: it met untrusted content)" : "");
    lines.push(`     ${answer.replaceAll("\n", "\n     ")}`);
  });
  return lines.join("\n") + "\n";
}

/** Runs one in-session command; returns the session to continue with. */
async function runSlash(
  session: ChatSession,
  command: { name: string; arg: string },
  ui: ChatUi,
  model: string,
): Promise<ChatSession> {
  switch (command.name) {
    case "btw":
      await sideQuestion(session, command.arg, ui, model);
      return session;
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
          "/status       this session at a glance\n" +
          "/btw QUESTION ask aside: not added to the conversation (Ctrl-L or /btw lists them)\n" +
          "/exit         leave\n",
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
 * The chat UI on the process's own stdin: on a terminal, the readline prompt (history, Ctrl-R,
 * Tab, a paste kept whole) and a "waiting for <model>…" line until the reply starts; plain lines
 * from piped input. Replies go to `io.out`, notes to `io.err`; Ctrl-C interrupts a reply.
 */
export function consoleUi(
  io: Io,
  options: { history?: PromptHistory; prompt?: string; sideQuestions?: () => SideQuestion[] } = {},
): ChatUi {
  const terminal = Deno.stdin.isTerminal();
  const readPiped = terminal ? undefined : lineReader(Deno.stdin.readable);
  const prompt = terminal
    ? terminalPrompt({
      prompt: options.prompt ?? "> ",
      history: options.history?.texts() ?? [],
      completions: SLASH_COMPLETIONS,
      // Ctrl-L: the side questions, through the filter (the prompt writes past the Io).
      ...(options.sideQuestions
        ? {
          view: () => safeText(formatSideQuestions(options.sideQuestions!()), { multiline: true }),
        }
        : {}),
    })
    : undefined;
  return {
    read: async () => readPiped ? await readPiped() : await prompt!.read(),
    reply: (text) => io.out(text),
    note: (text) => io.err(text),
    ...(io.errIsTerminal ? { waiting: waitingLine } : {}),
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

/**
 * "waiting for <model>…" on the terminal's stderr, erased again by the function returned. It is
 * written past the `Io` (whose filter would show the erasing escape as text): the model's name is
 * the user's own setting, passed through the filter all the same.
 */
function waitingLine(model: string): () => void {
  const encoder = new TextEncoder();
  const write = (text: string) => {
    try {
      Deno.stderr.writeSync(encoder.encode(text));
    } catch { /* a closed terminal: nothing to show */ }
  };
  const s = styler((Deno.env.get("NO_COLOR") ?? "") === "");
  write(s.dim(`waiting for ${safeText(model)}…`));
  return () => write("\r\x1b[K");
}

/** The last prompt and its answer, to show before the prompt when a session is resumed. */
export function lastExchange(session: ChatSession, shown: (text: string) => string): string {
  const messages = session.record.messages;
  const answer = messages.findLastIndex((m) => m.role === "assistant");
  const question = messages.findLastIndex((m) => m.role === "user");
  if (question === -1) return "";
  const clip = (text: string) => {
    const lines = shown(text).split("\n");
    return lines.length > RECAP_LINES
      ? [`… (${lines.length - RECAP_LINES} lines above)`, ...lines.slice(-RECAP_LINES)].join("\n")
      : lines.join("\n");
  };
  const parts = [`> ${clip(messages[question]!.content).replaceAll("\n", "\n  ")}`];
  if (answer > question) parts.push(clip(messages[answer]!.content));
  return parts.join("\n") + "\n";
}

/** The most lines of each message a resume shows of the last exchange. */
const RECAP_LINES = 20;

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
  options: { firstPrompt?: string; once?: boolean; notes?: string[]; recap?: boolean } = {},
): Promise<number> {
  const { persistence } = setup;
  const model = setup.options.model;
  const gate = setup.options.gate;
  for (const note of options.notes ?? []) io.err(`note: ${note}\n`);
  if (!options.once && Deno.stdin.isTerminal()) {
    io.err(
      `logbook chat with ${model.model} at ${model.endpoint}${
        persistence.incognito ? " (incognito: nothing is written)" : ""
      }. /help for commands, /exit or Ctrl-D to leave.\n`,
    );
  }
  if (options.recap) {
    io.out(lastExchange(session, (text) => gate.redact(text, { destination: "display" }).text));
  }
  const track = { session };
  const ui = consoleUi(io, {
    ...(persistence.history ? { history: persistence.history } : {}),
    sideQuestions: () =>
      track.session.sideQuestions.map((item) => ({
        ...item,
        question: gate.redact(item.question, { destination: "display" }).text,
        answer: item.answer === null
          ? null
          : gate.redact(item.answer, { destination: "display" }).text,
      })),
  });
  const fresh = !session.written;
  const result = await runChatLoop(session, ui, {
    persistence,
    model: model.model,
    track,
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
  // A one-shot run whose only turn failed keeps nothing: no session without an answer.
  if (options.once && result.failed && fresh && result.session.written) {
    io.err(
      result.session.discard()
        ? "Nothing was kept: run it again when the endpoint answers\n"
        : "The session is kept: resume it to try again.\n",
    );
  }
  if (result.session.written) {
    io.err(`Resume with: ${resumeHint(result.session.id, result.session.cwd, ctx.cwd)}\n`);
  }
  return result.failed ? 1 : 0;
}
