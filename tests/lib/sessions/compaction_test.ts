// Compaction: the cut, the snapshot written first (and the refusal when it cannot be), the
// summary's limits and retry, the archive, spend, and what forks and resumes keep.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CompactionError,
  type CutMessage,
  planCut,
  pruneSnapshots,
  rejection,
  SnapshotError,
  snapshotStats,
  SUMMARY_MAX_BYTES,
} from "../../../lib/sessions/compaction.ts";
import { chatSetup } from "../../../lib/sessions/setup.ts";
import { turnsOf } from "../../../lib/sessions/spend.ts";
import { ChatSession } from "../../../lib/sessions/turn.ts";
import { loadContext } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { createModelClient } from "../../../lib/sessions/model.ts";
import { projectKey } from "../../../lib/paths.ts";
import { makeWorld, type World } from "../../_helpers.ts";
import { type OpenAiServer, startOpenAiServer } from "../../_openai_server.ts";

Deno.test("planCut keeps the newest rounds whole and never separates a tool call from its result", () => {
  const m = (role: string, extra: Omit<CutMessage, "role"> = {}): CutMessage => ({
    role,
    ...extra,
  });
  const plain = [m("user"), m("assistant"), m("user"), m("assistant"), m("user"), m("assistant")];
  assert.equal(planCut(plain, 2), 2, "the first round goes, the newest two stay");
  assert.equal(planCut(plain.slice(0, 4), 2), 0, "two rounds: nothing to compact");

  // A tool result kept after the cut whose call would be replaced moves the cut back.
  const tools = [
    m("user"),
    m("assistant", { tool_calls: [{ id: "a" }] }),
    m("tool", { tool_call_id: "a" }),
    m("assistant", { tool_calls: [{ id: "b" }] }),
    m("user"), // a user message arriving while a tool ran
    m("tool", { tool_call_id: "b" }),
    m("assistant"),
    m("user"),
    m("assistant"),
  ];
  const cut = planCut(tools, 2);
  assert.equal(cut, 3, "the call b stays with its result");
  const before = new Set(tools.slice(0, cut).flatMap((x) => x.tool_calls?.map((c) => c.id) ?? []));
  for (const x of tools.slice(cut)) {
    assert.ok(x.tool_call_id === undefined || !before.has(x.tool_call_id));
  }
});

Deno.test("a summary cut off, empty or over 65,536 bytes is never accepted", () => {
  const base = { tokensIn: 1, tokensOut: 1, requested: "m", answeredBy: "m" };
  assert.equal(rejection({ ...base, text: "fine", finishReason: "stop" }), "");
  assert.equal(
    rejection({ ...base, text: "partial", finishReason: "length" }),
    "the reply was cut off by the provider",
  );
  assert.equal(rejection({ ...base, text: "  \n", finishReason: "stop" }), "the reply was empty");
  assert.equal(
    rejection({ ...base, text: "é".repeat(SUMMARY_MAX_BYTES / 2 + 1), finishReason: "stop" }),
    "the reply was longer than 65,536 bytes",
  );
});

interface Setup {
  world: World;
  server: OpenAiServer;
  open(): ReturnType<typeof chatSetup>;
  ctx: ReturnType<typeof loadContext>;
}

async function withSetup(fn: (s: Setup) => Promise<void>): Promise<void> {
  const world = await makeWorld();
  const server = startOpenAiServer({
    reply: (req) =>
      req.messages[0]?.content.startsWith("You are compacting")
        ? "SUMMARY: the user asked about walrus-tuning; decided to use the blue config."
        : `Answer to: ${req.messages.at(-1)?.content}`,
  });
  try {
    const project = join(world.dir, "project");
    Deno.mkdirSync(project);
    const env = envFrom({
      ...world.vars,
      INIT_CWD: project,
      OPENAI_BASE_URL: server.baseUrl,
      LOGBOOK_MODEL: "asked-model",
    });
    const ctx = loadContext({ env, agent: "logbook" });
    await fn({
      world,
      server,
      ctx,
      open: () =>
        chatSetup(ctx, {
          incognito: false,
          model: createModelClient({ baseUrl: server.baseUrl, model: "asked-model" }),
        }),
    });
  } finally {
    await server.close();
    await world.cleanup();
  }
}

async function sessionWithTurns(s: Setup, n: number): Promise<ChatSession> {
  const setup = s.open();
  const session = ChatSession.start({ ...setup.options, cwd: s.ctx.cwd, stream: false });
  for (let i = 1; i <= n; i++) {
    const result = await session.turn(`question ${i} about walrus-tuning`);
    assert.equal(result.outcome, "ok");
  }
  return session;
}

function recordFile(s: Setup, session: ChatSession): string {
  return s.open().persistence.store.recordPath(session.record);
}

Deno.test("compact writes the snapshot first, archives the replaced messages and keeps the spend", async () => {
  await withSetup(async (s) => {
    const session = await sessionWithTurns(s, 4);
    const tokensBefore = session.record.spend.total.tokensIn;
    const result = await session.compact();
    assert.equal(result.outcome, "compacted");
    if (result.outcome !== "compacted") return;
    assert.equal(result.replaced, 4, "the two oldest rounds (4 messages)");
    assert.equal(result.kept, 4);
    const record = JSON.parse(Deno.readTextFileSync(recordFile(s, session)));
    assert.equal(record.archive.length, 4);
    assert.equal(record.messages.length, 4);
    assert.equal(record.archive[0].content, "question 1 about walrus-tuning");
    assert.equal(record.compactions.length, 1);
    assert.match(record.compactions[0].summary, /^SUMMARY: /);
    assert.equal(record.compactions[0].snapshot, result.snapshot);

    // The snapshot holds the whole conversation as it stood, in plain text.
    const snapshot = Deno.readTextFileSync(result.snapshot!);
    for (let i = 1; i <= 4; i++) {
      assert.match(snapshot, new RegExp(`question ${i} about walrus-tuning`));
    }
    assert.equal(Deno.statSync(result.snapshot!).mode! & 0o777, 0o600);
    assert.equal(snapshotStats(s.ctx.paths.pruneArchives).count, 1);

    // The summary request counts in the spend, but is not a turn.
    assert.equal(turnsOf(record), 4);
    assert.equal(record.spend.total.turns, 4);
    assert.ok(record.spend.total.tokensIn > tokensBefore);
    assert.equal(record.spend.turns.at(-1).outcome, "compaction");

    // The next request carries the summary, then only the kept rounds.
    s.server.requests.length = 0;
    await session.turn("question 5");
    const sent = s.server.requests[0]!.json.messages;
    assert.equal(sent[0]!.role, "system");
    assert.match(sent[0]!.content, /SUMMARY: the user asked about walrus-tuning/);
    assert.ok(!sent.some((m) => m.content === "question 1 about walrus-tuning"));
    assert.equal(sent.at(-1)!.content, "question 5");
  });
});

Deno.test("a compacted session's summary, archive and snapshot survive resume and fork", async () => {
  await withSetup(async (s) => {
    const session = await sessionWithTurns(s, 3);
    const result = await session.compact();
    assert.equal(result.outcome, "compacted");
    const setup = s.open();
    const stored = setup.persistence.store.read(projectKey(session.record.project), session.id);
    const { session: resumed } = ChatSession.resume({
      ...setup.options,
      cwd: s.ctx.cwd,
      stream: false,
    }, stored);
    assert.deepEqual(resumed.record.archive, stored.archive);
    assert.deepEqual(resumed.record.compactions, stored.compactions);
    assert.equal(resumed.request[0]!.role, "system");
    assert.match(resumed.request[0]!.content, /SUMMARY/);

    const fork = setup.persistence.store.fork(stored, Date.now());
    assert.deepEqual(fork.archive, stored.archive);
    assert.deepEqual(fork.compactions, stored.compactions);
    assert.equal(fork.compactions[0]!.snapshot, (result as { snapshot: string }).snapshot);
  });
});

Deno.test("a snapshot that cannot be written refuses the compaction and changes nothing", async () => {
  await withSetup(async (s) => {
    const session = await sessionWithTurns(s, 3);
    const file = recordFile(s, session);
    const before = Deno.readTextFileSync(file);
    // Something that is not a directory where the snapshots go.
    Deno.writeTextFileSync(s.ctx.paths.pruneArchives, "not a directory");
    const requests = s.server.requests.length;
    await assert.rejects(() => session.compact(), (err: unknown) => {
      assert.ok(err instanceof SnapshotError);
      assert.match(
        err.message,
        /^Cannot write the snapshot before compacting, so nothing was compacted: /,
      );
      return true;
    });
    assert.equal(Deno.readTextFileSync(file), before);
    assert.equal(s.server.requests.length, requests, "no summary was asked for");

    // --no-snapshot compacts this once without one.
    const result = await session.compact({ noSnapshot: true });
    assert.equal(result.outcome, "compacted");
    if (result.outcome === "compacted") assert.equal(result.snapshot, null);
  });
});

Deno.test("a rejected summary gets one plain retry, then an error naming the reason", async () => {
  await withSetup(async (s) => {
    const session = await sessionWithTurns(s, 3);
    const file = recordFile(s, session);
    const before = JSON.parse(Deno.readTextFileSync(file));
    s.server.options.finishReason = () => "length";
    const requests = s.server.requests.length;
    await assert.rejects(
      () => session.compact(),
      (err: unknown) =>
        err instanceof CompactionError &&
        err.message ===
          "Compaction summary rejected after 2 attempts: the reply was cut off by the provider",
    );
    assert.equal(s.server.requests.length, requests + 2, "one request and one retry");
    const after = JSON.parse(Deno.readTextFileSync(file));
    assert.deepEqual(after.messages, before.messages, "the conversation is as it was");
    assert.deepEqual(after.archive, []);
    assert.deepEqual(after.compactions, []);
    assert.equal(
      after.spend.turns.filter((t: { outcome: string }) => t.outcome === "compaction").length,
      2,
    );

    // The retry can succeed: an empty first reply, then a good one.
    let calls = 0;
    s.server.options.finishReason = () => "stop";
    s.server.options.reply = (req) =>
      req.messages[0]?.content.startsWith("You are compacting")
        ? (calls++ === 0 ? "" : "SUMMARY ok")
        : "a";
    const ok = await session.compact();
    assert.equal(ok.outcome, "compacted");
  });
});

Deno.test("a compaction over the token budget runs by itself before the request", async () => {
  await withSetup(async (s) => {
    const setup = s.open();
    const session = ChatSession.start({
      ...setup.options,
      cwd: s.ctx.cwd,
      stream: false,
      tokenBudget: 60,
    });
    for (let i = 1; i <= 4; i++) {
      await session.turn(`question ${i} about walrus-tuning and more words`);
    }
    const record = session.record;
    assert.ok(record.compactions.length >= 1, "compacted automatically");
    assert.equal(record.compactions[0]!.auto, true);
    assert.ok(record.archive.length > 0);
    assert.ok(snapshotStats(s.ctx.paths.pruneArchives).count >= 1, "with a snapshot first");
  });
});

Deno.test("only the newest 300 snapshots are kept", async () => {
  const world = await makeWorld();
  try {
    const dir = join(world.data, "prune-archives");
    Deno.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 305; i++) {
      Deno.writeTextFileSync(
        join(dir, `2026-01-01T00-00-00-${String(i).padStart(3, "0")}Z-x.txt`),
        "s",
      );
    }
    assert.equal(pruneSnapshots(dir), 5);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.equal(names.length, 300);
    assert.equal(names[0], "2026-01-01T00-00-00-005Z-x.txt", "the oldest went");
  } finally {
    await world.cleanup();
  }
});
