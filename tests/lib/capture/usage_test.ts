// Capture fills the store's `usage` table: each model call once (a Claude Code reply written as
// several records, a copy, a Codex running total, an OpenCode message revised as it streams),
// forgotten records take their rows with them, and a store captured before the table existed is
// filled by deriving its sources again.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { envFrom } from "../../../lib/env.ts";
import { captureWorld, FIXTURES, makeWorld, withStore, type World } from "../../_helpers.ts";
import type { HistoryStore } from "../../../lib/store/db.ts";

interface Row {
  agent: string;
  call: string | null;
  model: string | null;
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
  cost: number | null;
}

function usageRows(store: HistoryStore, agent: string): Row[] {
  return store.stmt(
    `SELECT agent, call, model, input, output, cache_write, cache_read, cost FROM usage
     WHERE agent = ? ORDER BY record_id`,
  ).all(agent).map((row) => ({ ...row })) as unknown as Row[];
}

const SESSION = "5b7d0c4e-2f1a-4e3b-9c8d-7a6b5c4d3e2f";

/** One assistant record of a reply: Claude Code writes one per content block, usage on each. */
function reply(uuid: string, id: string, request: string | null, block: unknown, extra = {}) {
  return JSON.stringify({
    type: "assistant",
    uuid,
    parentUuid: null,
    sessionId: SESSION,
    cwd: "/home/u/app",
    timestamp: "2026-11-30T10:00:00.000Z",
    ...(request ? { requestId: request } : {}),
    message: {
      id,
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [block],
      usage: {
        input_tokens: 12,
        output_tokens: 340,
        cache_creation_input_tokens: 2000,
        cache_read_input_tokens: 15000,
      },
    },
    ...extra,
  });
}

async function placeClaude(world: World, lines: string[]): Promise<void> {
  const dir = join(world.claude, "projects", "-home-u-app");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
}

Deno.test("a Claude Code reply written as several records is one call, with or without a request id", async () => {
  const world = await makeWorld();
  try {
    const user = JSON.stringify({
      type: "user",
      uuid: "u1",
      parentUuid: null,
      sessionId: SESSION,
      cwd: "/home/u/app",
      timestamp: "2026-11-30T09:59:59.000Z",
      message: { role: "user", content: "Count the tokens once." },
    });
    await placeClaude(world, [
      user,
      reply("a1", "msg_1", "req_1", { type: "thinking", thinking: "hm", signature: "s" }),
      reply("a2", "msg_1", "req_1", { type: "text", text: "Here." }),
      reply("a3", "msg_1", "req_1", { type: "tool_use", id: "toolu_1", name: "Bash", input: {} }),
      reply("a4", "msg_2", null, { type: "text", text: "Again." }),
      reply("a5", "msg_2", null, { type: "text", text: "And again." }, { costUSD: 0.25 }),
    ]);
    await captureWorld(world);
    withStore(world, (store) => {
      const rows = usageRows(store, "claude");
      assert.deepEqual(rows, [
        {
          agent: "claude",
          call: "msg_1:req_1",
          model: "claude-sonnet-4-5-20250929",
          input: 12,
          output: 340,
          cache_write: 2000,
          cache_read: 15000,
          cost: null,
        },
        {
          agent: "claude",
          call: "msg_2",
          model: "claude-sonnet-4-5-20250929",
          input: 12,
          output: 340,
          cache_write: 2000,
          cache_read: 15000,
          cost: null,
        },
      ]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("Codex's running totals count as their increments; a drop counts the last call", async () => {
  const world = await makeWorld();
  try {
    const id = "019f8a3c-51d2-7e4b-9c1a-3b6f0e2d7a48";
    const at = (s: number) => `2026-11-21T10:04:${String(s).padStart(2, "0")}.000Z`;
    const tokens = (s: number, total: number[], last: number[]) =>
      JSON.stringify({
        timestamp: at(s),
        type: "event_msg",
        payload: {
          type: "token_count",
          info: {
            total_token_usage: {
              input_tokens: total[0],
              cached_input_tokens: total[1],
              output_tokens: total[2],
              reasoning_output_tokens: 0,
              total_tokens: total[0]! + total[2]!,
            },
            last_token_usage: {
              input_tokens: last[0],
              cached_input_tokens: last[1],
              output_tokens: last[2],
              reasoning_output_tokens: 0,
              total_tokens: last[0]! + last[2]!,
            },
          },
        },
      });
    const lines = [
      JSON.stringify({
        timestamp: at(1),
        type: "session_meta",
        payload: { id, timestamp: at(0), cwd: "/home/u/app", cli_version: "0.169.0" },
      }),
      JSON.stringify({
        timestamp: at(2),
        type: "turn_context",
        payload: { turn_id: "t1", cwd: "/home/u/app", model: "gpt-5.5" },
      }),
      tokens(3, [1000, 800, 50], [1000, 800, 50]),
      // The same totals again (Codex repeats a count with new rate limits): nothing new.
      tokens(4, [1000, 800, 50], [1000, 800, 50]),
      tokens(5, [2500, 1800, 170], [1500, 1000, 120]),
      // Totals that went down (a compaction started them again): the last call counts.
      tokens(6, [300, 0, 20], [300, 0, 20]),
    ];
    const dir = join(world.codex, "sessions", "2026", "11", "21");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      join(dir, `rollout-2026-11-21T10-04-03-${id}.jsonl`),
      lines.join("\n") + "\n",
    );
    await captureWorld(world);
    withStore(world, (store) => {
      const rows = usageRows(store, "codex").map((r) => [
        r.model,
        r.input,
        r.cache_read,
        r.output,
        r.cache_write,
      ]);
      assert.deepEqual(rows, [
        ["gpt-5.5", 200, 800, 50, 0],
        ["gpt-5.5", 500, 1000, 120, 0],
        ["gpt-5.5", 300, 0, 20, 0],
      ]);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("an OpenCode message revised as it streams counts once, with its last tokens and cost", async () => {
  const world = await makeWorld({ fixtures: ["opencode"] });
  try {
    await captureWorld(world);
    withStore(world, (store) => {
      const rows = usageRows(store, "opencode");
      const calls = rows.map((r) => r.call);
      assert.equal(new Set(calls).size, calls.length, "one row per message");
      assert.ok(rows.length > 0);
      for (const row of rows) assert.match(row.call ?? "", /^message:msg_/);
      // Each row holds the newest revision stored under its message's key.
      const newest = store.stmt(
        `SELECT count(*) AS n FROM usage u JOIN record_keys k ON k.record_id = u.record_id
         WHERE u.agent = 'opencode'`,
      ).get() as { n: number };
      assert.equal(newest.n, rows.length);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("forgotten records take their usage along; an older store is filled by deriving again", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world);
    const before = withStore(world, (store) => ({
      claude: usageRows(store, "claude"),
      codex: usageRows(store, "codex"),
    }));
    assert.ok(before.claude.length > 0 && before.codex.length > 0);
    // A store from before: no usage, every source derived by an older build.
    withStore(world, (store) => {
      store.db.exec(
        "DELETE FROM usage; UPDATE sources SET derivation = NULL; DELETE FROM meta WHERE key = 'derivations'",
      );
    });
    await captureWorld(world);
    withStore(world, (store) => {
      assert.deepEqual(usageRows(store, "claude"), before.claude);
      assert.deepEqual(usageRows(store, "codex"), before.codex);
      // Forgetting removes records; their usage goes with them.
      store.db.exec(
        "DELETE FROM records WHERE source_id IN (SELECT id FROM sources WHERE agent = 'codex')",
      );
      assert.deepEqual(usageRows(store, "codex"), []);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("Gemini CLI, Qwen Code and Copilot CLI record their calls' tokens: each call once", async () => {
  const world = await makeWorld();
  try {
    const gemini = join(world.dir, "gemini-home");
    cpSync(join(FIXTURES, "gemini", "home"), join(gemini, ".gemini"), { recursive: true });
    const qwen = join(world.dir, "qwen-home");
    cpSync(join(FIXTURES, "qwen", "home"), qwen, { recursive: true });
    const copilot = join(world.dir, "copilot-home");
    cpSync(join(FIXTURES, "copilot", "home"), copilot, { recursive: true });
    const vars = { ...world.vars, GEMINI_CLI_HOME: gemini, QWEN_HOME: qwen, COPILOT_HOME: copilot };
    world.vars = vars;
    world.env = envFrom(vars);
    await captureWorld(world);
    // What the files hold, read here on their own: the calls each agent reports.
    const lines = (dir: string) =>
      [...walk(dir)].flatMap((file) =>
        Deno.readTextFileSync(file).split("\n").flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        })
      );
    const geminiCalls = new Set(
      lines(gemini).filter((r) => r.type === "gemini" && r.tokens?.input).map((r) => r.id),
    );
    const qwenCalls = new Set(
      lines(qwen).filter((r) => r.type === "assistant" && r.usageMetadata).map((r) => r.uuid),
    );
    const copilotCalls = new Set(
      lines(copilot).filter((r) => r.type === "session.usage_record").map((r) => r.id),
    );
    withStore(world, (store) => {
      for (
        const [agent, calls] of [
          ["gemini", geminiCalls],
          ["qwen", qwenCalls],
          ["copilot", copilotCalls],
        ] as const
      ) {
        const rows = usageRows(store, agent);
        assert.ok(calls.size > 0, `${agent}'s fixtures report calls`);
        assert.equal(rows.length, calls.size, `${agent}: one row per call`);
        for (const row of rows) {
          assert.ok(row.model, `${agent}: a model`);
          assert.ok(row.input + row.output > 0, `${agent}: tokens`);
        }
      }
    });
  } finally {
    await world.cleanup();
  }
});

/** Every `.jsonl` file under `dir`. */
function* walk(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else if (entry.name.endsWith(".jsonl")) yield path;
  }
}
