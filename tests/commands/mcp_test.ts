// `logbook mcp` as an agent meets it: a real subprocess spoken to by the MCP SDK's own client over
// stdio. Lists the tools, searches a fixture phrase, reads around the hit, pages a long
// conversation to its end, finds a planted secret redacted, and keeps serving after bad arguments.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { captureWorld, childBaseEnv, makeWorld, ROOT, runCli, taskFlags } from "../_helpers.ts";
import { fakeUpper } from "../lib/_secret_shapes.ts";
import { addToolHeavy, TOOL_HEAVY } from "../_tool_heavy.ts";

const SESSION = "5b0e9d62-8c1f-4d7a-9e3b-2a6c4f1d8e70";
const TURNS = 40;

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { type: string; properties?: Record<string, unknown>; required?: string[] };
}

interface Text {
  type: string;
  text?: string;
}

/** A Claude Code transcript of `TURNS` long exchanges in `cwd`, with a secret in one prompt. */
function longTranscript(cwd: string, secret: string): string {
  return claudeTranscript(
    SESSION,
    cwd,
    Array.from({ length: TURNS }, (_, i) => [
      i === 3
        ? `Use the deploy key ${secret} for the staging bucket, turn ${i} marker-q${i}`
        : `Question ${i} about the heron-ledger cache marker-q${i} ${"lorem ipsum ".repeat(60)}`,
      `Answer ${i} marker-a${i}: evict on write. ${"dolor sit amet ".repeat(50)}`,
    ]),
  );
}

/** The store's files with their sizes and times (stage markers left out: they may be written). */
function storeFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith("history.db")).map((e) => {
    const stat = Deno.statSync(join(dir, e.name));
    return `${e.name} ${stat.size} ${stat.mtime?.getTime()}`;
  }).sort();
}

Deno.test("logbook mcp: an agent searches, reads and lists its history over stdio", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const project = join(world.dir, "work", "heron");
  await Deno.mkdir(project, { recursive: true });
  const secret = "AKIA" + fakeUpper(16);
  await placeClaudeTranscript(world, project, SESSION, longTranscript(project, secret));
  addToolHeavy(world);
  await captureWorld(world);
  const before = storeFiles(world.data);

  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", ...taskFlags("mcp"), "--quiet", join(ROOT, "commands", "mcp.ts")],
    env: { ...childBaseEnv(), ...world.vars, INIT_CWD: project },
    cwd: project,
    stderr: "pipe",
  });
  const client = new Client({ name: "logbook-test", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as Text[]).map((c) => c.text ?? "").join("\n");
    return { text, isError: result.isError === true, data: result.structuredContent };
  };
  const everything: string[] = [];
  try {
    await t.step("lists three tools, each with a schema and a description", async () => {
      const { tools } = await client.listTools() as { tools: ListedTool[] };
      assert.deepEqual(tools.map((tool) => tool.name).sort(), [
        "list_conversations",
        "read_conversation",
        "search_history",
      ]);
      for (const tool of tools) {
        assert.ok((tool.description ?? "").length > 100, tool.name);
        assert.equal(tool.inputSchema.type, "object");
      }
      const search = tools.find((tool) => tool.name === "search_history")!;
      const names = Object.keys(search.inputSchema.properties ?? {}).sort();
      for (
        const field of [
          "query",
          "project",
          "all_projects",
          "agent",
          "session",
          "kind",
          "role",
          "since",
          "until",
          "limit",
        ]
      ) {
        assert.ok(names.includes(field), `search_history takes ${field}`);
      }
      assert.deepEqual(search.inputSchema.required, ["query"]);
    });

    await t.step(
      "searches the agent's own project by default, every project on request",
      async () => {
        const here = await call("search_history", { query: "quokka-lantern" });
        assert.equal(here.isError, false, here.text);
        assert.match(here.text, /No hits/);
        const all = await call("search_history", { query: "quokka-lantern", all_projects: true });
        assert.equal(all.isError, false, all.text);
        everything.push(all.text);
        assert.match(all.text, /claude:f332cca8-0b9a-4244-835f-c44f31385301/);
        const hits = (all.data as { hits: { conversation: string; record: number }[] }).hits;
        assert.ok(hits.length >= 1);

        const around = await call("read_conversation", {
          conversation: hits[0]!.conversation,
          around: hits[0]!.record,
        });
        assert.equal(around.isError, false, around.text);
        everything.push(around.text);
        assert.match(around.text, /quokka-lantern/);
        assert.match(around.text, /← the hit/);
      },
    );

    await t.step("reads around an answer after many tool calls, the question first", async () => {
      for (const { id, question, answer } of Object.values(TOOL_HEAVY)) {
        const found = await call("search_history", { query: answer, all_projects: true });
        const hit = (found.data as { hits: { conversation: string; record: number }[] }).hits[0]!;
        assert.equal(hit.conversation, id);
        const opened = await call("read_conversation", { conversation: id, around: hit.record });
        assert.equal(opened.isError, false, opened.text);
        everything.push(opened.text);
        const at = opened.text.indexOf(question, opened.text.indexOf("\n\n"));
        assert.ok(at > 0 && at < opened.text.indexOf("← the hit"), opened.text);
      }
    });

    await t.step("reads a long conversation around a hit and pages it to the end", async () => {
      const found = await call("search_history", { query: "marker-a20" });
      assert.equal(found.isError, false, found.text);
      everything.push(found.text);
      const hit = (found.data as { hits: { conversation: string; record: number; role: string }[] })
        .hits[0]!;
      assert.equal(hit.conversation, `claude:${SESSION}`);
      const opened = await call("read_conversation", {
        conversation: hit.conversation,
        around: hit.record,
      });
      everything.push(opened.text);
      // The question before the answer is on the page, above it.
      const question = opened.text.indexOf("marker-q20");
      assert.ok(question >= 0 && question < opened.text.indexOf("marker-a20"), opened.text);

      let page = await call("read_conversation", { conversation: `claude:${SESSION}` });
      const pages = [page.text];
      while ((page.data as { next: string | null }).next !== null) {
        assert.ok(pages.length < 50, "the pages end");
        page = await call("read_conversation", {
          conversation: `claude:${SESSION}`,
          cursor: (page.data as { next: string }).next,
        });
        assert.equal(page.isError, false, page.text);
        pages.push(page.text);
      }
      assert.ok(pages.length >= 2, `a long conversation takes several pages (${pages.length})`);
      assert.match(pages.at(-1)!, /\(end of conversation\)/);
      for (const text of pages) assert.ok(text.length < 40_000, "a page is capped");
      everything.push(...pages);
      // Each page opens with the conversation's header (its title is the first question).
      const all = pages.map((text) => text.slice(text.indexOf("\n"))).join("\n");
      for (let i = 0; i < TURNS; i++) {
        for (const marker of [`marker-q${i}`, `marker-a${i}`]) {
          const seen = all.match(new RegExp(`${marker}\\b`, "g"))?.length ?? 0;
          assert.equal(seen, 1, `${marker} once across the pages`);
        }
      }
    });

    await t.step("lists the project's recent conversations", async () => {
      const listed = await call("list_conversations", {});
      assert.equal(listed.isError, false, listed.text);
      everything.push(listed.text);
      const ids = (listed.data as { conversations: { id: string; messages: number }[] })
        .conversations;
      assert.deepEqual(ids.map((c) => c.id), [`claude:${SESSION}`]);
      assert.equal(ids[0]!.messages, TURNS * 2);
      const all = await call("list_conversations", { all_projects: true, limit: 100 });
      assert.ok(
        (all.data as { conversations: unknown[] }).conversations.length > 1,
        "every project lists more",
      );
    });

    await t.step("a planted secret comes back redacted, in hits and in pages", async () => {
      const found = await call("search_history", { query: "staging bucket" });
      assert.equal(found.isError, false, found.text);
      everything.push(found.text);
      assert.match(found.text, /\[REDACTED:aws-access-key-id\]/);
      for (const text of everything) assert.ok(!text.includes(secret), "no secret returned");
      assert.ok(!JSON.stringify(found.data).includes(secret));
    });

    await t.step("bad arguments are tool errors, and the server keeps serving", async () => {
      const agent = await call("search_history", { query: "heron", agent: "gpt" });
      assert.equal(agent.isError, true);
      assert.match(agent.text, /"agent" must be one of claude, codex, opencode, logbook/);
      const when = await call("search_history", { query: "heron", since: "last blue moon" });
      assert.equal(when.isError, true);
      assert.match(when.text, /"since"/);
      const unknown = await call("read_conversation", { conversation: "claude:no-such-id" });
      assert.equal(unknown.isError, true);
      assert.match(unknown.text, /No conversation "claude:no-such-id"/);
      const cursor = await call("read_conversation", {
        conversation: `claude:${SESSION}`,
        cursor: "next please",
      });
      assert.equal(cursor.isError, true);
      const bounds = await call("search_history", {
        query: Array.from({ length: 300 }, (_, i) => `w${i}*`).join(" OR "),
      });
      assert.equal(bounds.isError, true, "a query over the bounds is refused, not run");
      const still = await call("search_history", { query: "heron-ledger" });
      assert.equal(still.isError, false, still.text);
      assert.match(still.text, /claude:5b0e9d62/);
    });
    await client.close();
    assert.deepEqual(storeFiles(world.data), before, "the store is read, never written");
  } finally {
    await client.close();
    await world.cleanup();
  }
});

Deno.test("logbook mcp: before the first capture, tools say what to do", async () => {
  const world = await makeWorld();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", ...taskFlags("mcp"), "--quiet", join(ROOT, "commands", "mcp.ts")],
    env: { ...childBaseEnv(), ...world.vars },
    stderr: "pipe",
  });
  const client = new Client({ name: "logbook-test", version: "1.0.0" });
  try {
    await client.connect(transport);
    const result = await client.callTool({ name: "search_history", arguments: { query: "x" } });
    assert.equal(result.isError, true);
    assert.match((result.content as Text[])[0]!.text!, /No history captured yet.*reindex/);
  } finally {
    await client.close();
    await world.cleanup();
  }
});

Deno.test("logbook mcp --help and a stray argument", async () => {
  const help = await runCli("mcp", ["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^mcp — serve your history to agents over MCP/);
  const stray = await runCli("mcp", ["extra"]);
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /mcp --help/);
});
