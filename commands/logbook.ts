#!/usr/bin/env -S deno run -R -W -E
// `logbook <command>`: one entry point for every command, so `deno install -g` (or the compiled
// binary) puts all of them on PATH as `logbook search …`, `logbook reindex …`.

import { EXIT, type Io, stdio } from "../lib/cli.ts";
import { VERSION } from "../lib/version.ts";

type Main = (args: string[], io?: Io) => Promise<number>;

/** Every command: its summary and how to load it (static imports, so `deno compile` sees them). */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<{ main: Main }> }> = {
  start: {
    summary: "capture this machine's agent histories and show how to search them",
    load: () => import("./start.ts"),
  },
  reindex: {
    summary: "capture new transcript records into the history store",
    load: () => import("./reindex.ts"),
  },
  search: {
    summary: "find records across every captured conversation",
    load: () => import("./search.ts"),
  },
  show: {
    summary: "page through a whole conversation, byte-exact",
    load: () => import("./show.ts"),
  },
  chat: {
    summary: "talk with the configured model; the session is kept to resume or fork",
    load: () => import("./chat.ts"),
  },
  resume: {
    summary: "pick a session of this project back up, in logbook or in its own agent",
    load: () => import("./resume.ts"),
  },
  fork: {
    summary: "copy a session into a new one and open it (the source is left as it was)",
    load: () => import("./fork.ts"),
  },
  rename: {
    summary: "give a logbook session of this project a new title",
    load: () => import("./rename.ts"),
  },
  compact: {
    summary: "replace the oldest rounds of a logbook session by a summary (snapshot first)",
    load: () => import("./compact.ts"),
  },
  status: {
    summary: "logbook on this machine at a glance: store, capture, drift, snapshots, problems",
    load: () => import("./status.ts"),
  },
  forget: {
    summary: "remove conversations from the history store for good",
    load: () => import("./forget.ts"),
  },
  "delete-user-data": {
    summary: "stop logbook's running work and delete all its user data (config is kept)",
    load: () => import("./delete_user_data.ts"),
  },
  "stage-markers": {
    summary: "show recent stage markers, or the steps that never finished",
    load: () => import("./stage_markers.ts"),
  },
  dashboard: {
    summary: "serve the local web dashboard (search, conversations, status) on 127.0.0.1",
    load: () => import("./dashboard.ts"),
  },
};

/** The dispatcher's help screen. */
export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    `logbook ${VERSION} — capture, search and keep your AI coding agents' conversations`,
    "",
    "Usage: logbook <command> [options]",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
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
    io.out(usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    io.out(`logbook ${VERSION}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: Unknown command "${name}"\nRun "logbook --help" for the list of commands.\n`);
    return EXIT.usage;
  }
  const module = await command.load();
  return await module.main(rest, io);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
