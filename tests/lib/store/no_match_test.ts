// explainNoMatch() counts what leaving a filter out finds in one bounded pass within its budget:
// a pass that stopped at its bound says "at least", and counts not made in time are left out.

import assert from "node:assert/strict";
import { join } from "node:path";
import { redactorFor } from "../../../lib/context.ts";
import { READERS } from "../../../lib/agents.ts";
import { explainNoMatch, FLAG_REMEDY } from "../../../lib/store/no_match.ts";
import { search, type SearchOptions } from "../../../lib/store/search.ts";
import type { SearchInput } from "../../../lib/filters.ts";
import { claudeTranscript, placeClaudeTranscript } from "../../_claude_transcript.ts";
import { captureWorld, makeWorld, withStore } from "../../_helpers.ts";

Deno.test("explainNoMatch() counts in one bounded pass, and leaves out what it did not count in time", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "marsh");
    const session = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    const turns = Array.from(
      { length: 30 },
      (_, i) => [`Dunlin question ${i}`, `Dunlin answer ${i}`] as [string, string],
    );
    await placeClaudeTranscript(world, project, session, claudeTranscript(session, project, turns));
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const input = { q: "dunlin", since: "2030-01-01" };
      const options: SearchOptions = { query: "dunlin", since: Date.UTC(2030, 0, 1) };
      const { hits, ftsQuery } = search(store, READERS, redact, options);
      assert.deepEqual(hits, []);
      const why = (budgetMs: number, scan?: number) =>
        explainNoMatch(store, input, options, ftsQuery, redact, FLAG_REMEDY, {
          budgetMs,
          ...(scan ? { scan } : {}),
        });
      const all = why(5000);
      assert.equal(
        all.text,
        'No matches for "dunlin" since 2030-01-01; 60 older matches: drop --since 2030-01-01',
      );
      assert.deepEqual(all.blocking.map((b) => [b.name, b.count, b.atLeast]), [
        ["since", 60, false],
      ]);
      const some = why(5000, 25);
      assert.equal(
        some.text,
        'No matches for "dunlin" since 2030-01-01; at least 25 older matches: drop --since ' +
          "2030-01-01",
      );
      assert.deepEqual(some.blocking.map((b) => [b.name, b.count, b.atLeast]), [
        ["since", 25, true],
      ]);
      const late = why(0);
      assert.equal(late.text, 'No matches for "dunlin" since 2030-01-01');
      assert.deepEqual(late.blocking, []);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("explainNoMatch() names each filter as the filters' table words it", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "marsh");
    const session = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    const turns = [["Dunlin question", "Dunlin answer"]] as [string, string][];
    await placeClaudeTranscript(world, project, session, claudeTranscript(session, project, turns));
    await captureWorld(world);
    withStore(world, (store, ctx) => {
      const redact = redactorFor(ctx);
      const explain = (input: SearchInput, options: SearchOptions) => {
        const { hits, ftsQuery } = search(store, READERS, redact, options);
        assert.deepEqual(hits, []);
        return explainNoMatch(store, input, options, ftsQuery, redact, FLAG_REMEDY, {
          budgetMs: 5000,
        }).text;
      };
      const q = { q: "dunlin" };
      const query = { query: "dunlin" };
      const alone: [SearchInput, SearchOptions, string][] = [
        [
          { ...q, agent: "codex" },
          { ...query, agent: "codex" },
          "from codex; 2 matches from other agents: drop --agent codex",
        ],
        [
          { ...q, kind: "tool_call" },
          { ...query, kind: "tool_call" },
          "in tool_call records; 2 matches of other kinds: drop --kind tool_call",
        ],
        [
          { ...q, role: "system" },
          { ...query, role: "system" },
          "with role system; 2 matches with other roles: drop --role system",
        ],
        [
          { ...q, since: "2h" },
          { ...query, since: Date.UTC(2100, 0, 1) },
          "in the last 2 hours; 2 older matches: drop --since 2h",
        ],
        [
          { ...q },
          { ...query, until: Date.UTC(2000, 0, 1) },
          "before 2000-01-01T00:00:00.000Z; 2 later matches: drop --until 2000-01-01T00:00:00.000Z",
        ],
      ];
      for (const [input, options, said] of alone) {
        assert.equal(explain(input, options), `No matches for "dunlin" ${said}`);
      }
      const id = store.stmt("SELECT id FROM conversations").get() as { id: number };
      const every: SearchOptions = {
        ...query,
        project,
        agent: "codex",
        conversationId: id.id,
        kind: "tool_call",
        role: "system",
        since: Date.UTC(2100, 0, 1),
        until: Date.UTC(2000, 0, 1),
        subagents: false,
      };
      assert.equal(
        explain({ ...q, session: "6a1b", since: "7d", until: "2000-01-01" }, every),
        `No matches for "dunlin" in project "${project}" from codex in conversation "6a1b" in ` +
          "tool_call records with role system in the last 7 days before 2000-01-01 outside " +
          "subagent conversations; 2 matches with none of these filters",
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("explainNoMatch() says why words match nothing anywhere, and what to try", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "marsh");
    const explain = (q: string, options: Partial<SearchOptions> = {}) =>
      withStore(world, (store, ctx) => {
        const redact = redactorFor(ctx);
        const full: SearchOptions = { query: q, ...options };
        const { ftsQuery } = search(store, READERS, redact, full);
        return explainNoMatch(store, { q }, full, ftsQuery, redact, FLAG_REMEDY).text;
      });
    await captureWorld(world);
    assert.equal(explain("zzzqx"), "No matches: nothing is captured yet");
    const session = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    const turns: [string, string][] = [["Dunlin question", "Dunlin answer"]];
    await placeClaudeTranscript(world, project, session, claudeTranscript(session, project, turns));
    await captureWorld(world);
    assert.equal(
      explain("zzzqx"),
      'No matches for "zzzqx": no word in 1 conversation is it, begins with it or is spelled ' +
        "close to it; try other words",
    );
    assert.equal(
      explain("zzzqx wwwq", { forgive: "exact" }),
      'No matches for "zzzqx wwwq" as typed in 1 conversation; other forms and spellings were ' +
        "not tried",
    );
  } finally {
    await world.cleanup();
  }
});
