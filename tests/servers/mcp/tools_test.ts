// The MCP tools in-process, on a clock the test sets: a search that runs out of time to rank
// answers with the most recently captured matches and a note saying so, never a tool error; a
// search of a damaged text index is one, saying so, never an empty answer.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { loadContext, openStore } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { HistoryTools, type ToolAnswer } from "../../../servers/mcp/tools.ts";
import { StoreDamagedError } from "../../../lib/store/db.ts";
import { misplacedIndexWorld } from "../../_damage.ts";
import { captureWorld, FIXTURES, makeWorld } from "../../_helpers.ts";
import {
  leaks,
  placeSecretPathSession,
  SECRET_PATH_ID,
  SECRET_PATH_WORD,
  shownPath,
} from "../../_secret_path.ts";

Deno.test("search_history past its budget answers with the hits it had and a note", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    await captureWorld(world);
    // The budget (1200 ms) counts from the request, 0, when the search begins too; every later
    // read says 1050: past the ranking's share (1000), within the fallback's and the hits'.
    let reads = 0;
    const ctx = loadContext({ env: world.env, now: () => reads++ < 2 ? 0 : 1050 });
    const tools = new HistoryTools(
      ctx,
      () => openStore(ctx, { mustExist: true, readOnly: true, upgrade: false }),
    );
    try {
      const answer = await tools.searchHistory({ query: "marmot keyring", all_projects: true });
      const data = answer.data as { hits: { record: number }[]; stopped: boolean; note: string };
      assert.equal(data.stopped, true);
      assert.equal(data.hits.length, 2);
      const records = data.hits.map((h) => h.record);
      assert.deepEqual(records, [...records].sort((a, b) => b - a), "newest captured first");
      assert.match(
        data.note,
        /^The search was stopped after 1200 ms: it matches too much to rank in time, so these 2 hits are from the most recently captured matches, newest first, not ranked; .*\.$/,
      );
      assert.ok(answer.text.startsWith(`Note: ${data.note}\n2 hits in all projects:`), answer.text);
      assert.equal(answer.isError, undefined);
      // On time, the same search is ranked and says nothing.
      reads = 0;
      const ctxOnTime = loadContext({ env: world.env });
      const onTime = new HistoryTools(ctxOnTime, () => openStore(ctxOnTime, { readOnly: true }));
      try {
        const ranked = await onTime.searchHistory({
          query: "marmot keyring",
          all_projects: true,
        });
        assert.equal((ranked.data as { stopped: boolean }).stopped, false);
        assert.equal((ranked.data as { note: string | null }).note, null);
        assert.ok(ranked.text.startsWith("2 hits in all projects:"));
      } finally {
        await onTime.close();
      }
    } finally {
      await tools.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the tools send no secret of a transcript's directory, and know its project as shown", async (t) => {
  const world = await makeWorld();
  try {
    const cwd = await placeSecretPathSession(world);
    await captureWorld(world);
    // The agent works in that directory, as an agent in it would start the server.
    const ctx = loadContext({ env: envFrom({ ...world.vars, INIT_CWD: cwd }) });
    const tools = new HistoryTools(ctx, () => openStore(ctx, { mustExist: true, readOnly: true }));
    const sent = (answer: ToolAnswer) => answer.text + JSON.stringify(answer.data);
    try {
      await t.step("search_history in the agent's own project", async () => {
        const answer = await tools.searchHistory({ query: SECRET_PATH_WORD });
        assert.deepEqual(leaks(sent(answer)), []);
        assert.ok(answer.text.includes(`in project ${shownPath(cwd)}:`), answer.text);
      });
      await t.step("read_conversation", () => {
        const answer = tools.readConversation({ conversation: SECRET_PATH_ID });
        assert.deepEqual(leaks(sent(answer)), []);
        assert.ok(answer.text.includes(`project ${shownPath(cwd)}`), answer.text);
        assert.ok(answer.text.includes("aws-secret [REDACTED:aws-secret-key]"), answer.text);
      });
      await t.step("list_conversations, of all projects and of the project named as shown", () => {
        const all = tools.listConversations({ all_projects: true });
        assert.deepEqual(leaks(sent(all)), []);
        assert.ok(all.text.includes(shownPath(cwd)), all.text);
        const mine = tools.listConversations({ project: shownPath(cwd) });
        assert.deepEqual(leaks(sent(mine)), []);
        const ids = (mine.data as { conversations: { id: string }[] }).conversations.map((c) =>
          c.id
        );
        assert.deepEqual(ids, [SECRET_PATH_ID]);
      });
    } finally {
      await tools.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("search_history on a damaged text index fails saying so, never answers empty", async () => {
  const { world, word } = await misplacedIndexWorld();
  try {
    const ctx = loadContext({ env: world.env });
    const tools = new HistoryTools(
      ctx,
      () => openStore(ctx, { mustExist: true, readOnly: true, upgrade: false }),
    );
    try {
      await assert.rejects(
        () => tools.searchHistory({ query: word, all_projects: true }),
        (err) =>
          err instanceof StoreDamagedError &&
          /is damaged in the text index \(table "fts"\)/.test(err.message) &&
          /run "logbook reindex --rebuild"/.test(err.message),
      );
    } finally {
      await tools.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("search_history forgives a query that finds nothing and says what it searched", async () => {
  const world = await makeWorld();
  try {
    cpSync(join(FIXTURES, "forgiving", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    await captureWorld(world);
    const ctx = loadContext({ env: world.env });
    const tools = new HistoryTools(
      ctx,
      () => openStore(ctx, { mustExist: true, readOnly: true, upgrade: false }),
    );
    try {
      const answer = await tools.searchHistory({ query: "lanternfsh", all_projects: true });
      assert.ok(
        answer.text.startsWith(
          'Note: No hits for "lanternfsh"; showing "lanternfish".\n2 hits in all projects:',
        ),
        answer.text,
      );
      const data = answer.data as {
        hits: { matched: unknown }[];
        forgiven: { how: string; searched: string };
      };
      assert.equal(data.forgiven.how, "spelling");
      assert.equal(data.forgiven.searched, "lanternfish");
      assert.deepEqual(data.hits[0]!.matched, [
        { word: "lanternfsh", term: "lanternfish", how: "spelling" },
      ]);
      // Found as given: no note, and each word matched as it was given.
      const exact = await tools.searchHistory({ query: "lanternfish", all_projects: true });
      assert.ok(exact.text.startsWith("2 hits in all projects:"), exact.text);
      assert.equal((exact.data as { forgiven?: unknown }).forgiven, undefined);
    } finally {
      await tools.close();
    }
  } finally {
    await world.cleanup();
  }
});
