// The dashboard's searches are bounded as the command's are (400s naming "q"), and run on
// workers: the event loop answers while one is held, and one held past its budget is answered
// as stopped without waiting for its worker.

import assert from "node:assert/strict";
import { appFor, assertError, capturedWorld, PLANTED, request, withVars } from "./_dashboard.ts";

/** A gate for held workers: `open()` lets every held job go; `held()` counts jobs waiting. */
function gate() {
  const buffer = new SharedArrayBuffer(8);
  const slots = new Int32Array(buffer);
  return {
    start: () => {
      const worker = new Worker(
        new URL("../lib/store/_held_search_worker.ts", import.meta.url).href,
        {
          type: "module",
        },
      );
      worker.postMessage({ hold: buffer });
      return worker;
    },
    held: () => Atomics.load(slots, 1),
    open: () => {
      Atomics.store(slots, 0, 1);
      Atomics.notify(slots, 0);
    },
    /** Resolves once `n` jobs have reached the gate (in a worker: never on the event loop). */
    async reached(n: number) {
      for (let waited = 0; Atomics.load(slots, 1) < n; waited += 5) {
        if (waited > 30_000) throw new Error(`${n} searches never reached a search worker`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

/** A promise and whether it has settled yet. */
function tracked<T>(promise: Promise<T>) {
  const state = { settled: false, promise };
  promise.finally(() => (state.settled = true)).catch(() => {});
  return state;
}

Deno.test("GET /api/search answers a query over a bound with a 400 naming q", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const cases: [string, RegExp][] = [
      ["a*", /the prefix "a\*" is too short: a prefix needs at least 3 characters/],
      [[..."abcdefghijklmnopqrstuvwxyz".repeat(6)].map((c) => `${c}*`).join(" OR "), /"a\*"/],
      [Array.from({ length: 33 }, (_, i) => `w${i}`).join(" "), /has 33 words: at most 32/],
      [Array.from({ length: 9 }, () => "wal*").join(" OR "), /has 9 prefixes: at most 8/],
      ["NEAR(walrus sprocket, 100000)", /NEAR distance 100000 is over the limit of 1000/],
      ["x".repeat(4097), /the query is over 4096 characters/],
    ];
    for (const [q, message] of cases) {
      await t.step(q.slice(0, 40), async () => {
        const path = `/api/search?q=${encodeURIComponent(q)}`;
        const error = await assertError(await request(app, path), 400, "bad_request", "q");
        assert.match(error.message, /^Invalid value for "q": /);
        assert.match(error.message, message);
      });
    }
    await t.step("the page shows the message beside the form", async () => {
      const response = await request(app, "/?q=a*");
      assert.equal(response.status, 400);
      const html = await response.text();
      assert.match(html, /the prefix &quot;a\*&quot; is too short|the prefix "a\*" is too short/);
      assert.match(html, /<form class="search"/);
    });
    await t.step("a query within the bounds answers", async () => {
      const response = await request(app, `/api/search?q=${encodeURIComponent("walrus spro*")}`);
      assert.equal(response.status, 200);
      assert.equal((await response.json()).hits.length, 2);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/search stopped before any hit is a 400 naming q, the literal scan too", async () => {
  const world = await capturedWorld({ vars: { LOGBOOK_SEARCH_BUDGET_MS: "0" } });
  try {
    const { app } = appFor(world);
    const fts = await request(app, `/api/search?q=${PLANTED.phrase}`);
    const error = await assertError(fts, 400, "bad_request", "q");
    assert.match(error.message, /^Invalid value for "q": the search was stopped after 0 ms: /);
    const literal = await request(app, `/api/search?q=${encodeURIComponent('walrus "x')}`);
    const scan = await assertError(literal, 400, "bad_request", "q");
    assert.match(scan.message, /^Invalid value for "q": the literal substring scan was stopped/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("GET /api/search past its budget answers with the hits it had and says what they are", async (t) => {
  const world = await capturedWorld();
  try {
    const { app, services } = appFor(world, {
      // The search begins as the request arrives; every later read of the worker's clock is
      // 1050 ms after: past the ranking's share of the 1200 ms budget, within the fallback's.
      startSearchWorker: () => {
        const worker = new Worker(
          new URL("../lib/store/_late_search_worker.ts", import.meta.url).href,
          { type: "module" },
        );
        worker.postMessage({ lateMs: 1050 });
        return worker;
      },
    });
    await t.step("the API: the hits, stopped, and the note", async () => {
      const response = await request(app, `/api/search?q=${PLANTED.phrase}`);
      assert.equal(response.status, 200);
      const page = await response.json();
      assert.equal(page.stopped, true);
      assert.equal(page.hits.length, 2);
      assert.match(
        page.stopNote,
        /^The search was stopped after 1200 ms: it matches too much to rank in time, so these 2 hits are from the most recently captured matches, newest first, not ranked/,
      );
    });
    await t.step("the page: the note above the hits", async () => {
      const response = await request(app, `/?q=${PLANTED.phrase}`);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, /<p class="notice">The search was stopped after 1200 ms: .*not ranked/);
      assert.equal(html.match(/<li class="hit">/g)?.length, 2);
    });
    services.searches.close();
  } finally {
    await world.cleanup();
  }
});

Deno.test("a search held in its worker leaves the dashboard answering other requests", async () => {
  // A budget far beyond the test, so that only the held worker keeps the search waiting.
  const world = await capturedWorld({ vars: { LOGBOOK_SEARCH_BUDGET_MS: "600000" } });
  const held = gate();
  try {
    const { app, services } = appFor(world, { startSearchWorker: held.start });
    const search = tracked(request(app, `/api/search?q=${PLANTED.phrase}`));
    await held.reached(1);
    const status = await request(app, "/api/status");
    assert.equal(status.status, 200);
    assert.notEqual((await status.json()).store, null);
    const page = await request(app, "/sessions");
    assert.equal(page.status, 200);
    await page.body?.cancel();
    assert.equal(search.settled, false, "the search is still held in its worker");
    held.open();
    const response = await search.promise;
    assert.equal(response.status, 200);
    assert.equal((await response.json()).hits.length, 2);
    services.searches.close();
  } finally {
    held.open();
    await world.cleanup();
  }
});

Deno.test("a search held past its budget is answered as stopped, and its worker replaced", async () => {
  const world = await capturedWorld();
  const held = gate();
  try {
    withVars(world, { LOGBOOK_SEARCH_BUDGET_MS: "200" });
    let started = 0;
    const { app, services } = appFor(world, {
      startSearchWorker: () => {
        started++;
        return held.start();
      },
    });
    const response = await request(app, `/api/search?q=${PLANTED.phrase}`);
    const error = await assertError(response, 400, "bad_request", "q");
    assert.match(error.message, /^Invalid value for "q": the search was stopped after 200 ms/);
    assert.equal(held.held(), 1, "answered while the worker still held the search");
    // The next search gets a fresh worker, given time enough however busy the machine is.
    held.open();
    services.searchBudgetMs = 600_000;
    const again = await request(app, `/api/search?q=${PLANTED.phrase}`);
    assert.equal(again.status, 200);
    assert.equal((await again.json()).hits.length, 2);
    assert.equal(started, 2, "the held worker was replaced");
    services.searches.close();
  } finally {
    held.open();
    await world.cleanup();
  }
});

Deno.test("where no search worker can start, searches run inline and still answer", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world, {
      startSearchWorker: () => {
        throw new Error("no workers here");
      },
    });
    for (let i = 0; i < 2; i++) {
      const response = await request(app, `/api/search?q=${PLANTED.phrase}`);
      assert.equal(response.status, 200);
      assert.equal((await response.json()).hits.length, 2);
    }
  } finally {
    await world.cleanup();
  }
});
