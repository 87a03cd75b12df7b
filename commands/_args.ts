// Strict parsing of a command line, as node's `util.parseArgs` does it with `strict: true` and
// `allowPositionals: true` (the subset logbook's commands use: string and boolean options,
// one-letter aliases, `--` ending the options). Written out because loading node:util costs every
// command ~6 ms of start-up; tests/commands/_args_test.ts holds it to node's answers.

import type { ParseArgsOptionsConfig } from "node:util";

/** A command line that does not fit the options, with node's error code for what is wrong. */
export class ArgsError extends TypeError {
  override name = "ArgsError";
  constructor(
    readonly code:
      | "ERR_PARSE_ARGS_UNKNOWN_OPTION"
      | "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
    /** The option as written: `--limt`, `-x`. */
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}

/** Option values by name (a string, or true for a boolean) and the positionals, in order. */
export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Parses `args` against `options`: `--name`, `--name=value`, `--name value`, `-x`, `-x value`,
 * grouped one-letter booleans (`-qy`), `--` before positionals. An unknown option, a string
 * option without its value (or with one that looks like an option), and a value given to a
 * boolean throw ArgsError. A later option of the same name replaces the earlier one.
 */
export function parseArgs(args: readonly string[], options: ParseArgsOptionsConfig): ParsedArgs {
  const reading: Reading = { options, byShort: new Map(), values: Object.create(null) };
  for (const [name, option] of Object.entries(options)) {
    if (option.short !== undefined) reading.byShort.set(option.short, name);
  }
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) i += readLong(arg, args[i + 1], reading);
    else if (arg.startsWith("-") && arg.length > 1) i += readShort(arg, args[i + 1], reading);
    else positionals.push(arg);
  }
  return { values: { ...reading.values }, positionals };
}

/** What reading one argument needs: the options, their names by letter, the values so far. */
interface Reading {
  options: ParseArgsOptionsConfig;
  byShort: Map<string, string>;
  values: Record<string, string | boolean | undefined>;
}

/**
 * Reads `--name`, `--name=value` or `--name value` into the values; returns how many arguments
 * after it were taken (1 when `next` is the value).
 */
function readLong(arg: string, next: string | undefined, reading: Reading): number {
  const { options, values } = reading;
  const eq = arg.indexOf("=");
  const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
  const written = `--${name}`;
  const option = Object.hasOwn(options, name) ? options[name] : undefined;
  if (!option) {
    throw new ArgsError("ERR_PARSE_ARGS_UNKNOWN_OPTION", written, `Unknown option '${written}'`);
  }
  if (option.type === "boolean") {
    if (eq !== -1) {
      throw new ArgsError(
        "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
        written,
        `Option '${written}' does not take an argument`,
      );
    }
    values[name] = true;
    return 0;
  }
  if (eq !== -1) {
    values[name] = arg.slice(eq + 1);
    return 0;
  }
  values[name] = valueAfter(written, next);
  return 1;
}

/**
 * Reads a group of one-letter options (`-x`, `-qy`, `-ofile`, `-o file`) into the values;
 * returns how many arguments after it were taken (1 when `next` is the value).
 */
function readShort(arg: string, next: string | undefined, reading: Reading): number {
  const { options, byShort, values } = reading;
  const letters = arg.slice(1);
  for (let j = 0; j < letters.length; j++) {
    const letter = letters[j]!;
    const written = `-${letter}`;
    const name = byShort.get(letter);
    if (name === undefined) {
      throw new ArgsError("ERR_PARSE_ARGS_UNKNOWN_OPTION", written, `Unknown option '${written}'`);
    }
    if (options[name]!.type === "boolean") {
      values[name] = true;
      continue;
    }
    // A string option takes the rest of the group (`-ofile`), or the next argument.
    if (j < letters.length - 1) {
      values[name] = letters.slice(j + 1);
      return 0;
    }
    values[name] = valueAfter(written, next);
    return 1;
  }
  return 0;
}

/** The value of a string option `written` without one: the next argument, `next`. */
function valueAfter(written: string, next: string | undefined): string {
  // A value that looks like an option is taken for a forgotten value, as node takes it.
  if (next === undefined || (next.length > 1 && next.startsWith("-"))) {
    throw new ArgsError(
      "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
      written,
      `Option '${written} <value>' argument missing`,
    );
  }
  return next;
}
