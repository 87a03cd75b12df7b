// The dashboard's API through `app.request()`: each endpoint against a real captured store, what
// a bad input gets back, auth, the Host check, the error shape and the gate.

import { scrubPendingSince } from "../../lib/store/scrub.ts";
import { oneOf } from "../../lib/format.ts";
import { AGENTS } from "../../lib/agents.ts";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { main as search } from "../../commands/search.ts";
import { main as show } from "../../commands/show.ts";
import { tryLock } from "../../lib/lock.ts";
import { createStageMarkers } from "../../lib/stage_markers.ts";
import { sharePercent } from "../../lib/store/present_sources.ts";
import { openStore } from "../../lib/context.ts";
import { loadContext } from "../../lib/context.ts";
import { misplacedIndexWorld, zeroLeafPage } from "../_damage.ts";
import { cpSync } from "node:fs";
import { main as reindex } from "../../commands/reindex.ts";
import { captureIo, FIXTURES, makeWorld } from "../_helpers.ts";
import {
  appFor,
  assertError,
  capturedWorld,
  HOST,
  PLANTED,
  post,
  request,
  SECRET,
  TOKEN,
  withVars,
} from "./_dashboard.ts";

const FIXTURE_ID = "claude:f332cca8-0b9a-4244-835f-c44f31385301";

Deno.test("GET /api/search returns the hits of search --json, paged by limit and offset", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const io = captureIo();
    assert.equal(await search(["export", "--json", "--limit", "50"], io, world.env), 0);
    const expected = io.stdout().trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(expected.length >= 3, "the query finds several hits");

    await t.step("all hits, in the same order with the same fields", async () => {
      const response = await request(app, "/api/search?q=export&limit=50");
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.deepEqual(body.hits, expected);
      assert.equal(body.highlights.length, expected.length);
      assert.equal(body.next, null);
      assert.equal(body.mode, "fts");
    });

    await t.step("pages of one, following next", async () => {
      const seen = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const response = await request(app, `/api/search?q=export&limit=1&offset=${offset}`);
        const body = await response.json();
        assert.equal(body.hits.length, 1);
        seen.push(body.hits[0]);
        offset = body.next;
      }
      assert.deepEqual(seen, expected);
    });

    await t.step("filters narrow like the command's flags", async () => {
      const io = captureIo();
      await search(["export", "--role", "assistant", "--agent", "claude", "--json"], io, world.env);
      const narrowed = io.stdout().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const body = await (await request(app, "/api/search?q=export&role=assistant&agent=claude"))
        .json();
      assert.deepEqual(body.hits, narrowed);
      assert.ok(body.hits.every((h: { role: string }) => h.role === "assistant"));
    });

    await t.step("sort, optional, orders as the command's --sort does", async () => {
      const io = captureIo();
      await search(["export", "--sort", "oldest", "--limit", "50", "--json"], io, world.env);
      const oldest = io.stdout().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const body = await (await request(app, "/api/search?q=export&sort=oldest&limit=50")).json();
      assert.deepEqual(body.hits, oldest);
      assert.ok(body.hits.every((h: { title: unknown }) => "title" in h));
    });

    await t.step("empty form fields count as absent", async () => {
      const body = await (await request(app, "/api/search?q=export&agent=&kind=&limit=50"))
        .json();
      assert.deepEqual(body.hits, expected);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/search finds CJK words inside sentences and notes the literal scan", async (t) => {
  const world = await capturedWorld();
  try {
    cpSync(join(FIXTURES, "cjk", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const { app } = appFor(world);
    const get = async (q: string) => {
      const response = await request(app, `/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(response.status, 200);
      return await response.json();
    };
    const words: [string, string][] = [
      ["缓存策略", "缓存策略"],
      ["キャッシュ", "キャッシュ"],
      ["전략", "전략을"],
    ];
    for (const [q, expected] of words) {
      await t.step(q, async () => {
        const body = await get(q);
        assert.equal(body.mode, "fts");
        assert.equal(body.note, null);
        assert.equal(body.hits.length, 1);
        assert.ok(body.hits[0].snippet.includes(expected), body.hits[0].snippet);
        const [range] = body.highlights[0];
        assert.equal(body.hits[0].snippet.slice(range[0], range[1]), q);
      });
    }
    await t.step("cache 缓存", async () => {
      const body = await get("cache 缓存");
      assert.equal(body.hits.length, 1);
      assert.match(body.hits[0].snippet, /lazy cache/);
    });
    await t.step("💡 is a literal scan, and the answer says so", async () => {
      const body = await get("💡");
      assert.equal(body.mode, "literal");
      assert.equal(
        body.note,
        "the query has no word the index holds; used a literal substring scan",
      );
      assert.equal(body.hits.length, 1);
      assert.match(body.hits[0].snippet, /💡/);
      const page = await (await request(app, `/?q=${encodeURIComponent("→")}`)).text();
      assert.match(page, /The query has no word the index holds; used a literal substring scan/);
      assert.match(page, /move the loader/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/search forgives as search does: fallback by default, typing and exact on request", async (t) => {
  const world = await makeWorld();
  try {
    cpSync(join(FIXTURES, "forgiving", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const { app } = appFor(world);
    const get = async (query: string) =>
      await (await request(app, `/api/search?${query}&limit=50`)).json();
    await t.step("fallback: a typo answers the closest word's hits, saying so", async () => {
      const body = await get("q=lanternfsh");
      assert.deepEqual(body.forgiven, {
        how: "spelling",
        searched: "lanternfish",
        note: 'no hits for "lanternfsh"; showing "lanternfish"',
      });
      assert.equal(body.hits.length, 2);
      assert.deepEqual(body.hits[0].matched, [
        { word: "lanternfsh", term: "lanternfish", how: "spelling" },
      ]);
      assert.equal(body.noMatch, null);
    });
    await t.step("exact: the words as typed, nothing forgiven", async () => {
      const body = await get("q=lanternfsh&forgive=exact");
      assert.deepEqual(body.hits, []);
      assert.equal(body.forgiven, null);
      assert.match(
        body.noMatch.text,
        /^No matches for "lanternfsh" as typed in \d+ conversations; other forms and spellings were not tried$/,
      );
    });
    await t.step("typing: the word being typed is a prefix, whole words first", async () => {
      const body = await get("q=lantern&forgive=typing");
      assert.equal(body.forgiven, null);
      const hows = body.hits.map((hit: { matched: { how: string }[] }) => hit.matched[0]!.how);
      assert.deepEqual(hows, ["exact", "exact", "prefix", "prefix"]);
      const partial = await get("q=lanternf&forgive=typing");
      assert.equal(partial.forgiven.how, "prefix");
      assert.equal(partial.hits.length, 2);
    });
    await t.step("grouped: the page's form search, forgiving alike", async () => {
      const html = await (await request(app, "/?q=lanternfsh&group=1")).text();
      assert.match(html, /No hits for &quot;lanternfsh&quot;; showing &quot;lanternfish&quot;/);
      assert.match(html, /<mark>lanternfish<\/mark>/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/search answers a bad filter with a 400 naming the field", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const cases: [string, string][] = [
      ["/api/search?q=export&limit=abc", "limit"],
      ["/api/search?q=export&limit=0", "limit"],
      ["/api/search?q=export&agent=emacs", "agent"],
      ["/api/search?q=export&kind=poem", "kind"],
      ["/api/search?q=export&since=the-other-day", "since"],
      ["/api/search?q=export&subagents=maybe", "subagents"],
      ["/api/search?q=export&offset=-1", "offset"],
      ["/api/search?q=export&sort=best", "sort"],
      ["/api/search?q=export&forgive=loose", "forgive"],
      ["/api/search?q=", "q"],
    ];
    for (const [path, field] of cases) {
      await t.step(path, async () => {
        await assertError(await request(app, path), 400, "bad_request", field);
      });
    }
    await t.step("the messages are plain sentences, not the validator's wording", async () => {
      const said = async (path: string) => (await (await request(app, path)).json()).error.message;
      assert.equal(
        await said("/api/search?q=export&limit=abc"),
        'Invalid value for "limit": expected a whole number from 1 to 1000',
      );
      assert.equal(
        await said("/api/search?q=export&agent=emacs"),
        `Invalid value for "agent": expected ${oneOf(AGENTS)}`,
      );
    });
    await t.step("an unknown session is a 404 naming it", async () => {
      await assertError(
        await request(app, "/api/search?q=export&session=claude:nope"),
        404,
        "not_found",
        "session",
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/conversations/:id returns the object of show --json, page by page", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const io = captureIo();
    assert.equal(await show([FIXTURE_ID, "--json"], io, world.env), 0);
    const expected = JSON.parse(io.stdout());

    await t.step("the whole conversation", async () => {
      const response = await request(app, `/api/conversations/${encodeURIComponent(FIXTURE_ID)}`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), expected);
    });

    await t.step("pages of 7 joined give the same records", async () => {
      const records = [];
      let after: number | null = null;
      let pages = 0;
      do {
        const query: string = after === null ? "limit=7" : `limit=7&after=${after}`;
        const body = await (await request(app, `/api/conversations/f332cca8?${query}`)).json();
        assert.ok(body.records.length <= 7);
        records.push(...body.records);
        after = body.next;
        pages++;
      } while (after !== null);
      assert.ok(pages > 1);
      assert.deepEqual(records, expected.records);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/conversations/:id refuses path characters and bad paging with a 400", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    for (
      const id of [
        "..%2F..%2Fetc%2Fpasswd",
        "a%5Cb",
        "claude%3Aabc%2F..%2Fx",
        "%2Fetc%2Fpasswd",
        "abc%00",
      ]
    ) {
      await t.step(`id ${id}`, async () => {
        await assertError(await request(app, `/api/conversations/${id}`), 400, "bad_request", "id");
      });
    }
    await t.step("limit=0", async () => {
      await assertError(
        await request(app, `/api/conversations/f332cca8?limit=0`),
        400,
        "bad_request",
        "limit",
      );
    });
    await t.step("after=x", async () => {
      await assertError(
        await request(app, `/api/conversations/f332cca8?after=x`),
        400,
        "bad_request",
        "after",
      );
    });
    await t.step("an unknown id is a 404", async () => {
      await assertError(await request(app, "/api/conversations/claude%3Anope"), 404, "not_found");
    });
    await t.step("a subagent id, which holds a slash, is accepted", async () => {
      const response = await request(
        app,
        `/api/conversations/${
          encodeURIComponent("claude:e6b87366-6fa9-42f4-8674-9b1edd6ba8df/agent-a7d93e1")
        }`,
      );
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.conversation.subagent, true);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/status reports the store, capture, drift, snapshots and open steps", async (t) => {
  const world = await capturedWorld();
  try {
    const now = Date.parse("2026-11-30T12:00:00Z");
    const { app } = appFor(world, { now: () => now });

    await t.step("idle, with counts and drift", async () => {
      const response = await request(app, "/api/status");
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.capture.on, true);
      assert.equal(body.capture.phase, "idle");
      assert.equal(body.capture.running, false);
      assert.equal(body.capture.progress, null);
      assert.ok(body.store.records > 0);
      assert.ok(body.store.conversations.some((c: { agent: string }) => c.agent === "claude"));
      assert.ok(body.drift.some((line: string) => /unknown type "hologram-sync"/.test(line)));
      assert.deepEqual(body.snapshots, { count: 0, bytes: 0 });
      assert.deepEqual(body.stageMarkers.unclosed, []);
      const page = await (await request(app, "/status")).text();
      assert.match(page, /<button type="submit">Capture now<\/button>/, "enabled when idle");
    });

    await t.step("while a capture runs: percentage and time left from the progress", async () => {
      const ctx = loadContext({ env: world.env });
      const store = openStore(ctx);
      const progress = {
        phase: "capturing",
        sourcesTotal: 8,
        sourcesDone: 2,
        bytesTotal: 4000,
        bytesDone: 1000,
        startedAt: now - 10_000,
        pid: 1,
      };
      store.setMeta("progress", progress);
      store.close();
      const lock = tryLock(ctx.paths.run, ctx.paths.root, "capture", "test");
      assert.ok("held" in lock);
      try {
        const body = await (await request(app, "/api/status")).json();
        assert.equal(body.capture.running, true);
        assert.equal(body.capture.phase, "capturing");
        assert.equal(body.capture.progress.percent, 25, "a quarter of this run's work");
        assert.equal(body.capture.progress.etaMs, 30_000);
        // The bar and the store's table show one figure: the share of everything captured.
        const share = sharePercent(body.store.captured.ratio);
        const page = await (await request(app, "/status")).text();
        assert.match(
          page,
          new RegExp(`<progress id="capture-progress" max="100" value="${parseFloat(share)}">`),
        );
        assert.ok(page.includes(`${share} captured · 2 of 8 sources · about 30.0 s left`));
        assert.ok(page.includes(`<td id="captured-share">${share} (`));
        assert.match(page, /data-running="1"/);
        assert.match(
          page,
          /<button type="submit"\s+disabled\s*>Capture now<\/button>/,
          "Capture now is disabled while a capture runs",
        );

        const again = openStore(ctx);
        again.setMeta("progress", { ...progress, phase: "rebuilding" });
        again.close();
        const rebuilding = await (await request(app, "/api/status")).json();
        assert.equal(rebuilding.capture.phase, "rebuilding");
        const rebuildPage = await (await request(app, "/status")).text();
        assert.match(rebuildPage, /Phase: <strong>rebuilding<\/strong>/);
        assert.match(rebuildPage, /<progress id="capture-progress" max="100"><\/progress>/);
      } finally {
        lock.held.release();
      }
    });

    await t.step("capture switched off", async () => {
      withVars(world, { LOGBOOK_INGEST: "0" });
      const off = appFor(world).app;
      const body = await (await request(off, "/api/status")).json();
      assert.equal(body.capture.on, false);
      assert.equal(body.capture.offReason, "LOGBOOK_INGEST=0");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/status of a data dir without a store says it was never run", async () => {
  const world = await makeWorld();
  try {
    const { app } = appFor(world);
    const body = await (await request(app, "/api/status")).json();
    assert.equal(body.store, null);
    assert.equal(body.capture.phase, "never run");
    await assertError(await request(app, "/api/search?q=anything"), 404, "no_store");
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/status?check=1 checks the store on request and names the damage", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("healthy: no check unless asked, then ok", async () => {
      assert.equal((await (await request(app, "/api/status")).json()).check, null);
      const body = await (await request(app, "/api/status?check=1")).json();
      assert.equal(body.check.ok, true);
      const page = await (await request(app, "/status")).text();
      assert.match(page, /<button type="submit">Check the store for damage<\/button>/);
      assert.match(await (await request(app, "/status?check=1")).text(), /No damage found/);
      await assertError(await request(app, "/api/status?check=maybe"), 400, "bad_request", "check");
    });
    await t.step("a zeroed page of the text index", async () => {
      zeroLeafPage(join(world.data, "history.db"), "fts_data", 0);
      const body = await (await request(app, "/api/status?check=1")).json();
      assert.equal(body.check.ok, false);
      assert.deepEqual(
        body.check.damaged.map((d: { label: string; kind: string }) => [d.label, d.kind]),
        [['the text index (table "fts")', "derived"]],
      );
      assert.match(body.check.recovery, /logbook reindex --rebuild/);
      const page = await (await request(app, "/status?check=1")).text();
      assert.match(page, /The store is damaged\./);
      assert.match(page, /the text index \(table &quot;fts&quot;\)/);
      assert.match(page, /How to recover:<\/strong> Only data derived/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("POST /api/reindex starts a capture in the background and answers 202", async (t) => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const { app, services } = appFor(world);
    await t.step("a bad body is a 400 naming the field", async () => {
      await assertError(
        await post(app, "/api/reindex", { rebuild: "yes" }),
        400,
        "bad_request",
        "rebuild",
      );
      await assertError(
        await post(app, "/api/reindex", { everything: true }),
        400,
        "bad_request",
      );
      await assertError(
        await request(app, "/api/reindex", {
          method: "POST",
          body: "{nope",
          headers: { "Content-Type": "application/json" },
        }),
        400,
        "bad_request",
        "body",
      );
    });

    await t.step("202 with the run, then the status shows it done", async () => {
      const response = await post(app, "/api/reindex", {});
      assert.equal(response.status, 202);
      assert.equal(response.headers.get("location"), "/api/status");
      const body = await response.json();
      assert.equal(body.started, true);
      assert.match(body.run.id, /^[0-9a-f-]{36}$/);
      assert.equal(body.run.state, "running");
      await services.capture.idle();
      const status = await (await request(app, "/api/status")).json();
      assert.equal(status.capture.run.id, body.run.id);
      assert.equal(status.capture.run.state, "done");
      assert.equal(status.capture.run.outcome, "captured");
      assert.ok(status.capture.run.summary.records > 0);
      assert.ok(status.store.records > 0);
      const hits = await (await request(app, "/api/search?q=marmot+keyring")).json();
      assert.equal(hits.hits.length, 2);
    });

    await t.step("while one runs: a second start returns it, and forget waits", async () => {
      const first = await (await post(app, "/api/reindex", {})).json();
      const second = await (await post(app, "/api/reindex", {})).json();
      assert.equal(second.started, false);
      assert.equal(second.run.id, first.run.id);
      await assertError(
        await post(app, "/api/forget", { ids: ["f332cca8"], dryRun: true }),
        409,
        "conflict",
      );
      await services.capture.idle();
      assert.equal(
        (await post(app, "/api/forget", { ids: ["f332cca8"], dryRun: true })).status,
        200,
      );
      const markers = await (await request(app, "/api/stage-markers?tail=200")).json();
      assert.ok(
        markers.markers.some((m: { step: string; event: string }) =>
          m.step === "dashboard.reindex" && m.event === "finish"
        ),
      );
    });

    await t.step("with capture switched off it is a 409", async () => {
      withVars(world, { LOGBOOK_INGEST: "false" });
      await assertError(await post(appFor(world).app, "/api/reindex", {}), 409, "conflict");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/stage-markers lists unclosed steps, stalls flagged, and the dashboard's own", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("a bad flag is a 400", async () => {
      await assertError(
        await request(app, "/api/stage-markers?unclosed=maybe"),
        400,
        "bad_request",
        "unclosed",
      );
      await assertError(
        await request(app, "/api/stage-markers?tail=0"),
        400,
        "bad_request",
        "tail",
      );
    });

    await t.step("requests that touch the store leave finished dashboard steps", async () => {
      await request(app, "/api/search?q=export");
      await request(app, "/api/status");
      const body = await (await request(app, "/api/stage-markers?tail=100")).json();
      const steps = body.markers.map((m: { step: string; event: string }) =>
        `${m.step} ${m.event}`
      );
      assert.ok(steps.includes("dashboard.search start"));
      assert.ok(steps.includes("dashboard.search finish"));
      assert.ok(steps.includes("dashboard.status finish"));
      const open = await (await request(app, "/api/stage-markers?unclosed=1")).json();
      assert.deepEqual(open.unclosed, []);
    });

    await t.step("a step open for 200 s shows as a stall, on the API and the page", async () => {
      const ctx = loadContext({ env: world.env });
      const writer = createStageMarkers({
        path: join(ctx.paths.logs, "stage-markers.log"),
        root: ctx.paths.root,
        now: () => Date.now() - 200_000,
        timers: { set: () => 0, clear: () => {} },
      });
      const step = writer.operation("capture").begin("capture.batch");
      try {
        const body = await (await request(app, "/api/stage-markers?unclosed=1")).json();
        assert.equal(body.unclosed.length, 1);
        assert.equal(body.unclosed[0].step, "capture.batch");
        assert.equal(body.unclosed[0].alive, true);
        assert.equal(body.unclosed[0].stalled, true);
        const page = await (await request(app, "/status")).text();
        assert.match(page, /<tr\s+class="stall"\s*>/);
        assert.match(page, /capture\.batch \(stall suspected\)/);
      } finally {
        step.finish();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("POST /api/forget removes conversations as forget does, after a dry run", async (t) => {
  const world = await capturedWorld();
  try {
    const { app, services } = appFor(world);
    await t.step("bad bodies are 400s naming the field", async () => {
      await assertError(await post(app, "/api/forget", {}), 400, "bad_request", "ids");
      await assertError(
        await post(app, "/api/forget", { before: "someday" }),
        400,
        "bad_request",
        "before",
      );
      await assertError(
        await post(app, "/api/forget", { ids: ["../../etc/passwd"] }),
        400,
        "bad_request",
        "ids.0",
      );
      await assertError(
        await post(app, "/api/forget", { ids: [PLANTED.id], dryRun: "no" }),
        400,
        "bad_request",
        "dryRun",
      );
    });

    await t.step("a dry run lists and keeps", async () => {
      const response = await post(app, "/api/forget", { ids: [PLANTED.id], dryRun: true });
      assert.equal(response.status, 200);
      const text = await response.text();
      assert.ok(!text.includes(SECRET), "the title passes the gate");
      const body = JSON.parse(text);
      assert.equal(body.dryRun, true);
      assert.deepEqual(body.conversations.map((c: { conversation: string }) => c.conversation), [
        PLANTED.id,
      ]);
      assert.equal(
        (await request(app, `/api/conversations/${encodeURIComponent(PLANTED.id)}`)).status,
        200,
      );
    });

    await t.step("then it is gone", async () => {
      const body = await (await post(app, "/api/forget", { ids: [PLANTED.id] })).json();
      assert.equal(body.dryRun, false);
      assert.equal(body.records, 3);
      await assertError(
        await request(app, `/api/conversations/${encodeURIComponent(PLANTED.id)}`),
        404,
        "not_found",
      );
      const hits = await (await request(app, `/api/search?q=${PLANTED.phrase}`)).json();
      assert.deepEqual(hits.hits, []);
      // Answered first; the text index is merged without them after, in this process.
      assert.equal(body.indexScrubbed, false);
      await services.scrub.idle();
      const store = services.openStore({ mustExist: true });
      try {
        assert.equal(scrubPendingSince(store), null, "the scrub ran to its end");
        store.db.exec("INSERT INTO fts (fts) VALUES ('integrity-check')");
      } finally {
        store.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("every request needs the token: bearer, or the cookie a ?token= visit sets", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const bare = (path: string, headers: Record<string, string> = {}) =>
      app.request(`http://${HOST}${path}`, { headers: { Host: HOST, ...headers } });

    await t.step("no token: 401 with the error shape", async () => {
      const response = await bare("/api/status");
      assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="logbook dashboard"');
      await assertError(response, 401, "unauthorized");
      const page = await bare("/status");
      assert.equal(page.status, 401);
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    });

    await t.step("a wrong bearer token, cookie or ?token= is a 401", async () => {
      await assertError(
        await bare("/api/status", { Authorization: `Bearer ${TOKEN}x` }),
        401,
        "unauthorized",
      );
      await assertError(
        await bare("/api/status", { Authorization: `Basic ${TOKEN}` }),
        401,
        "unauthorized",
      );
      await assertError(
        await bare("/api/status", { Cookie: `logbook_token=${TOKEN.slice(1)}` }),
        401,
        "unauthorized",
      );
      await assertError(await bare("/api/status?token=nope"), 401, "unauthorized");
    });

    await t.step(
      "?token= sets an HttpOnly, SameSite=Strict cookie and drops the token",
      async () => {
        const response = await bare(`/?q=export&token=${TOKEN}&limit=20`);
        assert.equal(response.status, 303);
        assert.equal(response.headers.get("location"), "/?q=export&limit=20");
        const cookie = response.headers.get("set-cookie") ?? "";
        assert.match(cookie, /^logbook_token=/);
        assert.match(cookie, /HttpOnly/);
        assert.match(cookie, /SameSite=Strict/);
        assert.match(cookie, /Path=\//);
        const pair = cookie.split(";")[0]!;

        const follow = await bare("/?q=export&limit=20", { Cookie: pair });
        assert.equal(follow.status, 200);
        const api = await bare("/api/status", { Cookie: pair });
        assert.equal(api.status, 200);
      },
    );

    await t.step("?token= never redirects to another host", async () => {
      for (const path of ["//evil.example/x", "/\\evil.example/x"] as const) {
        const response = await bare(`${path}?token=${TOKEN}`);
        assert.equal(response.status, 303);
        assert.equal(response.headers.get("location"), "/");
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a foreign Host is refused with a 403, even with the token (DNS rebinding)", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    for (const host of ["evil.example", "evil.example:8787", "127.0.0.1:9999", "localhost"]) {
      const response = await app.request(`http://${HOST}/api/status`, {
        headers: { Host: host, Authorization: `Bearer ${TOKEN}` },
      });
      const error = await assertError(response, 403, "forbidden");
      assert.ok(!error.message.includes("evil"), "the requested host is not echoed");
    }
    const local = await app.request(`http://${HOST}/api/status`, {
      headers: { Host: "LOCALHOST:8787", Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(local.status, 200);
  } finally {
    await world.cleanup();
  }
});

Deno.test("a POST from another origin is refused, even with the cookie", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const { app, services } = appFor(world);
    await assertError(
      await request(app, "/api/reindex", {
        method: "POST",
        headers: { Origin: "http://127.0.0.1:3000" },
      }),
      403,
      "forbidden",
    );
    const page = await request(app, "/status/reindex", {
      method: "POST",
      headers: { "Sec-Fetch-Site": "same-site" },
    });
    assert.equal(page.status, 403);
    assert.equal(services.capture.current, null, "nothing was started");
    const ok = await request(app, "/api/reindex", {
      method: "POST",
      headers: { Origin: `http://${HOST}` },
    });
    assert.equal(ok.status, 202);
    await services.capture.idle();
  } finally {
    await world.cleanup();
  }
});

Deno.test("errors keep one shape: unknown paths, oversized bodies, and a 500 without details", async (t) => {
  const world = await capturedWorld();
  try {
    await t.step("an unknown API path is a JSON 404, a page path an HTML one", async () => {
      const { app } = appFor(world);
      await assertError(await request(app, "/api/nothing-here"), 404, "not_found");
      const page = await request(app, "/nothing-here");
      assert.equal(page.status, 404);
      assert.match(await page.text(), /<h1>Not found<\/h1>/);
    });

    await t.step("a body over 64 KiB is a 413", async () => {
      const { app } = appFor(world);
      await assertError(
        await post(app, "/api/forget", { ids: ["x".repeat(70_000)] }),
        413,
        "too_large",
      );
    });

    await t.step(
      "a body cut off as it is read (the client gone) is a 400, nothing reported",
      async () => {
        const { app, errors } = appFor(world);
        // Sent in chunks (read whole by the body limit), and with its length (read by the route).
        for (const length of [{}, { "Content-Length": "40" }]) {
          const cut = new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"ids": ['));
              controller.error(new Deno.errors.BadResource("the connection closed"));
            },
          });
          const response = await request(app, "/api/forget", {
            method: "POST",
            body: cut,
            headers: { "Content-Type": "application/json", ...length },
          });
          const error = await assertError(response, 400, "bad_request", "body");
          assert.equal(error.message, "The request body could not be read");
        }
        assert.deepEqual(errors, [], "a client's failure is not the dashboard's to report");
      },
    );

    await t.step("an unexpected failure is a 500 that names nothing inside", async () => {
      const { app, errors } = appFor(world, {
        openStore: () => {
          throw new Error("secret internal detail at /var/private/thing");
        },
      });
      const error = await assertError(await request(app, "/api/search?q=export"), 500, "internal");
      assert.ok(!error.message.includes("secret internal detail"));
      assert.equal(errors.length, 1, "the real error goes to the dashboard's own terminal");
      const page = await request(app, `/conversations/${encodeURIComponent(FIXTURE_ID)}`);
      assert.equal(page.status, 500);
      const html = await page.text();
      assert.ok(!html.includes("secret internal detail"));
      assert.ok(!html.includes("    at "), "no stack trace");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("every response carries the security headers, errors included", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const responses = [
      await request(app, "/"),
      await request(app, "/api/status"),
      await request(app, "/api/nothing"),
      await app.request(`http://${HOST}/api/status`, { headers: { Host: HOST } }),
      await app.request(`http://${HOST}/`, { headers: { Host: "evil.example" } }),
    ];
    for (const response of responses) {
      const csp = response.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      assert.equal(response.headers.get("referrer-policy"), "no-referrer");
      assert.equal(response.headers.get("x-content-type-options"), "nosniff");
      assert.equal(response.headers.get("cache-control"), "no-store");
      await response.body?.cancel();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a planted secret never leaves the dashboard: search, conversation and forget show it redacted", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("search API", async () => {
      const text = await (await request(app, `/api/search?q=${PLANTED.phrase}`)).text();
      assert.ok(!text.includes(SECRET));
      assert.ok(text.includes("[REDACTED:openai-key]"));
      assert.equal(JSON.parse(text).hits.length, 2);
    });
    await t.step("conversation API: title, text and raw bytes", async () => {
      const text = await (await request(
        app,
        `/api/conversations/${encodeURIComponent(PLANTED.id)}`,
      )).text();
      assert.ok(!text.includes(SECRET));
      const body = JSON.parse(text);
      assert.equal(body.conversation.title, `${PLANTED.phrase} rotation [REDACTED:openai-key]`);
      for (const record of body.records) {
        const raw = Buffer.from(record.raw, "base64").toString("utf8");
        assert.ok(!raw.includes(SECRET), `record ${record.id} raw`);
        assert.ok(raw.includes("[REDACTED:openai-key]"));
        assert.equal(record.rawRedacted, true);
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the dashboard names a damaged text index where its search and status meet it", async (t) => {
  const { world, word } = await misplacedIndexWorld();
  try {
    const { app } = appFor(world);
    await t.step("GET /api/search: the damage and how to recover, not an empty page", async () => {
      const error = await assertError(await request(app, `/api/search?q=${word}`), 500, "internal");
      assert.match(error.message, /is damaged in the text index \(table "fts"\): row not in/);
      assert.match(error.message, /run "logbook reindex --rebuild"/);
    });
    await t.step("the search page, its hits and its conversations", async () => {
      for (const group of ["", "&group=1"]) {
        const response = await request(app, `/?q=${word}${group}`);
        const page = await response.text();
        assert.equal(response.status, 500, group);
        assert.match(page, /is damaged in the text index \(table &quot;fts&quot;\): row not in/);
        assert.match(page, /run &quot;logbook reindex --rebuild&quot;/);
      }
    });
    await t.step("GET /api/status: no check asked, the quick one names it", async () => {
      const body = await (await request(app, "/api/status")).json();
      assert.equal(body.check.ok, false);
      assert.equal(body.check.ran, "a quick check of the text index");
      assert.match(body.check.recovery, /logbook reindex --rebuild/);
    });
  } finally {
    await world.cleanup();
  }
});
