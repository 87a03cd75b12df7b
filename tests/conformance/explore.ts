// `deno run -A tests/conformance/explore.ts <agent> <dir>`: drives one of the agents logbook does
// not read yet (agents.ts `COMING`) as the suite drives the others: installed into the cache, in
// a throw-away home, against the local model server, one prompt that makes the model read a file,
// a resume with the agent's own command, and a resumed turn that hands a task to a subagent.
// Keeps a copy of what the agent wrote after each run (`<dir>/1-start/`, `<dir>/2-resume/`,
// `<dir>/3-delegate/`) and the model server's log (`<dir>/model.jsonl`).
// Not a test: it is how docs/agents/NOTES-i33.md and the fixtures of those agents were made.

import { basename, dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type AgentPin, COMING, PINNED } from "./agents.ts";
import { install } from "./_install.ts";
import { startModelServer } from "./_model_server.ts";
import { continueConfig, DROID_MODEL, makeRig, type Ran, type Rig, runAgent } from "./_rig.ts";
import { DELEGATE, PROMPTS, RESUME, START, subtask, SUMMARY, TITLE } from "./_script.ts";

/** How to drive one agent: its first prompt, where it keeps the id, how it resumes. */
interface Drive {
  start(rig: Rig, prompt: string): string[];
  /** The id of the conversation the first run recorded, read from the agent's files. */
  session(rig: Rig): string;
  resume(rig: Rig, id: string, prompt: string): string[];
  /** What to keep, relative to the home: folders, or files whose name starts so. */
  keep: string[];
}

const DRIVES: Record<string, Drive> = {
  gemini: {
    start: (_, prompt) => ["-p", prompt, "--output-format", "text"],
    session: (rig) => {
      const [path] = newest(join(rig.home, ".gemini", "tmp"), (n) => n.endsWith(".jsonl"));
      return JSON.parse(Deno.readTextFileSync(path!).split("\n")[0]!).sessionId;
    },
    resume: (_, id, prompt) => ["--resume", id, "-p", prompt, "--output-format", "text"],
    keep: [".gemini/tmp", ".gemini/projects.json", ".gemini/history"],
  },
  copilot: {
    start: (_, prompt) => ["-p", prompt, "--allow-all-tools", "--no-auto-update"],
    session: (rig) => {
      const states = join(rig.home, ".copilot", "session-state");
      return [...Deno.readDirSync(states)].find((e) => e.isDirectory && e.name[0] !== ".")!.name;
    },
    resume: (_, id, prompt) => [
      `--resume=${id}`,
      "-p",
      prompt,
      "--allow-all-tools",
      "--no-auto-update",
    ],
    keep: [".copilot/session-state", ".copilot/session-store.db"],
  },
  qwen: {
    start: (_, prompt) => ["--auth-type", "openai", prompt],
    session: (rig) => {
      const [path] = newest(join(rig.home, ".qwen", "projects"), (n) => n.endsWith(".jsonl"));
      return basename(path!, ".jsonl");
    },
    resume: (_, id, prompt) => ["--auth-type", "openai", "--resume", id, prompt],
    keep: [".qwen/projects"],
  },
  continue: {
    start: (rig, prompt) => ["--config", continueConfig(rig), "-p", prompt, "--auto"],
    session: (rig) => {
      const index = join(rig.home, ".continue", "sessions", "sessions.json");
      return JSON.parse(Deno.readTextFileSync(index)).at(-1).sessionId;
    },
    // `cn --resume` takes no id: it resumes the last session.
    resume: (
      rig,
      _,
      prompt,
    ) => ["--config", continueConfig(rig), "--resume", "-p", prompt, "--auto"],
    keep: [".continue/sessions"],
  },
  kilo: {
    start: (_, prompt) => ["run", "--auto", prompt],
    session: (rig) => {
      const db = new DatabaseSync(join(rig.home, ".local/share/kilo/kilo.db"), { readOnly: true });
      try {
        const row = db.prepare("SELECT id FROM session ORDER BY time_created DESC LIMIT 1").get();
        return String((row as { id: string }).id);
      } finally {
        db.close();
      }
    },
    resume: (_, id, prompt) => ["run", "--auto", "-s", id, prompt],
    keep: [".local/share/kilo/kilo.db", ".local/share/kilo/storage"],
  },
  droid: {
    start: (_, prompt) => ["exec", "-m", DROID_MODEL, prompt],
    session: (rig) => {
      const [path] = newest(join(rig.home, ".factory", "sessions"), (n) => n.endsWith(".jsonl"));
      return basename(path!, ".jsonl");
    },
    // Fails offline: `exec -s` fetches the session from Factory's API (docs/agents/droid.md).
    resume: (_, id, prompt) => ["exec", "-m", DROID_MODEL, "-s", id, prompt],
    keep: [".factory/sessions"],
  },
  cline: {
    start: (_, prompt) => [prompt],
    session: (rig) => {
      const sessions = join(rig.home, ".cline", "data", "sessions");
      return [...Deno.readDirSync(sessions)].find((e) => e.isDirectory)!.name;
    },
    // `--id` opens the terminal UI: without a terminal it exits ("interactive mode requires a
    // TTY"), so here the resumes fail; drivers/cline.ts resumes under tmux.
    resume: (_, id, prompt) => ["--id", id, prompt],
    keep: [".cline/data"],
  },
};

async function main(args: string[]): Promise<number> {
  const [agent, out] = args;
  // The agents not read yet, and the pinned ones this script knows how to drive.
  const known = [...COMING, ...PINNED.filter((p) => p.agent in DRIVES)];
  const pin = known.find((p) => p.agent === agent);
  if (!pin || !out) {
    console.error(
      `usage: explore.ts <${known.map((p) => p.agent).join("|")}> <dir>  (keeps what it wrote)`,
    );
    return 2;
  }
  const installed = await install(pin);
  if ("reason" in installed) {
    console.error(`error: Cannot install "${pin.package}@${pin.version}": ${installed.reason}`);
    return 1;
  }
  await Deno.mkdir(out, { recursive: true });
  const server = startModelServer(
    { title: TITLE, summary: SUMMARY, plans: [] },
    join(out, "model.jsonl"),
  );
  const rig = await makeRig(installed, server);
  // The suite's first prompt runs a shell command; these agents offer no shell in one-shot
  // runs, so here the model reads the file with the agent's file tool.
  const read = { kind: "read", path: join(rig.project, "notes.txt") } as const;
  server.script.plans = [{ ...START, steps: [read] }, RESUME, DELEGATE, subtask(rig.project)];
  const drive = DRIVES[pin.agent]!;
  try {
    report("start", await runAgent(rig, drive.start(rig, PROMPTS.start)));
    keep(rig, drive, join(out, "1-start"));
    const id = drive.session(rig);
    console.log(`session ${id}`);
    report("resume", await runAgent(rig, drive.resume(rig, id, PROMPTS.resume)));
    keep(rig, drive, join(out, "2-resume"));
    report("delegate", await runAgent(rig, drive.resume(rig, id, PROMPTS.delegate)));
    keep(rig, drive, join(out, "3-delegate"));
    Deno.writeTextFileSync(join(out, "rig.json"), JSON.stringify(describe(rig, pin, id), null, 2));
    const stray = [...new Set(server.strayConnections)];
    console.log(`other hosts tried (refused): ${stray.join(", ") || "none"}`);
    return 0;
  } finally {
    await server.close();
    await rig.cleanup();
  }
}

function report(what: string, ran: Ran): void {
  console.log(`${what}: exit ${ran.code}\n${ran.stdout.trim()}\n${ran.stderr.trim()}`.trim());
}

/** The paths to replace in a copy (the rig's root), and the env the agent ran with. */
function describe(rig: Rig, pin: AgentPin, id: string) {
  const env = { ...rig.env };
  return { pin, session: id, home: rig.home, project: rig.project, env };
}

/** Copies what the drive keeps from the rig's home into `to`, keeping the paths. */
function keep(rig: Rig, drive: Drive, to: string): void {
  for (const wanted of drive.keep) {
    const from = join(rig.home, wanted);
    for (const path of walk(dirname(from))) {
      if (!path.startsWith(from)) continue;
      const target = join(to, path.slice(rig.home.length + 1));
      Deno.mkdirSync(dirname(target), { recursive: true });
      Deno.copyFileSync(path, target);
    }
  }
}

function walk(dir: string): string[] {
  const found: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return found;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory) found.push(...walk(path));
    else if (e.isFile) found.push(path);
  }
  return found;
}

/** Files under `dir` that `match`, the newest first. */
function newest(dir: string, match: (name: string) => boolean): string[] {
  return walk(dir).filter((p) => match(basename(p)))
    .sort((a, b) => Deno.statSync(b).mtime!.getTime() - Deno.statSync(a).mtime!.getTime());
}

if (import.meta.main) Deno.exit(await main(Deno.args));
