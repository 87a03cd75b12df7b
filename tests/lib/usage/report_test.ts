// Usage reports group the store's model calls by local day, week, month, session (a subagent's
// calls in its session) or project, price them (recorded cost first, then list prices, then
// config's), and name what could not be priced.

import assert from "node:assert/strict";
import { join } from "node:path";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";
import { PriceBook } from "../../../lib/usage/prices.ts";
import { PERIODS, type UsageQuery, usageReport } from "../../../lib/usage/report.ts";

const SESSION = "7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f";

/** One reply's call: its time (ISO), model and usage, and the cost Claude Code wrote, if any. */
interface Call {
  timestamp: string;
  model: string;
  usage: [input: number, output: number, cacheWrite: number, cacheRead: number];
  cost?: number;
}

/** A Claude Code session with one reply per call. */
async function placeCalls(world: World, calls: Call[]) {
  const dir = join(world.claude, "projects", "-home-u-app");
  await Deno.mkdir(dir, { recursive: true });
  const lines = calls.map(({ timestamp, model, usage, cost }, i) =>
    JSON.stringify({
      type: "assistant",
      uuid: `a${i}`,
      parentUuid: null,
      sessionId: SESSION,
      cwd: "/home/u/app",
      timestamp,
      requestId: `req_${i}`,
      ...(cost === undefined ? {} : { costUSD: cost }),
      message: {
        id: `msg_${i}`,
        role: "assistant",
        model,
        content: [{ type: "text", text: `Reply ${i}.` }],
        usage: {
          input_tokens: usage[0],
          output_tokens: usage[1],
          cache_creation_input_tokens: usage[2],
          cache_read_input_tokens: usage[3],
        },
      },
    })
  );
  await Deno.writeTextFile(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
}

/** A Claude Code session with replies at `times` (ISO), each a call of `model`. */
async function place(world: World, times: string[], model: string, cost?: number) {
  await placeCalls(
    world,
    times.map((timestamp) => ({
      timestamp,
      model,
      usage: [1_000, 100, 10_000, 100_000],
      ...(cost === undefined ? {} : { cost }),
    })),
  );
}

Deno.test("calls are counted on the local day of the zone asked for", async () => {
  const world = await makeWorld();
  try {
    // 23:30 UTC on the 1st is the 2nd in Berlin; 00:30 UTC on the 3rd is the 3rd in both.
    await place(world, [
      "2026-11-01T23:30:00.000Z",
      "2026-11-02T12:00:00.000Z",
      "2026-11-03T00:30:00.000Z",
    ], "claude-sonnet-4-5-20250929");
    await captureWorld(world);
    withStore(world, (store) => {
      const days = (timeZone: string) =>
        usageReport(store, { period: "daily", timeZone }).lines.map((l) => [l.key, l.calls]);
      assert.deepEqual(days("UTC"), [["2026-11-01", 1], ["2026-11-02", 1], ["2026-11-03", 1]]);
      assert.deepEqual(days("Europe/Berlin"), [["2026-11-02", 2], ["2026-11-03", 1]]);
      const weeks = usageReport(store, { period: "weekly", timeZone: "UTC" }).lines;
      assert.deepEqual(weeks.map((l) => [l.key, l.calls]), [["2026-10-26", 1], ["2026-11-02", 2]]);
      const months = usageReport(store, { period: "monthly", timeZone: "UTC" });
      assert.deepEqual(months.lines.map((l) => l.key), ["2026-11"]);
      // Sonnet 4.5: 1,000 × $3 + 100 × $15 + 10,000 × $3.75 + 100,000 × $0.30, per million.
      assert.equal(months.totals.cost!.toFixed(6), (3 * 0.0720).toFixed(6));
      assert.deepEqual(months.unpriced, []);
      const since = usageReport(store, {
        period: "daily",
        timeZone: "UTC",
        since: Date.parse("2026-11-02T00:00:00Z"),
      });
      assert.equal(since.totals.calls, 2);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a model with no price shows its tokens, counts no cost and is named; config prices it", async () => {
  const world = await makeWorld();
  try {
    await place(world, ["2026-11-02T12:00:00.000Z"], "claude-opus-9-9");
    await captureWorld(world);
    withStore(world, (store) => {
      const plain = usageReport(store, { period: "daily", timeZone: "UTC", breakdown: true });
      assert.equal(plain.totals.cost, null);
      assert.equal(plain.totals.total, 111_100);
      assert.deepEqual(plain.unpriced, [{ model: "claude-opus-9-9", calls: 1 }]);
      assert.deepEqual(plain.lines[0]!.breakdown!.map((b) => b.model), ["claude-opus-9-9"]);
      const priced = usageReport(
        store,
        { period: "daily", timeZone: "UTC" },
        new PriceBook({ "claude-opus-9-9": { input: 1, output: 10 } }),
      );
      assert.equal(priced.totals.cost, (1_000 * 1 + 100 * 10) / 1e6);
      assert.deepEqual(priced.unpriced, []);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a cost the agent recorded is used as it is", async () => {
  const world = await makeWorld();
  try {
    await place(world, ["2026-11-02T12:00:00.000Z"], "claude-opus-9-9", 0.5);
    await captureWorld(world);
    withStore(world, (store) => {
      const report = usageReport(store, { period: "session", timeZone: "UTC" });
      assert.equal(report.totals.cost, 0.5);
      assert.deepEqual(report.lines.map((l) => l.key), [`claude:${SESSION}`]);
      const project = usageReport(store, { period: "project", timeZone: "UTC" });
      assert.equal(project.lines.length, 1);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("list prices match a model's dated names only, and the long-context tier applies", () => {
  const book = new PriceBook();
  assert.ok(book.of("claude-sonnet-4-5-20250929"));
  assert.ok(book.of("anthropic/claude-sonnet-4-5"));
  assert.equal(book.of("claude-sonnet-4-5-mystery"), null);
  assert.equal(book.of("claude-opus-4-99"), null, "not its elder's price");
  assert.equal(book.of(null), null);
  const small = { input: 100_000, output: 0, cacheWrite: 0, cacheRead: 0 };
  const large = { input: 300_000, output: 0, cacheWrite: 0, cacheRead: 0 };
  assert.equal(book.cost("claude-sonnet-4-5", small), 0.3);
  assert.equal(book.cost("claude-sonnet-4-5", large), 1.8, "$6 a million past 200,000");
});

Deno.test("blocks are five hours from the hour of their first call; the running one says its pace", async () => {
  const world = await makeWorld();
  try {
    await place(world, [
      "2026-11-30T10:15:00.000Z",
      "2026-11-30T12:00:00.000Z",
      // Past 15:00, the first block's end: a new block from 15:00.
      "2026-11-30T15:30:00.000Z",
    ], "claude-sonnet-4-5-20250929");
    await captureWorld(world);
    withStore(world, (store) => {
      const now = Date.parse("2026-11-30T16:00:00.000Z");
      const report = usageReport(store, { period: "blocks", timeZone: "UTC", now });
      assert.deepEqual(report.lines.map((l) => [l.key, l.calls]), [
        ["2026-11-30 10:00", 2],
        ["2026-11-30 15:00", 1],
      ]);
      assert.equal(report.active?.key, "2026-11-30 15:00");
      assert.equal(report.active?.minutesLeft, 240);
      // One call of 111,100 tokens over the 30 minutes since the block's first call.
      assert.equal(Math.round(report.active!.tokensPerMinute), Math.round(111_100 / 30));
      assert.ok(report.active!.projectedCost! > report.lines[1]!.cost!);
      const later = usageReport(store, {
        period: "blocks",
        timeZone: "UTC",
        now: Date.parse("2026-11-30T20:00:00.000Z"),
      });
      assert.equal(later.active, null, "ended at 20:00");
    });
  } finally {
    await world.cleanup();
  }
});

/** Equal, with costs equal to a billionth (sums are priced per group, in another order). */
function assertSameReport(actual: unknown, expected: unknown, path = ""): void {
  if (typeof actual === "number" && typeof expected === "number") {
    assert.ok(
      Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
      `${path}: ${actual} against ${expected}`,
    );
  } else if (actual && expected && typeof actual === "object" && typeof expected === "object") {
    const keys = new Set([...Object.keys(actual), ...Object.keys(expected)]);
    for (const key of keys) {
      assertSameReport(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
    }
  } else assert.equal(actual, expected, path);
}

Deno.test("the quarter-hour sums give the report the calls give, in zones with DST and 15-minute offsets", async () => {
  const world = await makeWorld({ fixtures: ["codex", "opencode"] });
  try {
    // Around New York's and Lord Howe's changes, Kathmandu's midnight (18:15 UTC), a call of
    // over 200,000 input tokens beside small ones, and a model without a price.
    const times = [
      "2026-03-08T06:59:59.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-04-04T14:59:00.000Z",
      "2026-04-04T15:01:00.000Z",
      "2026-11-01T05:50:00.000Z",
      "2026-11-01T06:10:00.000Z",
      "2026-11-02T18:14:59.999Z",
      "2026-11-02T18:15:00.000Z",
      "2026-11-02T18:20:00.000Z",
      "2026-11-02T23:59:00.000Z",
      "2026-11-03T04:30:00.000Z",
    ];
    await placeCalls(
      world,
      times.map((timestamp, i) => ({
        timestamp,
        model: i % 4 === 3 ? "claude-opus-9-9" : "claude-sonnet-4-5-20250929",
        usage: [i === 7 ? 250_000 : 1_000 * (i + 1), 100 + i, 1_000, 10_000 * i],
      })),
    );
    await captureWorld(world);
    withStore(world, (store) => {
      const queries: UsageQuery[] = [];
      for (const timeZone of ["UTC", "Asia/Kathmandu", "America/New_York", "Australia/Lord_Howe"]) {
        for (const period of PERIODS) {
          for (
            const extra of [
              {},
              { breakdown: true },
              { breakdown: true, by: "agent" as const },
              {
                since: Date.parse("2026-11-01T06:05:00.123Z"),
                until: Date.parse("2026-11-02T18:17:00.000Z"),
              },
              { agent: "claude", model: "claude-sonnet-4-5-20250929" },
              { project: "/home/u/app" },
              { day: "2026-11-02" },
            ]
          ) {
            queries.push({ period, timeZone, now: Date.parse("2026-11-03T06:00:00Z"), ...extra });
          }
        }
      }
      const fromSums = queries.map((q) => usageReport(store, q));
      // Each call on its local day, as Intl tells it one at a time.
      for (const timeZone of ["UTC", "Asia/Kathmandu", "America/New_York", "Australia/Lord_Howe"]) {
        const format = new Intl.DateTimeFormat("en-CA", { timeZone });
        const expected = new Map<string, number>();
        for (const t of times) {
          const day = format.format(Date.parse(t));
          expected.set(day, (expected.get(day) ?? 0) + 1);
        }
        const daily = usageReport(store, { period: "daily", timeZone, agent: "claude" });
        assert.deepEqual(daily.lines.map((l) => [l.key, l.calls]), [...expected], timeZone);
      }
      assert.ok(fromSums.some((r) => r.lines.length > 5));
      // The same store read from its calls: as while the sums are being filled.
      store.db.exec("INSERT INTO usage_quarters_fill (after) VALUES (0)");
      queries.forEach((q, i) =>
        assertSameReport(fromSums[i], usageReport(store, q), JSON.stringify(q))
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a report reads the hourly or quarter-hour sums, not every call", async () => {
  const world = await makeWorld();
  try {
    await place(world, ["2026-11-02T12:00:00.000Z"], "claude-sonnet-4-5");
    await captureWorld(world);
    withStore(world, (store) => {
      store.db.exec("UPDATE usage_hours SET input = 7, calls = 5");
      store.db.exec("UPDATE usage_quarters SET input = 8, calls = 6");
      const report = (timeZone: string) => {
        const { totals } = usageReport(store, { period: "daily", timeZone });
        return [totals.input, totals.calls];
      };
      assert.deepEqual(report("UTC"), [7, 5], "by the hour where hours are whole local ones");
      assert.deepEqual(report("Asia/Kathmandu"), [8, 6], "by the quarter hour elsewhere");
    });
  } finally {
    await world.cleanup();
  }
});
