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
  const values: Record<string, string | boolean | undefined> = Object.create(null);
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.short !== undefined) byShort.set(option.short, name);
  }
  const takeValue = (written: string, i: number): string => {
    const next = args[i + 1];
    // A value that looks like an option is taken for a forgotten value, as node takes it.
    if (next === undefined || (next.length > 1 && next.startsWith("-"))) {
      throw new ArgsError(
        "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
        written,
        `Option '${written} <value>' argument missing`,
      );
    }
    return next;
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const written = `--${name}`;
      const option = Object.hasOwn(options, name) ? options[name] : undefined;
      if (!option) {
        throw new ArgsError(
          "ERR_PARSE_ARGS_UNKNOWN_OPTION",
          written,
          `Unknown option '${written}'`,
        );
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
      } else if (eq !== -1) {
        values[name] = arg.slice(eq + 1);
      } else {
        values[name] = takeValue(written, i);
        i++;
      }
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      const letters = arg.slice(1);
      for (let j = 0; j < letters.length; j++) {
        const letter = letters[j]!;
        const written = `-${letter}`;
        const name = byShort.get(letter);
        if (name === undefined) {
          throw new ArgsError(
            "ERR_PARSE_ARGS_UNKNOWN_OPTION",
            written,
            `Unknown option '${written}'`,
          );
        }
        if (options[name]!.type === "boolean") {
          values[name] = true;
          continue;
        }
        // A string option takes the rest of the group (`-ofile`), or the next argument.
        if (j < letters.length - 1) values[name] = letters.slice(j + 1);
        else {
          values[name] = takeValue(written, i);
          i++;
        }
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values: { ...values }, positionals };
}
