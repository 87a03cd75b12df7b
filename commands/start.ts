#!/usr/bin/env -S deno run -R -W -E
// `start`: the first command a new user runs. Captures this machine's agent histories into the
// default data dir and says what it found and how to search; with no histories, offers a demo
// on the project's own fixtures in a temporary data dir.

import { fileURLToPath } from "node:url";
import {
  defineCommand,
  EXIT,
  formatBytes,
  formatDuration,
  helpText,
  type Io,
  parseCommand,
  runCommand,
  stdio,
  styler,
} from "../lib/cli.ts";
import { runCapture } from "../lib/capture.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { type Env, envFrom } from "../lib/env.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { search } from "../lib/store/search.ts";
import { storeStatus } from "../lib/store/status.ts";
import { summaryLine, warnings } from "./reindex.ts";
import { discoverContext } from "../lib/capture.ts";

export const spec = defineCommand({
  name: "start",
  summary: "capture this machine's agent histories and show how to search them",
  usage: "logbook start [--demo]",
  options: {
    demo: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  optionHelp: [
    ["--demo", "capture the bundled fixtures into a temporary data dir and run a sample search"],
    ["-h, --help", "show this help"],
  ],
  examples: ["deno task start"],
  maxPositionals: 0,
});

/** The project's fixtures, laid out as each agent keeps its files. */
export const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** Runs `start` with `args`; returns the exit status. */
export async function main(args: string[], io: Io = stdio(), env: Env = Deno.env): Promise<number> {
  return await runCommand(spec.name, io, async () => {
    const { values } = parseCommand(spec, args);
    if (values.help) {
      io.out(helpText(spec));
      return EXIT.ok;
    }
    if (values.demo) return await demo(io, env);
    const ctx = loadContext({ env });
    const roots = ADAPTERS.flatMap((a) => a.roots(discoverContext(ctx)));
    const found = await countSources(ctx);
    if (found === 0) {
      io.out(
        "No Claude Code, Codex or OpenCode histories were found on this machine.\n" +
          `Looked in:\n${roots.map((r) => `  ${r}\n`).join("")}\n` +
          "To try logbook on its bundled sample transcripts, run:\n  deno task start --demo\n",
      );
      return EXIT.ok;
    }
    return await captureAndReport(ctx, io, "deno task search");
  });
}

async function countSources(ctx: Context): Promise<number> {
  const discover = discoverContext(ctx);
  let n = 0;
  for (const adapter of ADAPTERS) {
    for await (const _ of adapter.discover(discover)) n++;
  }
  return n;
}

async function captureAndReport(
  ctx: Context,
  io: Io,
  searchCommand: string,
  demo = false,
): Promise<number> {
  const s = styler(io.color);
  const store = openStore(ctx);
  try {
    io.out(`Capturing into ${ctx.paths.root} …\n`);
    const result = await runCapture({ ctx, store, redact: redactorFor(ctx), command: "start" });
    if (result.status === "busy") {
      io.out(
        `Another capture is running (pid ${result.holder?.pid ?? "?"}); showing what is stored\n`,
      );
    } else if (result.status === "off") {
      io.out(`Capture is switched off (${result.reason}); showing what is stored\n`);
    } else if (result.status === "latched") {
      io.err(`error: capture is stopped after a failure: ${result.failure.message}\n`);
      return EXIT.failure;
    } else {
      io.out(summaryLine(result.summary) + "\n");
      const lines = warnings(result.summary);
      if (demo && lines.length) {
        io.err("The fixtures include deliberately malformed files, so expect these warnings:\n");
      }
      for (const line of lines) io.err(`${s.yellow("warning:")} ${line}\n`);
    }
    const status = storeStatus(store);
    const total = status.conversations.reduce((n, c) => n + c.count, 0);
    io.out(
      `\n${s.bold(`${total} conversations`)} in the store (${formatBytes(status.storeBytes)}):\n` +
        status.conversations.map((c) => `  ${c.agent.padEnd(9)} ${c.count}\n`).join("") +
        `\nSearch them:\n  ${searchCommand} "words you remember"\n` +
        (demo ? "" : `  ${searchCommand} "words" --project . --since 7d\n`),
    );
    return EXIT.ok;
  } finally {
    store.close();
  }
}

/** The demo: the fixtures captured into a fresh temporary data dir, and one sample search. */
async function demo(io: Io, env: Env): Promise<number> {
  const s = styler(io.color);
  const dataDir = await Deno.makeTempDir({ prefix: "logbook-demo-" });
  const emptyHome = await Deno.makeTempDir({ prefix: "logbook-demo-home-" });
  // A copy, because opening a database (OpenCode's) creates files beside it, and the fixtures
  // are read-only input (embedded and unwritable in a compiled binary).
  const sources = `${emptyHome}/fixtures`;
  await copyTree(FIXTURES, sources);
  const demoEnv = envFrom({
    HOME: emptyHome,
    LOGBOOK_DATA_DIR: dataDir,
    LOGBOOK_CONFIG_DIR: `${emptyHome}/config`,
    CLAUDE_CONFIG_DIR: `${sources}/claude`,
    CODEX_HOME: `${sources}/codex`,
    XDG_DATA_HOME: `${sources}/opencode/xdg-data`,
    INIT_CWD: emptyHome,
    NO_COLOR: env.get("NO_COLOR"),
  });
  const ctx = loadContext({ env: demoEnv });
  const started = performance.now();
  const code = await captureAndReport(
    ctx,
    io,
    `LOGBOOK_DATA_DIR=${dataDir} deno task search`,
    true,
  );
  if (code !== EXIT.ok) return code;
  const store = openStore(ctx);
  try {
    const query = "marmot keyring";
    const result = search(store, ADAPTERS, redactorFor(ctx), { query, limit: 3 });
    io.out(`\nA sample search for ${s.bold(`"${query}"`)}:\n`);
    for (const hit of result.hits) {
      io.out(
        `  ${s.cyan(hit.conversation)} ${
          s.dim(`${hit.kind}/${hit.role ?? "-"}`)
        }\n    ${hit.snippet}\n`,
      );
    }
    io.out(
      `\nThe demo store is ${dataDir} (${formatDuration(performance.now() - started)}); ` +
        `delete it and ${emptyHome} when you are done.\n`,
    );
    return EXIT.ok;
  } finally {
    store.close();
  }
}

/** Copies a directory tree (regular files and folders only). */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = `${from.replace(/\/$/, "")}/${entry.name}`;
    const target = `${to}/${entry.name}`;
    if (entry.isDirectory) await copyTree(source, target);
    else if (entry.isFile) await Deno.copyFile(source, target);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
