#!/usr/bin/env -S deno run -R -W -E
// `logbook <command>`: one entry point for every command, so `deno install -g` (or the compiled
// binary) puts all of them on PATH as `logbook search …`, `logbook reindex …`.

import type { ParseArgsOptionsConfig } from "node:util";
import { type CommandSpec, EXIT } from "./_command.ts";
import { type Io, stdio } from "./_terminal/io.ts";
import { VERSION } from "../lib/version.ts";

/** What a command module offers the dispatcher: its `main` and its spec (for the summary). */
interface CommandModule {
  main: (args: string[], io?: Io) => Promise<number>;
  spec: CommandSpec<ParseArgsOptionsConfig>;
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
  dashboard: () => import("./dashboard.ts"),
  mirror: () => import("./mirror.ts"),
  mcp: () => import("./mcp.ts"),
  push: () => import("./push.ts"),
};

/** The dispatcher's help screen (it loads every command, to take each one's summary). */
export async function usage(): Promise<string> {
  const names = Object.keys(COMMANDS);
  const specs = await Promise.all(names.map(async (name) => (await COMMANDS[name]!()).spec));
  const width = Math.max(...names.map((n) => n.length));
  return [
    `logbook ${VERSION} — capture, search and keep your AI coding agents' conversations`,
    "",
    "Usage: logbook <command> [options]",
    "",
    "Commands:",
    ...specs.map((spec, i) => `  ${names[i]!.padEnd(width)}  ${spec.summary}`),
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
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(await usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    io.out(`logbook ${VERSION}\n`);
    return EXIT.ok;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.err(`error: Unknown command "${name}"\nRun "logbook --help" for the list of commands.\n`);
    return EXIT.usage;
  }
  const module = await load();
  return await module.main(rest, io);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
