// What every command shares: its spec (arguments, each option once with its help, the Deno
// permissions it runs with, examples), the usage line and `--help` made from it, strict parsing,
// usage errors and exit codes, and the options several commands take, declared once here. A
// command file states only what is its own and calls `run`.

import type { parseArgs as nodeParseArgs } from "node:util";
import { ArgsError, parseArgs } from "./_args.ts";
import { isCorruption, StoreDamagedError } from "../lib/store/db.ts";
import { closeTo } from "../lib/edit_distance.ts";
import type { Io } from "./_terminal/io.ts";
import type { Env } from "../lib/env.ts";
import type { Permissions } from "../lib/run_flags.ts";

/** Exit status of a command: 0 success, 1 a failure the command explains, 2 a usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The signals that stop a long command: Ctrl-C, and SIGTERM (what systemd and kill send) where the platform has it. */
export const STOP_SIGNALS: readonly Deno.Signal[] = Deno.build.os === "windows"
  ? ["SIGINT"]
  : ["SIGINT", "SIGTERM"];

/**
 * An `AbortSignal` that Ctrl-C or SIGTERM aborts, listening until `release`. Hold it until the
 * command's clean-up is done: under `deno task` one Ctrl-C reaches the command twice (from the
 * terminal, and forwarded by the task runner), and a copy that finds no listener kills the
 * process with its clean-up half done. Once a stop has come, `release` keeps listening: the
 * process is on its way out, and the copy may arrive after the clean-up (the listener does not
 * keep the process alive).
 */
export function stopSignals(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, abort);
  return {
    signal: controller.signal,
    release() {
      if (controller.signal.aborted) return;
      for (const signal of STOP_SIGNALS) Deno.removeSignalListener(signal, abort);
    },
  };
}

/** A mistake in how a command was called; reported with a hint to `--help` and exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * One option of a command, declared once: how it parses (as node's `parseArgs` takes it) and how
 * its help row and its place in the usage line read.
 */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** Its help row; an option without one has none (`--subagents`: `--no-subagents`' row says it). */
  help?: string;
  /** What its value is called in help and usage: `N` in `--limit N`. */
  value?: string;
  /**
   * The values it accepts, when they are a fixed list: the usage line shows them
   * (`--sort relevance|newest|oldest`) and `logbook completions` offers them.
   */
  choices?: readonly string[];
  /** The usage line writes its short form: `-i|--interactive`, `-p PROMPT`. */
  shortInUsage?: true;
  /** The option it is the alternative of, in one pair of brackets: `[--mirror|--team]`. */
  or?: string;
  /** The option it goes with, inside that one's brackets: `[--watch [--interval N]]`. */
  within?: string;
}

/** A command's options by name. */
export type Options = Record<string, OptionSpec>;

/** `-h, --help`, which every command takes: `defineCommand` adds it to each spec. */
const HELP_OPTION = {
  help: { type: "boolean", short: "h", help: "show this help" },
} as const satisfies Options;

/**
 * Options several commands take, declared once: a spec spreads in the ones it needs with
 * `shared({ name: "help row" })`, the row saying what the option means there.
 */
export const SHARED_OPTIONS = {
  json: { type: "boolean" },
  incognito: { type: "boolean" },
  project: { type: "string", value: "DIR" },
  port: { type: "string", value: "N" },
} as const satisfies Options;

type Shared = typeof SHARED_OPTIONS;

/**
 * The shared options named, each with its help row for this command, to spread into a spec's
 * options.
 *
 * @example
 * options: { rebuild: { type: "boolean", help: "…" }, ...shared({ json: "print it as JSON" }) }
 */
export function shared<const H extends { [K in keyof Shared]?: string }>(
  help: H,
): { [K in keyof H & keyof Shared]: Shared[K] & { help: string } } {
  const picked: Record<string, OptionSpec> = {};
  for (const [name, text] of Object.entries(help)) {
    picked[name] = { ...SHARED_OPTIONS[name as keyof Shared], help: text as string };
  }
  return picked as { [K in keyof H & keyof Shared]: Shared[K] & { help: string } };
}

/** A command's description: its name, arguments, options, permissions and examples. */
export interface CommandSpec<O extends Options> {
  name: string;
  /** One line; `logbook --help` lists every command with it. */
  summary: string;
  /** Its positional arguments as the usage line writes them, before the options: `<id> <title>`. */
  arguments?: string;
  /** Help rows for the arguments, before the options' rows: `["ID", "a session id or …"]`. */
  argumentHelp?: [string, string][];
  /** Its options, in the order help lists them (`-h, --help` comes last). */
  options: O;
  /** What the `-h, --help` row says (default "show this help"). */
  helpNote?: string;
  examples: string[];
  /** Most positionals the command accepts (default: unlimited). */
  maxPositionals?: number;
  /**
   * What the command may do, which its task, its shebang, its compiled build and the tests'
   * runs of it grant, and nothing more (`logbook` itself grants what all of them declare).
   */
  permissions: Permissions;
  /**
   * Files `deno compile` cannot see imported and must embed: workers, bodies loaded by a
   * computed specifier, fixtures it reads.
   */
  embed?: readonly string[];
}

/** Declares a command, adding `--help` to its options (and keeping their types precise). */
export function defineCommand<const O extends Options>(
  spec: CommandSpec<O>,
): CommandSpec<O & typeof HELP_OPTION> {
  return { ...spec, options: { ...spec.options, ...HELP_OPTION } };
}

/** The widest a help screen gets, so it reads in an 80-column terminal. */
export const HELP_WIDTH = 80;

/** An option as its help row writes it: `-o, --output FILE`. */
function flagText(name: string, option: OptionSpec): string {
  const short = option.short === undefined ? "" : `-${option.short}, `;
  return `${short}--${name}${option.type === "string" ? ` ${option.value ?? "VALUE"}` : ""}`;
}

/** An option as the usage line writes it: `--limit N`, `--sort relevance|newest|oldest`. */
function usageWord(name: string, option: OptionSpec): string {
  const value = option.choices?.join("|") ?? option.value ?? "VALUE";
  if (option.shortInUsage && option.short !== undefined) {
    return option.type === "string" ? `-${option.short} ${value}` : `-${option.short}|--${name}`;
  }
  return option.type === "string" ? `--${name} ${value}` : `--${name}`;
}

/**
 * The command's usage line, made from its options: each in brackets, in the order declared, an
 * alternative beside the option it replaces and an option that goes with another inside its
 * brackets (`logbook push [--dry-run] [--watch [--interval N]]`).
 */
export function usageLine<O extends Options>(spec: CommandSpec<O>): string {
  const entries = Object.entries(spec.options).filter(([name]) => name !== "help");
  const written = (name: string, option: OptionSpec): string =>
    [
      usageWord(name, option),
      ...entries.filter(([, o]) => o.within === name).map(([n, o]) => `[${written(n, o)}]`),
    ].join(" ");
  const bracket = (name: string, option: OptionSpec): string => {
    const alternatives = entries.filter(([, o]) => o.or === name).map(([n, o]) => written(n, o));
    return `[${[written(name, option), ...alternatives].join("|")}]`;
  };
  const heads = entries.filter(([, o]) => o.or === undefined && o.within === undefined);
  return [
    `logbook ${spec.name}`,
    ...(spec.arguments ? [spec.arguments] : []),
    ...heads.map(([name, option]) => bracket(name, option)),
  ].join(" ");
}

/** The help screen of a command, exactly as `--help` prints it (README blocks are checked against it). */
export function helpText<O extends Options>(spec: CommandSpec<O>): string {
  const rows: [string, string][] = [
    ...spec.argumentHelp ?? [],
    ...Object.entries(spec.options).flatMap(([name, option]): [string, string][] =>
      option.help === undefined ? [] : [[
        flagText(name, option),
        name === "help" ? spec.helpNote ?? option.help : option.help,
      ]]
    ),
  ];
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const indent = " ".repeat(2 + width + 2);
  return [
    ...wrap(`${spec.name} — ${spec.summary}`, ""),
    "",
    ...wrapUsage(`Usage: ${usageLine(spec)}`),
    "",
    "Options:",
    ...rows.flatMap(([flag, text]) => wrap(`  ${flag.padEnd(width)}  ${text}`, indent)),
    "",
    spec.examples.length > 1 ? "Examples:" : "Example:",
    ...spec.examples.flatMap((e) => wrap(`  ${e}`, "      ")),
    "",
  ].join("\n");
}

/** Breaks a long usage line at option boundaries, continuation lines indented. */
function wrapUsage(line: string, width = HELP_WIDTH): string[] {
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

/** Breaks `line` at spaces to fit `width`, continuation lines starting with `indent`. */
export function wrap(line: string, indent: string, width = HELP_WIDTH): string[] {
  const lines: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const cut = rest.lastIndexOf(" ", width);
    if (cut <= indent.length) break;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = indent + rest.slice(cut + 1).trimStart();
  }
  lines.push(rest);
  return lines;
}

/** Parsed arguments: option values by name, and positionals. */
export interface Parsed<O extends Options> {
  values: ReturnType<typeof nodeParseArgs<{ options: O; strict: true; allowPositionals: true }>>[
    "values"
  ];
  positionals: string[];
}

/** Parses `args` strictly against the command's options; throws UsageError on anything unknown. */
export function parseCommand<O extends Options>(
  spec: CommandSpec<O>,
  args: string[],
): Parsed<O> {
  let parsed;
  try {
    parsed = parseArgs(args, spec.options);
  } catch (err) {
    if (err instanceof ArgsError) throw new UsageError(plainParseError(err, spec.options));
    throw err;
  }
  const max = spec.maxPositionals ?? Infinity;
  if (parsed.positionals.length > max) {
    const extra = parsed.positionals[max];
    throw new UsageError(
      max === 0
        ? `Unexpected argument "${extra}": this command takes options only`
        : `Unexpected argument "${extra}"`,
    );
  }
  return parsed as Parsed<O>;
}

/** What is wrong with a command line, as a plain sentence, with a guess for a mistyped option. */
function plainParseError(err: ArgsError, options: Options): string {
  const option = err.option;
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const names = Object.keys(options).map((name) => `--${name}`);
    const guess = option.startsWith("--") ? didYouMean(option, names) : undefined;
    return `Unknown option "${option}"${guess ? `: did you mean "${guess}"?` : ""}`;
  }
  if (/does not take an argument/.test(err.message)) return `Option "${option}" takes no value`;
  return `Option "${option}" needs a value`;
}

/**
 * The candidate closest to a mistyped `word`, when one is close enough to be what was meant
 * (a few letters off, or the start of it), else undefined.
 *
 * @example
 * didYouMean("serch", ["search", "show"]); // "search"
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  return closeTo(word, candidates)[0];
}

/**
 * The opening every command shares: parses `args` against `spec` (a usage error exits 2),
 * prints the help screen for `--help` (exit 0), else runs `body` with the parsed arguments,
 * under `runCommand`'s conventions for failures.
 *
 * @example
 * return await run(spec, args, io, ({ values, positionals }) => { …; return EXIT.ok; });
 */
export async function run<O extends Options>(
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
 * How the user runs `command` (`search`) the way they ran this process: `logbook search` from the
 * `logbook` entry (installed or compiled; `deno task logbook search` under `deno task`, which sets
 * `INIT_CWD`), `deno task search` from a command's own file, as `deno task start` runs it.
 */
export function commandLine(command: string, env: Env, mainModule = Deno.mainModule): string {
  if (!mainModule.endsWith("/commands/logbook.ts")) return `deno task ${command}`;
  return env.get("INIT_CWD") ? `deno task logbook ${command}` : `logbook ${command}`;
}

/** The line after a usage error: where the command's help is. */
export function helpHint(name: string): string {
  return `Run "logbook ${name} --help" for usage.`;
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
      io.err(`error: ${err.message}\n${helpHint(name)}\n`);
      return EXIT.usage;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.err(`error: ${message}\n`);
    // A StoreDamagedError says itself what is damaged and how to recover.
    if (isCorruption(err) && !(err instanceof StoreDamagedError)) {
      io.err(
        'The history store is damaged: run "logbook status --check" to see what and how to recover.\n',
      );
    }
    if (debugWanted() && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
    return EXIT.failure;
  }
}

/** True when LOGBOOK_DEBUG asks for stacks; false where the command may not read it. */
function debugWanted(): boolean {
  try {
    return Boolean(Deno.env.get("LOGBOOK_DEBUG"));
  } catch {
    // Without env access (run without the task's flags) the error itself is what to print.
    return false;
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

/**
 * The usage error for an option's bad value, one sentence naming it:
 * `Option "--agent" expects claude, codex, opencode or logbook, got "claud"`, or, when the
 * problem is not the value's form, `Invalid value for "--since": <what is wrong>`.
 */
export function invalidOption(
  option: string,
  value: unknown,
  problem: { message: string; expected?: string },
): UsageError {
  if (problem.expected !== undefined && typeof value === "string") {
    return new UsageError(`Option "--${option}" expects ${problem.expected}, got "${value}"`);
  }
  return new UsageError(`Invalid value for "--${option}": ${problem.message}`);
}

/** `--port`: a port number from 0 to 65535 (0 picks a free one), or undefined when not given. */
export function parsePort(value: string | undefined): number | undefined {
  return wholeNumber(value, "port", { min: 0, max: 65535, what: "port number" });
}
