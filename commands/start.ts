#!/usr/bin/env -S deno run --v8-flags=--expose-gc,--max-semi-space-size=1 -R -W -E --allow-net=127.0.0.1 --allow-run=git
// `start`: the first command a new user runs. Captures this machine's agent histories into the
// default data dir, says what it found, and serves the dashboard on them until Ctrl-C; with no
// histories, does the same for a demo on the project's own fixtures in a temporary data dir, which
// is removed when it exits. On a terminal the capture draws reindex's progress bar; Ctrl-C stops
// it at a batch boundary.

import { fileURLToPath } from "node:url";
import { discoverContext, runCapture, whyNotCaptured } from "../lib/capture/run.ts";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { type Env, envFrom } from "../lib/env.ts";
import { formatBytes, formatDuration, oneOf } from "../lib/format.ts";
import { AGENT_SPECS, agentSpec, OTHER_AGENTS } from "../lib/agents.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { search } from "../lib/store/search.ts";
import { storeStatus } from "../lib/store/status.ts";
import { dashboardToken } from "../servers/dashboard.ts";
import {
  commandLine,
  defineCommand,
  EXIT,
  parsePort,
  run,
  shared,
  stopSignals,
} from "./_command.ts";
import { STOPPED, summaryLine, warnings } from "./_terminal/capture_report.ts";
import { type Io, stdio, styler } from "./_terminal/io.ts";
import { progressBar } from "./_terminal/progress.ts";
import { conversationTotal } from "./_terminal/status_view.ts";
import { safeIo } from "./_terminal/safe_io.ts";
import { safeText } from "../lib/safe_text.ts";
import { listen, serveUntilStopped } from "./_terminal/serve.ts";

export const spec = defineCommand({
  name: "start",
  summary: "capture this machine's agent histories and show how to search them",
  options: {
    demo: {
      type: "boolean",
      help: "use a temporary copy of the bundled sample transcripts, not this machine's",
    },
    "no-dashboard": {
      type: "boolean",
      help: "capture (and for the demo, run a sample search), then exit",
    },
    ...shared({
      port: 'dashboard port (default 8787 or config "dashboard.port"; 0 picks a free one)',
    }),
  },
  examples: ["deno task start", "deno task start --demo --port 0"],
  maxPositionals: 0,
  permissions: { read: true, write: true, env: true, net: ["127.0.0.1"], run: ["git"] },
  embed: [
    "lib/capture/batch_worker.ts",
    "lib/capture/known_worker.ts",
    "lib/store/_check_worker.ts",
    "lib/store/_scan_worker.ts",
    "lib/store/_search_worker.ts",
    "fixtures",
  ],
});

/** What to do once the histories are captured. */
interface Serve {
  /** Serve the dashboard on them (false with --no-dashboard). */
  on: boolean;
  /** `--port`, when given. */
  port: number | undefined;
  /** The dashboard's access token (`LOGBOOK_DASHBOARD_TOKEN`, or a fresh one). */
  token: string;
  /** The user's environment (the demo takes `NO_COLOR` from it). */
  env: Env;
  stop: AbortSignal | undefined;
}

/** The project's fixtures, laid out as each agent keeps its files. */
export const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/**
 * Runs `start` with `args`; returns the exit status. The dashboard serves until `stop` aborts
 * (default: SIGINT or SIGTERM).
 */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  stop?: AbortSignal,
): Promise<number> {
  return await run(spec, args, safeIo(io), async ({ values }) => {
    const on = !values["no-dashboard"];
    const serve: Serve = {
      on,
      port: parsePort(values.port),
      // A bad LOGBOOK_DASHBOARD_TOKEN fails here, before any work.
      token: on ? dashboardToken(env) : "",
      env,
      stop,
    };
    if (values.demo) return await demo(io, serve);
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const roots = [...new Set(ADAPTERS.flatMap((a) => a.roots(discoverContext(ctx))))];
    const found = await countSources(ctx);
    if (found === 0) {
      io.out(
        `No ${
          oneOf(OTHER_AGENTS.map((a) => agentSpec(a).display))
        } histories were found on this machine.\n` +
          `Looked in:\n${roots.map((r) => `  ${r}\n`).join("")}\n` +
          "Running the demo on logbook's bundled sample transcripts instead.\n\n",
      );
      return await demo(io, serve);
    }
    const search = commandLine("search", env);
    const { code, stopped } = await captureAndReport(ctx, io, serve.stop, search);
    if (code !== EXIT.ok || stopped || !serve.on) return code;
    io.out("\nOr search, read, resume and fork them in the dashboard:\n");
    await dashboardOn(ctx, io, serve);
    return EXIT.ok;
  });
}

/** Serves the dashboard on `ctx`'s data dir (the demo's when `demo`) until stopped. */
async function dashboardOn(ctx: Context, io: Io, serve: Serve, demo = false): Promise<void> {
  const dashboard = listen({
    ctx,
    io,
    host: "127.0.0.1",
    port: serve.port ?? ctx.config.dashboard.port,
    // A port nobody asked for must not stop a first run: another free one does as well.
    anyPortIfBusy: serve.port === undefined,
    token: serve.token,
    markers: ctx.markers,
    demo,
  });
  await serveUntilStopped(dashboard, io, serve.stop);
}

async function countSources(ctx: Context): Promise<number> {
  const discover = discoverContext(ctx);
  let n = 0;
  for (const adapter of ADAPTERS) {
    for await (const _ of adapter.discover(discover)) n++;
  }
  return n;
}

/**
 * Captures into `ctx`'s store with a progress bar on a terminal, and says what is there and how
 * to search it (`searchCommand`; null says nothing about it). Ctrl-C, SIGTERM or `stop` stop the
 * capture at a batch boundary: then `stopped` is true and only that is said.
 */
async function captureAndReport(
  ctx: Context,
  io: Io,
  stop: AbortSignal | undefined,
  searchCommand: string | null,
  demo = false,
): Promise<{ code: number; stopped: boolean }> {
  const s = styler(io.color);
  const store = openStore(ctx);
  const signals = stopSignals();
  const bar = io.errIsTerminal ? progressBar(io) : null;
  try {
    io.out(`Capturing into ${ctx.paths.root} …\n`);
    const result = await runCapture({
      ctx,
      store,
      redact: redactorFor(ctx),
      command: "start",
      signal: stop ? AbortSignal.any([stop, signals.signal]) : signals.signal,
      ...(bar ? { onProgress: bar.update } : {}),
    });
    bar?.clear();
    if (result.status === "captured" && result.summary.stoppedBy === "signal") {
      io.err(`Capture ${STOPPED}\n`);
      return { code: EXIT.ok, stopped: true };
    }
    if (result.status === "busy" || result.status === "off") {
      io.out(`${whyNotCaptured(result)}; showing what is stored\n`);
    } else if (result.status === "latched") {
      io.err(`error: ${safeText(whyNotCaptured(result))}\n`);
      return { code: EXIT.failure, stopped: false };
    } else {
      io.out(summaryLine(result.summary) + "\n");
      const lines = warnings(result.summary);
      if (demo && lines.length) {
        io.err("The fixtures include deliberately malformed files, so expect these warnings:\n");
      }
      for (const line of lines) io.err(`${s.yellow("warning:")} ${line}\n`);
    }
    const status = storeStatus(store);
    io.out(
      `\nThe store (${formatBytes(status.storeBytes)}) holds ${
        s.bold(conversationTotal(status.conversations))
      }:\n` +
        status.conversations.map((c) => `  ${c.agent.padEnd(9)} ${c.count}\n`).join("") +
        (searchCommand === null ? "" : `\nSearch them:\n  ${searchCommand} "words you remember"\n` +
          (demo ? "" : `  ${searchCommand} "words" --project . --since 7d\n`)),
    );
    return { code: EXIT.ok, stopped: false };
  } finally {
    bar?.clear();
    signals.release();
    store.close();
  }
}

/**
 * The demo: the fixtures captured into a fresh temporary data dir, one sample search, and the
 * dashboard on that store (unless `serve.on` is false). Its temporary folders go when it exits:
 * Ctrl-C or SIGTERM at any moment stops it, and their handlers stay until the folders are gone.
 */
async function demo(io: Io, serve: Serve): Promise<number> {
  const signals = stopSignals();
  const stop = serve.stop ? AbortSignal.any([serve.stop, signals.signal]) : signals.signal;
  const dirs: string[] = [];
  try {
    const dataDir = await Deno.makeTempDir({ prefix: "logbook-demo-" });
    dirs.push(dataDir);
    const emptyHome = await Deno.makeTempDir({ prefix: "logbook-demo-home-" });
    dirs.push(emptyHome);
    return await demoIn(dataDir, emptyHome, io, { ...serve, stop });
  } finally {
    for (const dir of dirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
    signals.release();
  }
}

async function demoIn(dataDir: string, emptyHome: string, io: Io, serve: Serve): Promise<number> {
  const s = styler(io.color);
  // A copy, because opening a database (OpenCode's) creates files beside it, and the fixtures
  // are read-only input (embedded and unwritable in a compiled binary).
  const sources = `${emptyHome}/fixtures`;
  await copyTree(FIXTURES, sources);
  const demoEnv = envFrom({
    HOME: emptyHome,
    LOGBOOK_DATA_DIR: dataDir,
    LOGBOOK_CONFIG_DIR: `${emptyHome}/config`,
    ...Object.fromEntries(
      AGENT_SPECS.flatMap((spec) => Object.entries(spec.demo))
        .map(([variable, folder]) => [variable, `${sources}/${folder}`]),
    ),
    INIT_CWD: emptyHome,
    NO_COLOR: serve.env.get("NO_COLOR"),
  });
  const ctx = loadContext({ env: demoEnv, onStall: io.err, onWarning: io.err });
  const started = performance.now();
  const { code, stopped } = await captureAndReport(
    ctx,
    io,
    serve.stop,
    // The demo store lives only while the dashboard serves it.
    serve.on ? `LOGBOOK_DATA_DIR=${dataDir} ${commandLine("search", serve.env)}` : null,
    true,
  );
  if (code !== EXIT.ok || stopped) return code;
  const store = openStore(ctx);
  try {
    const query = "marmot keyring";
    const result = search(store, ADAPTERS, redactorFor(ctx), { query, limit: 3 });
    io.out(`\nA sample search for ${s.bold(`"${query}"`)}:\n`);
    for (const hit of result.hits) {
      io.out(
        `  ${s.cyan(safeText(hit.conversation))} ${s.dim(`${hit.kind}/${hit.role ?? "-"}`)}\n    ${
          safeText(hit.snippet)
        }\n`,
      );
    }
  } finally {
    store.close();
  }
  io.out(
    `\nThe demo store is ${dataDir} (${formatDuration(performance.now() - started)}); ` +
      `it and ${emptyHome} are removed when this command exits.\n`,
  );
  if (!serve.on || serve.stop?.aborted) return EXIT.ok;
  io.out(
    `\n${s.bold("This is a demo")}: the dashboard below serves the bundled sample transcripts ` +
      `from the temporary store\n${dataDir}, not your own histories (your data dir is ` +
      `untouched).\nTry searching for "marmot keyring".\n`,
  );
  await dashboardOn(ctx, io, serve, true);
  return EXIT.ok;
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
