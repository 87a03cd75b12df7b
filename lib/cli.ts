// What every command shares: strict argument parsing, `--help`, exit codes, colour and errors.
// Commands stay thin shells around the library; this file keeps them uniform.

import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { isCorruption } from "./store/check.ts";

/** Exit status of a command: 0 success, 1 a failure the command explains, 2 a usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake in how a command was called; reported with a hint to `--help` and exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Options shared by many commands, defined once. */
export const COMMON_OPTIONS = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
  incognito: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/** A command's description: its name, usage lines, option help and one example. */
export interface CommandSpec<O extends ParseArgsOptionsConfig> {
  name: string;
  summary: string;
  usage: string;
  options: O;
  /** `[flag text, description]` rows for the help screen, in order. */
  optionHelp: [string, string][];
  examples: string[];
  /** Most positionals the command accepts (default: unlimited). */
  maxPositionals?: number;
}

/** Declares a command (an identity function that keeps the option types precise). */
export function defineCommand<const O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
): CommandSpec<O> {
  return spec;
}

/** The help screen of a command, exactly as `--help` prints it (README blocks are checked against it). */
export function helpText<O extends ParseArgsOptionsConfig>(spec: CommandSpec<O>): string {
  const width = Math.max(...spec.optionHelp.map(([flag]) => flag.length));
  const rows = spec.optionHelp.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
  return [
    `${spec.name} — ${spec.summary}`,
    "",
    ...wrapUsage(`Usage: ${spec.usage}`),
    "",
    "Options:",
    ...rows,
    "",
    spec.examples.length > 1 ? "Examples:" : "Example:",
    ...spec.examples.map((e) => `  ${e}`),
    "",
  ].join("\n");
}

/** Breaks a long usage line at option boundaries, continuation lines indented. */
function wrapUsage(line: string, width = 96): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of line.split(/ (?=\[|<|--)/)) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = `    ${word}`;
    } else current = current ? `${current} ${word}` : word;
  }
  lines.push(current);
  return lines;
}

/** Parsed arguments: option values by name, and positionals. */
export interface Parsed<O extends ParseArgsOptionsConfig> {
  values: ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>>[
    "values"
  ];
  positionals: string[];
}

/** Parses `args` strictly against the command's options; throws UsageError on anything unknown. */
export function parseCommand<O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  args: string[],
): Parsed<O> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: spec.options, strict: true, allowPositionals: true });
  } catch (err) {
    if (err instanceof TypeError) throw new UsageError(cleanParseError(err.message));
    throw err;
  }
  const max = spec.maxPositionals ?? Infinity;
  if (parsed.positionals.length > max) {
    const extra = parsed.positionals[max];
    throw new UsageError(`Unexpected argument "${extra}"`);
  }
  return parsed as Parsed<O>;
}

function cleanParseError(message: string): string {
  // node's messages end with advice about `--` that does not apply here; keep the first sentence.
  const first = message.split(/\.\s/)[0] ?? message;
  return first.replace(/\.$/, "");
}

/** Where a command writes; injected so tests can capture output without spawning. */
export interface Io {
  out(text: string): void;
  /** Writes bytes to stdout exactly as given (for `show --raw`). */
  outBytes(bytes: Uint8Array): void;
  err(text: string): void;
  /** True when stdout is a terminal that may show colour. */
  color: boolean;
  /** True when stdout is a terminal (`show --raw` then shows its bytes through the filter). */
  outIsTerminal: boolean;
  /** True when stderr is a terminal (progress bars go there). */
  errIsTerminal: boolean;
}

/** The real terminal: colour only on a TTY and never with `NO_COLOR`. */
export function stdio(): Io {
  const encoder = new TextEncoder();
  const noColor = (Deno.env.get("NO_COLOR") ?? "") !== "";
  return {
    out: (text) => writeAll(Deno.stdout, encoder.encode(text)),
    outBytes: (bytes) => writeAll(Deno.stdout, bytes),
    err: (text) => writeAll(Deno.stderr, encoder.encode(text)),
    color: !noColor && Deno.stdout.isTerminal(),
    outIsTerminal: Deno.stdout.isTerminal(),
    errIsTerminal: Deno.stderr.isTerminal(),
  };
}

function writeAll(stream: typeof Deno.stdout, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += stream.writeSync(bytes.subarray(offset));
    } catch (err) {
      // A closed pipe (`logbook search x | head`) is not an error worth a stack trace.
      if (err instanceof Deno.errors.BrokenPipe) return;
      throw err;
    }
  }
}

/** ANSI styling that turns into plain text when colour is off. */
export function styler(color: boolean) {
  const wrap = (open: string, close: string) => (text: string) =>
    color ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap("1", "22"),
    dim: wrap("2", "22"),
    red: wrap("31", "39"),
    green: wrap("32", "39"),
    yellow: wrap("33", "39"),
    cyan: wrap("36", "39"),
    highlight: wrap("1;33", "22;39"),
  };
}

/**
 * Runs a command body with the conventions of every command: `error: …` on stderr and exit 1
 * for failures, `error: …` plus a hint and exit 2 for usage errors.
 */
export async function runCommand(
  name: string,
  io: Io,
  body: () => Promise<number> | number,
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\nRun "${name} --help" for usage.\n`);
      return EXIT.usage;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.err(`error: ${message}\n`);
    if (isCorruption(err)) {
      io.err(
        'The history store is damaged: run "logbook status --check" to see what and how to recover.\n',
      );
    }
    if (Deno.env.get("LOGBOOK_DEBUG") && err instanceof Error && err.stack) {
      io.err(`${err.stack}\n`);
    }
    return EXIT.failure;
  }
}

/**
 * Parses a whole-number option value: decimal digits only (no sign, exponent, hex or spaces),
 * from `min` (default 1) to `max` (default the largest integer a number holds exactly). Anything
 * else is a UsageError naming the option, so every numeric option is checked the same way.
 * `what` names the value in that message (default "whole number").
 *
 * @example
 * const tail = wholeNumber(values.tail, "tail"); // "20" → 20; "1e3", "-1", "99…9" → exit 2
 */
export function wholeNumber(
  value: string | undefined,
  option: string,
  range: { min?: number; max?: number; what?: string } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const { min = 1, max = Number.MAX_SAFE_INTEGER, what = "whole number" } = range;
  const number = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    const expected = max < Number.MAX_SAFE_INTEGER
      ? `a ${what} from ${min} to ${max}`
      : min === 1
      ? `a positive ${what}`
      : min === 0
      ? `a ${what}`
      : `a ${what} of at least ${min}`;
    throw new UsageError(`Option "--${option}" expects ${expected}, got "${value}"`);
  }
  return number;
}

/** Human-readable byte size: `532 B`, `1.4 MB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Human-readable duration: `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  const minutes = Math.floor(total / 60);
  return `${minutes} min ${String(total % 60).padStart(2, "0")} s`;
}
