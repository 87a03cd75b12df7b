// `search` as a user runs it: ranking, every filter, JSON lines, and grep-like exit codes; a
// damaged store is an error that says how to recover, never "No matches".

import assert from "node:assert/strict";
import { main as reindex } from "../../commands/reindex.ts";
import { main as search } from "../../commands/search.ts";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { captureIo, FIXTURES, makeWorld, manifest, runCli, type World } from "../_helpers.ts";
import { CONTEXT_PROMPT, placeCodexContextRollout } from "../_codex_context.ts";
import { misplacedIndexWorld } from "../_damage.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { exitStatus, terminalScript, Tmux, tmuxAvailable } from "../_tmux.ts";

interface Entry {
  path: string;
  case: string;
  conversation: string;
  parent: string | null;
  cwd: string | null;
  phrases: string[];
  firstTimestamp?: string;
}

async function searchJson(world: World, args: string[]) {
  const io = captureIo();
  const code = await search([...args, "--json"], io, world.env);
  const hits = io.stdout().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { code, hits, stderr: io.stderr() };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function capturedWorld(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  return world;
}

Deno.test("search ranks the answer above the question that asked for it", async () => {
  const world = await capturedWorld();
  try {
    const { code, hits } = await searchJson(world, ["marmot keyring"]);
    assert.equal(code, 0);
    assert.equal(hits.length, 2);
    assert.equal(hits[0].role, "assistant");
    assert.equal(hits[1].role, "user");
    assert.deepEqual(Object.keys(hits[0]), [
      "conversation",
      "title",
      "record",
      "agent",
      "project",
      "cwd",
      "timestamp",
      "kind",
      "role",
      "snippet",
      "score",
      "matched",
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search exits 1 with no hits and 2 for a usage error", async () => {
  const world = await capturedWorld();
  try {
    assert.equal((await searchJson(world, ["zzzz-no-such-words"])).code, 1);
    const io = captureIo();
    assert.equal(await search(["x", "--kind", "bogus"], io, world.env), 2);
    assert.match(
      io.stderr(),
      /^error: Option "--kind" expects message, .* or meta, got "bogus"\n/,
    );
    const io2 = captureIo();
    assert.equal(await search(["x", "--since", "last tuesday"], io2, world.env), 2);
    assert.match(io2.stderr(), /Invalid value for "--since"/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search filters each narrow the results", async (t) => {
  const world = await capturedWorld();
  const entries = manifest<Entry>("claude");
  try {
    // "beta" words appear in the parent session and its subagent (shared phrase).
    await t.step("--no-subagents leaves subagent conversations out", async () => {
      const all = await searchJson(world, ['"fennel-bastion"']);
      assert.equal(all.hits.length, 2);
      const main = await searchJson(world, ['"fennel-bastion"', "--no-subagents"]);
      assert.equal(main.hits.length, 1);
      assert.ok(!main.hits[0].conversation.includes("/agent-"));
      const explicit = await searchJson(world, ['"fennel-bastion"', "--subagents"]);
      assert.equal(explicit.hits.length, 2);
    });

    await t.step("--project keeps one project", async () => {
      const alpha = entries.find((e) => e.case === "main")!;
      const all = await searchJson(world, ["the"]);
      const only = await searchJson(world, ["the", "--project", alpha.cwd!, "--limit", "500"]);
      assert.ok(only.hits.length > 0 && all.hits.length > 0);
      assert.ok(only.hits.every((h: { project: string }) => h.project === "/home/dev/src/alpha"));
      const none = await searchJson(world, ["marmot", "--project", "/home/dev/src/beta"]);
      assert.equal(none.code, 1);
    });

    await t.step("--project . means the project the user stands in", async () => {
      const here = {
        ...world,
        env: { get: (k: string) => k === "INIT_CWD" ? "/home/dev/src/alpha" : world.env.get(k) },
      };
      const result = await searchJson(here as World, ["marmot keyring", "--project", "."]);
      assert.equal(result.hits.length, 2);
      const elsewhere = {
        ...world,
        env: { get: (k: string) => k === "INIT_CWD" ? "/home/dev/src/beta" : world.env.get(k) },
      };
      assert.equal(
        (await searchJson(elsewhere as World, ["marmot keyring", "--project", "."])).code,
        1,
      );
    });

    await t.step("--agent keeps one agent", async () => {
      assert.equal((await searchJson(world, ["marmot", "--agent", "claude"])).hits.length, 2);
      assert.equal((await searchJson(world, ["marmot", "--agent", "codex"])).code, 1);
    });

    await t.step("--session keeps one conversation, by full id or prefix", async () => {
      const beta = entries.find((e) => e.case === "subagent-current" && e.parent === null)!;
      const full = await searchJson(world, ['"fennel-bastion"', "--session", beta.conversation]);
      assert.equal(full.hits.length, 1);
      assert.equal(full.hits[0].conversation, beta.conversation);
      const prefix = await searchJson(world, [
        '"fennel-bastion"',
        "--session",
        beta.conversation.slice(7, 15),
      ]);
      assert.equal(prefix.hits.length, 1);
      const unknown = await searchJson(world, ["x", "--session", "nope-nope"]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /No conversation "nope-nope"/);
    });

    await t.step("--kind and --role keep one kind or role", async () => {
      const reasoning = await searchJson(world, ["velvet-abacus", "--kind", "reasoning"]);
      assert.equal(reasoning.hits.length, 1);
      assert.equal((await searchJson(world, ["velvet-abacus", "--kind", "message"])).code, 1);
      const user = await searchJson(world, ["marmot keyring", "--role", "user"]);
      assert.equal(user.hits.length, 1);
      assert.equal(user.hits[0].role, "user");
      const results = await searchJson(world, ["pelican-orbit", "--kind", "tool_result"]);
      assert.equal(results.hits.length, 1);
    });

    await t.step("--since and --until narrow by time", async () => {
      const phrase = '"alder-polka" OR "mango-sundial" OR "ferret-cathedral"';
      assert.equal((await searchJson(world, [phrase])).hits.length, 3);
      const since = await searchJson(world, [phrase, "--since", "2026-03-01"]);
      assert.equal(since.hits.length, 2);
      const until = await searchJson(world, [phrase, "--until", "2026-03-01"]);
      assert.equal(until.hits.length, 1);
      const both = await searchJson(world, [
        phrase,
        "--since",
        "2026-03-01",
        "--until",
        "2026-06-01",
      ]);
      assert.equal(both.hits.length, 1);
      assert.match(both.hits[0].snippet, /mango-sundial/);
      // Relative: everything in the fixtures is older than a day before "now" (2026-11-30+).
      assert.equal((await searchJson(world, [phrase, "--since", "1d"])).code, 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("search quotes punctuated words and falls back to a literal scan for broken syntax", async () => {
  const world = await capturedWorld();
  try {
    const dotted = await searchJson(world, ["keys:rotate"]);
    assert.equal(dotted.code, 0);
    assert.ok(dotted.hits.length >= 1);
    const broken = await searchJson(world, ['marmot "keyring']);
    assert.match(broken.stderr, /literal substring scan/);
    assert.equal(broken.code, 1);
    const literal = await searchJson(world, ['rotate the marmot keyring, run "']);
    assert.match(literal.stderr, /literal substring scan/);
  } finally {
    await world.cleanup();
  }
});

/** The Claude fixtures and the CJK one (Chinese, Japanese, Korean and symbols), captured. */
async function cjkWorld(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  cpSync(join(FIXTURES, "cjk", "claude", "projects"), join(world.claude, "projects"), {
    recursive: true,
  });
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  return world;
}

Deno.test("search finds CJK words inside sentences and scans literally for symbols", async (t) => {
  const world = await cjkWorld();
  const cjk = "claude:5b0e6a2c-3d41-4c8e-9f27-1a6b8d2e4c70";
  try {
    for (
      const [query, expected] of [
        ["缓存策略", "我们需要把缓存策略改成按需加载"],
        ["按需加载", "我们需要把缓存策略改成按需加载"],
        ["キャッシュ", "キャッシュを使いたいです"],
        ["読み込み", "設定ファイルの読み込みが遅い"],
        ["전략", "캐시 전략을 바꾸면"],
        ["cache 缓存", "我会把缓存层换成 lazy cache"],
      ] as const
    ) {
      await t.step(`"${query}"`, async () => {
        const found = await searchJson(world, [query]);
        assert.equal(found.code, 0, found.stderr);
        assert.equal(found.stderr, "", "the index answered: no note");
        assert.equal(found.hits.length, 1, JSON.stringify(found.hits));
        assert.equal(found.hits[0].conversation, cjk);
        assert.ok(found.hits[0].snippet.includes(expected), found.hits[0].snippet);
      });
    }
    await t.step("a CJK word that is not there is not found", async () => {
      assert.equal((await searchJson(world, ["策略缓存"])).code, 1);
    });
    await t.step("a symbol query falls back to the literal scan and says so", async () => {
      for (const symbol of ["💡", "→"]) {
        const result = await runCli("search", [symbol], world.vars);
        assert.equal(result.code, 0, result.stderr);
        assert.match(
          result.stderr,
          /^note: the query has no word the index holds; used a literal substring scan\n$/,
        );
        assert.match(result.stdout, /Next step 💡 move the loader → worker thread/);
        assert.match(result.stdout, new RegExp(cjk));
      }
    });
    await t.step(
      "a symbol beside a word is not dropped: the literal scan, and it says so",
      async () => {
        const either = await searchJson(world, ["缓存策略 OR 💡"]);
        assert.equal(either.code, 0, either.stderr);
        assert.equal(
          either.stderr,
          'note: "💡" has no word the index holds; used a literal substring scan\n',
        );
        const snippets = either.hits.map((h: { snippet: string }) => h.snippet).sort();
        assert.equal(snippets.length, 2, JSON.stringify(either.hits));
        assert.ok(snippets.some((s: string) => s.includes("缓存策略")));
        assert.ok(snippets.some((s: string) => s.includes("💡")));
        // Terms side by side must all be there, as they must for the index.
        assert.equal((await searchJson(world, ["💡 loader"])).hits.length, 1);
        assert.equal((await searchJson(world, ["💡 缓存策略"])).code, 1);
        assert.equal((await searchJson(world, ["💡 NOT loader"])).code, 1);
        const grouped = await searchJson(world, ["缓存策略 OR 💡", "--group"]);
        assert.equal(grouped.hits.length, 1);
        assert.equal(grouped.hits[0].hits, 2);
        assert.match(grouped.stderr, /"💡" has no word the index holds/);
      },
    );
    await t.step("--group finds CJK words and symbols as search does", async () => {
      const cjkGroup = await searchJson(world, ["缓存策略", "--group"]);
      assert.equal(cjkGroup.hits.length, 1, cjkGroup.stderr);
      assert.equal(cjkGroup.stderr, "");
      const symbol = await searchJson(world, ["💡", "--group"]);
      assert.equal(symbol.hits.length, 1);
      assert.match(symbol.stderr, /no word the index holds; used a literal substring scan/);
    });
    await t.step("the real command finds the example sentence", async () => {
      const result = await runCli("search", ["缓存策略", "--json"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
      const hits = result.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(hits.length, 1);
      assert.match(hits[0].snippet, /缓存策略/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("search snippets never show base64 payloads and human output marks nothing without colour", async () => {
  const world = await capturedWorld();
  try {
    const main = manifest<Entry & { notIndexed: string[] }>("claude").find((e) =>
      e.case === "main"
    )!;
    for (const token of main.notIndexed) {
      assert.equal((await searchJson(world, [`"${token}"`])).code, 1, token);
    }
    const result = await runCli("search", ["ochre-whistle"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /ochre-whistle/);
    assert.ok(!result.stdout.includes("\x1b["), "no ANSI escapes");
    assert.match(result.stdout, new RegExp(main.conversation));
  } finally {
    await world.cleanup();
  }
});

Deno.test("search on a machine with no store says to run reindex", async () => {
  const world = await makeWorld();
  try {
    const io = captureIo();
    assert.equal(await search(["anything"], io, world.env), 1);
    assert.match(io.stderr(), /run "logbook reindex" first/);
    assert.equal(await Deno.stat(world.data).catch(() => null), null, "search creates no data dir");
  } finally {
    await world.cleanup();
  }
});

Deno.test("search refuses a query over a bound with exit 2, naming the bound", async () => {
  const world = await capturedWorld();
  try {
    const prefixes = [..."abcdefghijklmnopqrstuvwxyz".repeat(6)].map((c) => `${c}*`).join(" OR ");
    const shown = await runCli("search", [prefixes], world.vars);
    assert.equal(shown.code, 2, shown.stderr);
    assert.equal(shown.stdout, "");
    assert.match(
      shown.stderr,
      /^error: The prefix "a\*" is too short: a prefix needs at least 3 characters before "\*"\n/,
    );
    const cases: [string[], RegExp][] = [
      [["marmot", ..."abcdefghijklmnopqrstuvwxyzabcdefg"], /The query has 34 words: at most 32/],
      [["NEAR(marmot keyring, 100000)"], /The NEAR distance 100000 is over the limit of 1000/],
      [[Array.from({ length: 9 }, () => "mar*").join(" OR ")], /has 9 prefixes: at most 8/],
    ];
    for (const [args, message] of cases) {
      const io = captureIo();
      assert.equal(await search(args, io, world.env), 2, args.join(" "));
      assert.match(io.stderr(), message);
    }
    assert.equal((await searchJson(world, ["NEAR(marmot keyring, 1000)"])).code, 0);
    assert.equal((await searchJson(world, ["marm*"])).code, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a query over 4096 characters is invalid, not missing", async () => {
  const world = await capturedWorld();
  try {
    const io = captureIo();
    assert.equal(await search(["x".repeat(4097)], io, world.env), 2);
    assert.match(io.stderr(), /^error: Invalid query: the query is over 4096 characters\n/);
    const empty = captureIo();
    assert.equal(await search(["  "], empty, world.env), 2);
    assert.match(empty.stderr(), /^error: Missing query: the query is empty\n/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search stopped by its budget before any hit exits 2 saying how to narrow it, the literal scan too", async () => {
  const world = await capturedWorld();
  try {
    // A budget of 0 ms is spent before the first check: deterministic, whatever the machine.
    const vars = { ...world.vars, LOGBOOK_SEARCH_BUDGET_MS: "0" };
    const fts = await runCli("search", ["marmot keyring"], vars);
    assert.equal(fts.code, 2, fts.stderr);
    assert.equal(fts.stdout, "");
    assert.match(fts.stderr, /^error: The search was stopped after 0 ms: .*filters\n/);
    const literal = await runCli("search", ['marmot "keyring'], vars);
    assert.equal(literal.code, 2, literal.stderr);
    assert.match(literal.stderr, /^error: The literal substring scan was stopped after 0 ms/);
    assert.equal((await runCli("search", ["marmot keyring"], world.vars)).code, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search past its budget prints the hits it had and says what they are, exit 0", async (t) => {
  const world = await capturedWorld();
  try {
    // The budget (1200 ms) is counted from 0, when the command began and its search with it;
    // every later read of the clock says 1050: past the ranking's share (1000), within the
    // fallback's and the hits' (1100, 1200).
    const clock = () => {
      let reads = 0;
      return () => reads++ < 2 ? 0 : 1050;
    };
    const ranked = await searchJson(world, ["marmot keyring"]);
    assert.equal(ranked.code, 0);
    await t.step("as text, the hits then the note on stderr", async () => {
      const io = captureIo();
      assert.equal(await search(["marmot keyring"], io, world.env, clock()), 0, io.stderr());
      assert.match(
        io.stderr(),
        /^note: The search was stopped after 1200 ms: it matches too much to rank in time, so these 2 hits are from the most recently captured matches, newest first, not ranked; .*for ranked hits\n$/,
      );
      assert.match(io.stdout(), /marmot/);
      assert.match(io.stdout(), /^2 hits\n$/m);
    });
    await t.step("as JSON lines, the same hits, newest captured first", async () => {
      const io = captureIo();
      assert.equal(await search(["marmot keyring", "--json"], io, world.env, clock()), 0);
      const hits = io.stdout().trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(
        hits.map((h) => h.record),
        ranked.hits.map((h) => h.record).sort((a: number, b: number) => b - a),
      );
      assert.match(io.stderr(), /^note: The search was stopped after 1200 ms/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("search shows each hit's title, local time and whole id in 80 columns, then a count line", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const json = await searchJson(world, ["the", "--limit", "1000"]);
    const total = json.hits.length;
    assert.ok(total > 25, "enough hits for two pages");
    const tokyo = await runCli("search", ["the"], { ...world.vars, TZ: "Asia/Tokyo" });
    assert.equal(tokyo.code, 0, tokyo.stderr);
    const lines = tokyo.stdout.trimEnd().split("\n");
    for (const line of lines) assert.ok([...line].length <= 80, `over 80 columns: ${line}`);
    assert.equal(lines.at(-1), `20 of ${total} hits · more: --offset 20`);
    const first = json.hits[0];
    assert.ok(tokyo.stdout.includes(first.title), "the first hit's title");
    // The hit opens with the local (Tokyo) date and time and its title; the id stands whole,
    // alone on its line, so the line can be copied as it is.
    const local = new Date(Date.parse(first.timestamp) + 9 * 3600_000).toISOString()
      .slice(0, 16).replace("T", " ");
    assert.match(
      tokyo.stdout,
      new RegExp(
        `^${local}  ${
          escape(first.title.slice(0, 20))
        }.*\\n${first.conversation}\\n  #${first.record} `,
        "m",
      ),
    );
    const ids = tokyo.stdout.match(/^(claude|codex|opencode):\S+$/gm) ?? [];
    assert.equal(ids.length, 20);
    for (const id of ids) {
      assert.ok(json.hits.some((h: { conversation: string }) => h.conversation === id), id);
    }

    const next = await runCli("search", ["the", "--offset", "20"], world.vars);
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stdout, new RegExp(`\n21–40 of ${total} hits · more: --offset 40\n$`));
    const last = await runCli("search", ["the", "--offset", String(total - 2)], world.vars);
    assert.match(last.stdout, new RegExp(`\n${total - 1}–${total} of ${total} hits\n$`));
    const past = await runCli("search", ["the", "--offset", String(total)], world.vars);
    assert.equal(past.code, 1);
    assert.match(past.stderr, /No matches after the first/);
    const bad = await runCli("search", ["the", "--offset", "-1"], world.vars);
    assert.equal(bad.code, 2);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search --offset pages through the same ranking, and --sort orders by time", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const key = (h: { record: number }) => h.record;
    const all = (await searchJson(world, ["the", "--limit", "30"])).hits.map(key);
    const one = (await searchJson(world, ["the", "--limit", "15"])).hits.map(key);
    const two = (await searchJson(world, ["the", "--limit", "15", "--offset", "15"])).hits.map(key);
    assert.deepEqual([...one, ...two], all);
    for (const [sort, sign] of [["newest", -1], ["oldest", 1]] as const) {
      const { hits } = await searchJson(world, ["the", "--sort", sort, "--limit", "1000"]);
      const times = hits.map((h: { timestamp: string | null }) => h.timestamp)
        .filter((t: string | null): t is string => t !== null).map(Date.parse);
      assert.ok(times.length > 10);
      for (let i = 1; i < times.length; i++) {
        assert.ok(sign * (times[i]! - times[i - 1]!) >= 0, `${sort} at ${i}`);
      }
    }
    const rel = await searchJson(world, ["the", "--sort", "relevance", "--limit", "30"]);
    assert.deepEqual(rel.hits.map(key), all);
    const bad = await runCli("search", ["the", "--sort", "best"], world.vars);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /Option "--sort" expects relevance, newest or oldest, got "/,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("search --group gives one entry per conversation with its hit count", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const hits = (await searchJson(world, ["the", "--limit", "1000"])).hits;
    const counts = new Map<string, number>();
    for (const h of hits) counts.set(h.conversation, (counts.get(h.conversation) ?? 0) + 1);
    const groups = (await searchJson(world, ["the", "--group", "--limit", "1000"])).hits;
    assert.equal(groups.length, counts.size);
    for (const g of groups) {
      assert.equal(g.hits, counts.get(g.conversation), g.conversation);
      assert.ok("title" in g && "snippet" in g && "agent" in g && "project" in g);
    }
    assert.equal(
      new Set(groups.map((g: { conversation: string }) => g.conversation)).size,
      groups.length,
    );
    const shown = await runCli("search", ["the", "--group", "--limit", "3"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const lines = shown.stdout.trimEnd().split("\n");
    for (const line of lines) assert.ok([...line].length <= 80, `over 80 columns: ${line}`);
    assert.equal(lines.at(-1), `3 of ${counts.size} conversations · more: --offset 3`);
    assert.match(
      shown.stdout,
      new RegExp(`^  ${groups[0].hits} hits, best #${groups[0].record} `, "m"),
    );
    const newest =
      (await searchJson(world, ["the", "--group", "--sort", "newest", "--limit", "1000"]))
        .hits;
    assert.equal(newest.length, groups.length);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search --exact suggests a prefix when a word begins indexed words but matches none", async () => {
  const world = await capturedWorld();
  try {
    const result = await runCli("search", ["marm", "--exact"], world.vars);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /No matches\. Indexed words begin with it: try "marm\*"/);
    assert.equal((await searchJson(world, ["marm*"])).code, 0);
    const none = await runCli("search", ["zzzqx"], world.vars);
    assert.match(
      none.stderr,
      /^No matches for "zzzqx": no word in \d+ conversations is it, begins with it or is spelled close to it; try other words\n$/,
    );
  } finally {
    await world.cleanup();
  }
});

/** A world with fixtures/forgiving captured: lanternfish keys rotated, logs rotating. */
async function forgivingWorld(): Promise<World> {
  const world = await makeWorld();
  cpSync(join(FIXTURES, "forgiving", "claude", "projects"), join(world.claude, "projects"), {
    recursive: true,
  });
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  return world;
}

Deno.test("search forgives a query that finds nothing, says so on stderr, and --exact does not", async (t) => {
  const world = await forgivingWorld();
  try {
    await t.step("a typo: the closest word, the note on stderr, exit 0", async () => {
      const result = await runCli("search", ["lanternfsh"], world.vars);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stderr,
        'note: no hits for "lanternfsh"; showing "lanternfish" (--exact for none)\n',
      );
      assert.match(result.stdout, /I rotated the signing keys for the lanternfish service/);
    });
    await t.step("--exact: nothing, exit 1", async () => {
      const result = await runCli("search", ["lanternfsh", "--exact"], world.vars);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^No matches for "lanternfsh" as typed in \d+ conversations; other forms and spellings were not tried\n$/,
      );
    });
    await t.step("--json: each hit says how its words matched", async () => {
      const forms = await searchJson(world, ["rotating", "keys"]);
      assert.equal(forms.code, 0);
      assert.deepEqual(forms.hits.map((hit) => hit.matched), [[
        { word: "rotating", term: "rotated", how: "form" },
        { word: "keys", term: "keys", how: "exact" },
      ]]);
      assert.match(forms.stderr, /^note: no hits for "rotating keys"; showing "\(rotating OR /);
      const prefix = await searchJson(world, ["lanternf"]);
      assert.deepEqual(prefix.hits[0].matched, [
        { word: "lanternf", term: "lanternfish", how: "prefix" },
      ]);
      const exact = await searchJson(world, ["lanternfish", "--exact"]);
      assert.deepEqual(exact.hits[0].matched, [
        { word: "lanternfish", term: "lanternfish", how: "exact" },
      ]);
      assert.equal(exact.stderr, "");
    });
    await t.step("a query that finds something is searched as typed", async () => {
      const rotating = await searchJson(world, ["rotating"]);
      assert.equal(rotating.stderr, "");
      assert.ok(rotating.hits.every((hit) => /rotating/i.test(hit.snippet)));
    });
    await t.step("--group forgives alike", async () => {
      const grouped = await searchJson(world, ["lanternfsh", "--group"]);
      assert.equal(grouped.code, 0);
      assert.equal(grouped.hits.length, 1);
      assert.equal(grouped.hits[0].hits, 2);
      assert.match(grouped.stderr, /^note: no hits for "lanternfsh"; showing "lanternfish"/);
    });
    await t.step("-i cannot take --exact", async () => {
      const io = captureIo();
      assert.equal(await search(["-i", "x", "--exact"], io, world.env), 2);
      assert.match(io.stderr(), /"-i, --interactive" and "--exact" cannot be used together/);
    });
  } finally {
    await world.cleanup();
  }
});

/** The prompt of a session in a deep project directory, and the world it is captured in. */
const DEEP_PROMPT =
  "Work on bead spotter-4te: make the ledger export resumable after a crash, then rerun it";

async function deepProjectWorld(): Promise<World> {
  const world = await makeWorld();
  const session = "7c1d2e3f-4a5b-4c6d-8e7f-00000000d1e9";
  const cwd = "/home/dev/src/clients/northwind/projects/spotter-worktrees/spotter-4te";
  const line = (n: number, type: string, message: unknown) =>
    JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: "external",
      cwd,
      sessionId: session,
      version: "2.1.44",
      type,
      uuid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
      timestamp: `2026-10-06T06:1${n}:00.000Z`,
      message,
    });
  const dir = join(world.claude, "projects", "-deep");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    join(dir, `${session}.jsonl`),
    [
      line(1, "user", { role: "user", content: DEEP_PROMPT }),
      line(2, "assistant", {
        model: "claude-opus-4-6",
        id: "msg_01deep",
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "The export now keeps a checkpoint per ledger page." }],
      }),
    ].join("\n") + "\n",
  );
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  return world;
}

Deno.test("an empty search says which filter matched nothing and what leaving it out finds", async () => {
  const world = await capturedWorld();
  try {
    const found = (await searchJson(world, ["marmot"])).hits.length;
    assert.ok(found > 1);
    const why = async (...args: string[]) => {
      const run = await runCli("search", ["marmot", ...args], world.vars);
      assert.equal(run.code, 1, run.stdout);
      return run.stderr;
    };
    // The fixtures are older than a week.
    assert.equal(
      await why("--since", "7d"),
      `No matches for "marmot" in the last 7 days; ${found} older matches: drop --since 7d\n`,
    );
    assert.equal(
      await why("--agent", "codex", "--until", "2000-01-01"),
      `No matches for "marmot" from codex before 2000-01-01; ${found} matches with none of ` +
        "these filters\n",
    );
    assert.equal(
      await why("--kind", "tool_call"),
      `No matches for "marmot" in tool_call records; ${found} matches of other kinds: drop ` +
        "--kind tool_call\n",
    );
    const none = await runCli("search", ["zzzqx", "--since", "7d"], world.vars);
    assert.match(
      none.stderr,
      /^No matches for "zzzqx": no word in \d+ conversations is it, begins with it or is spelled close to it; try other words\n$/,
    );
    const prefix = await runCli("search", ["marm", "--agent", "claude", "--exact"], world.vars);
    assert.equal(prefix.stderr, 'No matches. Indexed words begin with it: try "marm*"\n');
    // A near miss of a project's name: the closest, and the matches elsewhere.
    assert.match(
      await why("--project", "alph"),
      /^No matches: no conversation is in project "[^"]+\/alph"; the closest: "\/home\/dev\/src\/alpha"; \d+ matches? in other projects: drop --project alph\n$/,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("--project takes the end of a project's path when it names one project", async () => {
  const world = await makeWorld();
  try {
    const roots = ["north/app", "south/app", "south/tool"].map((p) => join(world.dir, p));
    // Where the user stands is a Git repository with a conversation of its own.
    await Deno.mkdir(join(world.home, ".git"), { recursive: true });
    await Deno.writeTextFile(join(world.home, ".git", "HEAD"), "ref: refs/heads/main\n");
    for (const [i, root] of [...roots, world.home].entries()) {
      const session = `4b7e2a10-6c3d-4e5f-8a9b-0c1d2e3f4a5${i}`;
      await placeClaudeTranscript(
        world,
        root,
        session,
        claudeTranscript(session, root, [[`Where does the osprey cache live? (${i})`, "In /tmp"]]),
      );
    }
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const projects = async (...args: string[]) =>
      new Set((await searchJson(world, ["osprey", ...args])).hits.map((h) => h.project));
    assert.deepEqual(await projects("--project", "tool"), new Set([roots[2]]));
    assert.deepEqual(await projects("--project", "north/app"), new Set([roots[0]]));
    assert.deepEqual(await projects("--project", "."), new Set([world.home]));
    // A name no project's path ends with is not the repository around where the user stands.
    const elsewhere = await runCli("search", ["osprey", "--project", "nosuch"], world.vars);
    assert.equal(elsewhere.code, 1, elsewhere.stdout);
    assert.match(elsewhere.stderr, /^No matches: no conversation is in project "[^"]+\/nosuch"/);
    const both = await runCli("search", ["osprey", "--project", "app"], world.vars);
    assert.equal(both.code, 2);
    assert.equal(
      both.stderr.split("\n")[0],
      `error: Invalid value for "--project": Project "app" is ambiguous: it ends the paths of "${
        roots[0]
      }", "${roots[1]}"; give more of the path`,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("a hit's head line gives the title the room a deep project path would take", async () => {
  const world = await deepProjectWorld();
  try {
    const result = await runCli("search", ["checkpoint"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    const head = result.stdout.split("\n")[0]!;
    assert.ok([...head].length <= 80, head);
    // Two thirds of the line for the title, the project's end for the rest.
    assert.ok(head.includes(DEEP_PROMPT.slice(0, 38)), head);
    assert.match(head, /…\S*spotter-4te$/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search on a 100-column terminal uses its width for the title (tmux)", async () => {
  if (!tmuxAvailable()) {
    return console.log("skipped: tmux is not installed, so the terminal test cannot run");
  }
  const world = await deepProjectWorld();
  const { script, status } = await terminalScript(world.dir, "search", ["checkpoint"], world.vars);
  const tmux = new Tmux(script, { width: 100, height: 24 });
  try {
    assert.equal(await exitStatus(status), "0");
    const head = tmux.screen().split("\n").find((l) => l.includes("spotter-4te:"))!;
    assert.ok([...head.trimEnd()].length <= 100, head);
    // The title has the room the wider line gives, not 40 columns of 80.
    assert.ok(head.includes(DEEP_PROMPT.slice(0, 52)), head);
    assert.match(head.trimEnd(), /…\S*spotter-4te$/);
  } finally {
    tmux.kill();
    await world.cleanup();
  }
});

Deno.test("search --group shows its best hit's match on its one line", async () => {
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "lagoon");
    const lead = "The nightly job reads every partition of the events table, sorts them by day, " +
      "writes one archive per customer and then uploads the archives to cold storage where";
    const session = "3e8a1c2d-5b6f-4a7e-9c0d-1e2f3a4b5c6d";
    await placeClaudeTranscript(
      world,
      project,
      session,
      claudeTranscript(session, project, [
        [
          `${lead} the grebe checksum fails at random.`,
          `${lead} the grebe checksum reads a stale file.`,
        ],
      ]),
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const shown = await runCli("search", ["grebe", "--group"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    const line = shown.stdout.split("\n")[2]!;
    assert.match(line, /^ {2}2 hits, best #\d+ \w+: /);
    assert.match(line, /grebe/, shown.stdout);
    assert.ok([...line].length <= 80, line);
    const json = await searchJson(world, ["grebe", "--group"]);
    assert.match(json.hits[0].snippet, /grebe/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("search ranks what Codex told the model below what was said, and still finds it", async () => {
  const world = await makeWorld();
  try {
    placeCodexContextRollout(world, "/home/ines/src/atlas");
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const { hits } = await searchJson(world, ["gazetteer"]);
    assert.equal(hits.length, 4, JSON.stringify(hits));
    assert.match(hits[0].snippet, CONTEXT_PROMPT, "the prompt ranks first");
    const rest = hits.slice(1).map((h: { role: string }) => h.role).sort();
    assert.deepEqual(rest, ["developer", "user", "user"], "and the rules are still found");
  } finally {
    await world.cleanup();
  }
});

Deno.test('search on a damaged text index says so and how to recover, never "No matches"', async () => {
  const { world, path, word } = await misplacedIndexWorld();
  try {
    const expected = `error: The history store "${path}" is damaged in the text index (table ` +
      '"fts"): row not in PRIMARY KEY order for fts_idx; run "logbook reindex --rebuild" to ' +
      "derive the text index again from the raw records (nothing captured is lost; the rebuild " +
      "first checks every page, and says what to do if more is damaged)\n";
    for (const args of [[word], [word, "--json"], [word, "--group"]]) {
      const damaged = await runCli("search", args, world.vars);
      assert.equal(damaged.code, 1, args.join(" "));
      assert.equal(damaged.stdout, "");
      assert.equal(damaged.stderr, expected);
    }

    const rebuilt = await runCli("reindex", ["--rebuild"], world.vars);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    const found = await runCli("search", [word, "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    assert.equal(found.stdout.trim().split("\n").length, 1);
  } finally {
    await world.cleanup();
  }
});
