#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net --allow-run --allow-sys=hostname
// `logbook <command>`: one entry point for every command, so `deno install -g` (or the compiled
// binary) puts all of them on PATH as `logbook search …`, `logbook reindex …`. Alone on a
// terminal, `logbook` opens the full-screen search (`search -i`).

import {
  type CommandSpec,
  didYouMean,
  EXIT,
  helpText,
  type Options,
  run,
  wrap,
} from "./_command.ts";
import { completionScript, spec as completionsSpec } from "./_completions.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { VERSION } from "../lib/version.ts";

/** What a command module offers the dispatcher: its `main` and its spec (for the summary). */
interface CommandModule {
  main: (args: string[], io?: Io) => Promise<number>;
  spec: CommandSpec<Options>;
}

/**
 * Every command and how to load it (literal imports, so `deno compile` sees them). A command is
 * loaded only when it runs, or for `logbook --help`, which lists each one with its spec's summary.
 */
export const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  start: () => import("./start.ts"),
  reindex: () => import("./reindex.ts"),
  search: () => import("./search.ts"),
  show: () => import("./show.ts"),
  chat: () => import("./chat.ts"),
  resume: () => import("./resume.ts"),
  fork: () => import("./fork.ts"),
  rename: () => import("./rename.ts"),
  compact: () => import("./compact.ts"),
  status: () => import("./status.ts"),
  forget: () => import("./forget.ts"),
  "delete-user-data": () => import("./delete_user_data.ts"),
  "stage-markers": () => import("./stage_markers.ts"),
  usage: () => import("./usage.ts"),
  dashboard: () => import("./dashboard.ts"),
  mirror: () => import("./mirror.ts"),
  mcp: () => import("./mcp.ts"),
  push: () => import("./push.ts"),
};

/** Every command's spec, in the order `logbook --help` lists them (each module is loaded). */
async function allSpecs(): Promise<{ name: string; spec: CommandSpec<Options> }[]> {
  const names = Object.keys(COMMANDS);
  return await Promise.all(
    names.map(async (name) => ({ name, spec: (await COMMANDS[name]!()).spec })),
  );
}

/** The dispatcher's help screen (it loads every command, to take each one's summary). */
export async function usage(): Promise<string> {
  const commands = [
    ...await allSpecs(),
    { name: "completions", spec: completionsSpec },
    { name: "help", spec: { summary: "show a command's help: logbook help <command>" } },
  ];
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `logbook ${VERSION} — capture, search and keep your AI coding agents' conversations`,
    "",
    "Usage: logbook <command> [options]",
    "",
    "Commands:",
    ...commands.flatMap(({ name, spec }) =>
      wrap(`  ${name.padEnd(width)}  ${spec.summary}`, " ".repeat(width + 4))
    ),
    "",
    'Run "logbook <command> --help" for a command\'s options.',
    "",
    "Example:",
    '  logbook search "rotate credentials" --since 7d',
    "",
  ].join("\n");
}

/** Runs `logbook <command> [args]`; returns the exit status. */
export async function main(args: string[], io: Io = stdio()): Promise<number> {
  // Flags every command shares may come before the command name: `logbook --incognito chat`.
  const leading: string[] = [];
  while (args[leading.length] === "--incognito") leading.push("--incognito");
  const [name, ...after] = args.slice(leading.length);
  const rest = [...leading, ...after];
  if (name === undefined && leading.length === 0 && io.outIsTerminal && Deno.stdin.isTerminal()) {
    // Alone on a terminal: the full-screen search.
    return await (await COMMANDS.search!()).main(["--interactive"], io);
  }
  if (name === undefined || name === "--help" || name === "-h") {
    io.out(await usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "help") return await help(after, io);
  if (name === "completions") {
    return await run(completionsSpec, after, io, async ({ positionals }) => {
      io.out(completionScript(positionals[0], await allSpecs()));
      return EXIT.ok;
    });
  }
  if (name === "--version" || name === "-V") {
    io.out(`logbook ${VERSION}\n`);
    return EXIT.ok;
  }
  const load = COMMANDS[name];
  if (!load) return unknownCommand(name, io);
  const module = await load();
  return await module.main(rest, io);
}

/** `logbook help [<command>]`: the command's help screen, or the list of commands. */
async function help(args: string[], io: Io): Promise<number> {
  const [name, extra] = args;
  if (name === undefined) {
    io.out(await usage());
    return EXIT.ok;
  }
  if (extra !== undefined) {
    io.err(
      `error: Unexpected argument "${extra}"\nRun "logbook help <command>" for one command's help.\n`,
    );
    return EXIT.usage;
  }
  if (name === "completions") {
    io.out(helpText(completionsSpec));
    return EXIT.ok;
  }
  if (name === "help") {
    io.out(await usage());
    return EXIT.ok;
  }
  const load = COMMANDS[name];
  if (!load) return unknownCommand(name, io);
  io.out(helpText((await load()).spec));
  return EXIT.ok;
}

function unknownCommand(name: string, io: Io): number {
  const guess = didYouMean(name, [...Object.keys(COMMANDS), "completions", "help"]);
  io.err(
    `error: Unknown command "${name}"${guess ? `: did you mean "${guess}"?` : ""}\n` +
      'Run "logbook --help" for the list of commands.\n',
  );
  return EXIT.usage;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
