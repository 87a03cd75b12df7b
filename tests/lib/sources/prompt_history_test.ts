// The agents' prompt history files (`~/.claude/history.jsonl`, `~/.codex/history.jsonl`): each
// line a typed prompt of the session it names, found by `search --role user` where the session's
// transcript is gone, never twice where it is there, and captured incrementally.

import assert from "node:assert/strict";
import { appendFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { adapterOf } from "../../../lib/sources/adapter.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { claudeHistory, codexHistory } from "../../../lib/sources/prompt_history.ts";
import { decodeLine } from "../../../lib/capture/derive.ts";
import { search, type SearchFilters } from "../../../lib/store/search.ts";
import { main as searchCommand } from "../../../commands/search.ts";
import {
  captureIo,
  captureWorld,
  FIXTURES,
  makeWorld,
  manifest,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

interface Prompt {
  line: number;
  sessionId: string | null;
  conversation?: string;
  project?: string;
  transcript: "present" | "absent" | "none";
  phrase?: string;
}

interface HistoryEntry {
  path: string;
  case?: string;
  lines: number;
  bytes: number;
  prompts: Prompt[];
}

const CLAUDE = manifest<HistoryEntry>("claude").find((e) => e.case === "prompt-history")!;
const CODEX = (manifest("codex") as unknown as { history: HistoryEntry }).history;

function find(world: World, query: string, filters: SearchFilters = {}) {
  return withStore(
    world,
    (store, ctx) => search(store, ADAPTERS, redactorFor(ctx), { query, ...filters }).hits,
  );
}

/** `search --json` as a user runs it, in-process. */
async function searchJson(world: World, args: string[]) {
  const io = captureIo();
  const code = await searchCommand([...args, "--json"], io, world.env);
  const hits = io.stdout().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { code, hits };
}

Deno.test("the history fixtures match their manifests", () => {
  for (const [agent, entry] of [["claude", CLAUDE], ["codex", CODEX]] as const) {
    const bytes = readFileSync(join(FIXTURES, agent, entry.path));
    assert.equal(bytes.length, entry.bytes, agent);
    assert.equal(bytes.toString("utf8").split("\n").length - 1, entry.lines, agent);
  }
});

Deno.test("a Claude Code prompt of a session without a transcript is found with --role user", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    const gone = CLAUDE.prompts.find((p) => p.transcript === "absent" && p.phrase)!;
    for (const args of [[], ["--role", "user"], ["--kind", "message"], ["--kind", "prompt"]]) {
      const { code, hits } = await searchJson(world, [gone.phrase!, ...args]);
      assert.equal(code, 0, args.join(" "));
      assert.equal(hits.length, 1, args.join(" "));
      assert.equal(hits[0].conversation, gone.conversation);
      assert.equal(hits[0].conversation, `claude:${gone.sessionId}`, "linked to its session");
      assert.equal(hits[0].project, gone.project);
      assert.equal(hits[0].kind, "prompt");
      assert.equal(hits[0].role, "user");
      assert.ok(hits[0].timestamp.startsWith("2026-09-27"));
    }
    assert.equal((await searchJson(world, [gone.phrase!, "--role", "assistant"])).code, 1);
    assert.equal((await searchJson(world, [gone.phrase!, "--kind", "tool_result"])).code, 1);

    // A line written before Claude Code kept session ids: its project's prompts, pastes included.
    const old = CLAUDE.prompts.find((p) => p.transcript === "none")!;
    const hits = find(world, old.phrase!, { role: "user" });
    assert.equal(hits.length, 1);
    assert.equal(hits[0]!.conversation, old.conversation);
    assert.equal(hits[0]!.project, old.project);

    // `show` of the session lists what was typed in it.
    const shown = await runCli("show", [gone.conversation!], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /user \(typed\)\nwhy does the heron-tessellate migration stall/);
    assert.ok(shown.stdout.includes("[Pasted text #1 +412 lines] summarise the failures"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a prompt whose session transcript was captured is found once, in the transcript", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world);
    for (const entry of [CLAUDE, CODEX]) {
      const linked = entry.prompts.find((p) => p.transcript === "present")!;
      const hits = find(world, `"${linked.phrase!}"`, { role: "user" });
      assert.equal(hits.length, 1, linked.phrase);
      assert.equal(hits[0]!.conversation, linked.conversation);
      assert.equal(hits[0]!.kind, "message", "the transcript's own copy");
    }
    // The readable `show` of such a session does not repeat the typed prompts.
    const linked = CLAUDE.prompts.find((p) => p.transcript === "present")!;
    const shown = await runCli("show", [linked.conversation!], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    assert.ok(!shown.stdout.includes("(typed)"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Codex prompt is linked to its session and takes the project the session has", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    await captureWorld(world);
    const gone = CODEX.prompts.find((p) => p.transcript === "absent" && p.phrase)!;
    const { hits } = await searchJson(world, [gone.phrase!, "--role", "user"]);
    assert.equal(hits.length, 1);
    assert.equal(hits[0].conversation, gone.conversation);
    assert.equal(hits[0].kind, "prompt");
    assert.equal(hits[0].project, null, "no rollout, no project");
    assert.equal(hits[0].timestamp, "2026-06-27T13:32:00.000Z", "ts is in seconds");
    const linked = CODEX.prompts.find((p) => p.transcript === "present")!;
    withStore(world, (store) => {
      const row = store.db.prepare(
        `SELECT c.cwd, count(*) AS prompts FROM records r JOIN conversations c
           ON c.id = r.conversation_id WHERE c.key = ? AND r.kind = 'prompt'`,
      ).get(linked.conversation!) as { cwd: string; prompts: number };
      assert.equal(row.prompts, 1, "kept, linked to the rollout's session");
      assert.equal(row.cwd, "/home/ines/src/ferrylog", "the session's project");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("history files are captured incrementally and outlive their sessions", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  try {
    await captureWorld(world);
    assert.equal((await captureWorld(world)).records, 0, "nothing new, nothing read");
    appendFileSync(
      join(world.codex, "history.jsonl"),
      JSON.stringify({
        session_id: "019f0b11-2c3d-7e4f-8a9b-0c1d2e3f4a5b",
        ts: 1782600000,
        text: "rename the cormorant-spindle flag",
      }) + "\n",
    );
    appendFileSync(
      join(world.claude, "history.jsonl"),
      JSON.stringify({
        display: "is the cormorant-spindle flag still read anywhere?",
        pastedContents: {},
        timestamp: 1790600000000,
        project: "/home/dev/src/kappa",
        sessionId: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
      }) + "\n",
    );
    const summary = await captureWorld(world);
    assert.equal(summary.records, 2);
    assert.equal(summary.generations.length, 0, "appended, not rewritten");
    const hits = find(world, "cormorant-spindle", { role: "user" });
    assert.deepEqual(hits.map((h) => h.agent).sort(), ["claude", "codex"]);

    // The agents' own clean-up: every transcript and the history gone; the prompts stay.
    rmSync(join(world.claude, "history.jsonl"));
    rmSync(join(world.claude, "projects"), { recursive: true });
    await captureWorld(world);
    assert.equal(find(world, "cormorant-spindle", { role: "user" }).length, 2);
    assert.equal(find(world, "heron-tessellate", { role: "user" }).length, 1);
  } finally {
    await world.cleanup();
  }
});

Deno.test("each history adapter reads its own agent's lines and claims only history files", () => {
  const claudeLine = decodeLine(new TextEncoder().encode(
    '{"display":"x [Pasted text #1]","pastedContents":{"1":{"id":1,"type":"text","content":"pasted words"}},"timestamp":1790000000000,"project":"/p"}\n',
  ));
  const derived = claudeHistory.parseLine(claudeLine, {}, {
    agent: "claude",
    locator: "/h/.claude/history.jsonl",
    path: "/h/.claude/history.jsonl",
    format: "jsonl",
  });
  assert.equal(derived.kind, "prompt");
  assert.equal(derived.text, "x [Pasted text #1]\npasted words");
  assert.equal(derived.conversation?.key, "claude:history:/p");
  assert.equal(claudeHistory.textOf(claudeLine.bytes, {} as never), derived.text);

  const odd = codexHistory.parseLine(decodeLine(new TextEncoder().encode('{"ts":1}\n')), {}, {
    agent: "codex",
    locator: "/h/.codex/history.jsonl",
    path: "/h/.codex/history.jsonl",
    format: "jsonl",
  });
  assert.equal(odd.drift?.category, "missing_fields");

  assert.equal(adapterOf(ADAPTERS, "claude", "/h/.claude/history.jsonl"), claudeHistory);
  assert.equal(adapterOf(ADAPTERS, "codex", "/h/.codex/history.jsonl"), codexHistory);
  assert.notEqual(
    adapterOf(ADAPTERS, "claude", "/h/.claude/projects/-p/history.jsonl"),
    claudeHistory,
  );
});
