// What every command shares: its spec (usage, options, one example), strict parsing, `--help`,
// usage errors and exit codes, and the options several commands take, declared once here. A
// command file states only what is its own and calls `run`.

import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { isCorruption } from "../lib/store/check.ts";
import type { Io } from "./_terminal/io.ts";

/** Exit status of a command: 0 success, 1 a failure the command explains, 2 a usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake in how a command was called; reported with a hint to `--help` and exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** `-h, --help`, which every command takes: `defineCommand` adds it to each spec. */
const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

/**
 * Options several commands take, declared once: a spec spreads in the ones it needs with
 * `shared(…)`. Their help rows stay in each spec, which says what the option means there.
 */
export const SHARED_OPTIONS = {
  json: { type: "boolean" },
  incognito: { type: "boolean" },
  project: { type: "string" },
  port: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/**
 * The shared options named, to spread into a spec's options.
 *
 * @example
 * options: { rebuild: { type: "boolean" }, ...shared("json") }
 */
export function shared<const K extends keyof typeof SHARED_OPTIONS>(
  ...names: K[]
): Pick<typeof SHARED_OPTIONS, K> {
  const picked = {} as Pick<typeof SHARED_OPTIONS, K>;
  for (const name of names) picked[name] = SHARED_OPTIONS[name];
  return picked;
}

/** A command's description: its name, usage lines, option help and one example. */
export interface CommandSpec<O extends ParseArgsOptionsConfig> {
  name: string;
  /** One line; `logbook --help` lists every command with it. */
  summary: string;
  usage: string;
  options: O;
  /** `[flag text, description]` rows for the help screen, in order (`-h, --help` comes last). */
  optionHelp: [string, string][];
  /** What the `-h, --help` row says (default "show this help"). */
  helpNote?: string;
  examples: string[];
  /** Most positionals the command accepts (default: unlimited). */
  maxPositionals?: number;
}

/** Declares a command, adding `--help` to its options (and keeping their types precise). */
export function defineCommand<const O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
): CommandSpec<O & typeof HELP_OPTION> {
  return { ...spec, options: { ...spec.options, ...HELP_OPTION } };
}

/** The help screen of a command, exactly as `--help` prints it (README blocks are checked against it). */
export function helpText<O extends ParseArgsOptionsConfig>(spec: CommandSpec<O>): string {
  const rows: [string, string][] = [
    ...spec.optionHelp,
    ["-h, --help", spec.helpNote ?? "show this help"],
  ];
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return [
    `${spec.name} — ${spec.summary}`,
    "",
    ...wrapUsage(`Usage: ${spec.usage}`),
    "",
    "Options:",
    ...rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
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

/**
 * The opening every command shares: parses `args` against `spec` (a usage error exits 2),
 * prints the help screen for `--help` (exit 0), else runs `body` with the parsed arguments,
 * under `runCommand`'s conventions for failures.
 *
 * @example
 * return await run(spec, args, io, ({ values, positionals }) => { …; return EXIT.ok; });
 */
export async function run<O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  args: string[],
  io: Io,
  body: (parsed: Parsed<O>) => Promise<number> | number,
): Promise<number> {
  return await runCommand(spec.name, io, async () => {
    const parsed = parseCommand(spec, args);
    if ((parsed.values as { help?: boolean }).help) {
      io.out(helpText(spec));
      return EXIT.ok;
    }
    return await body(parsed);
  });
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

/** `--port`: a port number from 0 to 65535 (0 picks a free one), or undefined when not given. */
export function parsePort(value: string | undefined): number | undefined {
  return wholeNumber(value, "port", { min: 0, max: 65535, what: "port number" });
}
