// `logbook usage` as a user runs it: a table in 80 columns with a total row and what was not
// priced, JSON with the same numbers, filters, and clear errors for what it cannot answer.

import assert from "node:assert/strict";
import { captureWorld, makeWorld, runCli } from "../_helpers.ts";

Deno.test("usage prints each day's tokens and cost in 80 columns, and the same as JSON", async () => {
  const world = await makeWorld({ fixtures: ["claude", "codex", "opencode"] });
  try {
    await captureWorld(world);
    const table = await runCli("usage", ["--tz", "UTC"], world.vars);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.split("\n");
    assert.match(lines[0]!, /^Date +Input +Output +Cache write +Cache read +Total +Cost$/);
    for (const line of lines) assert.ok(line.length <= 80, `over 80 columns: ${line}`);
    const total = lines.find((l) => l.startsWith("Total"))!;
    assert.ok(total, "a total row");
    assert.match(table.stdout, /Not priced \(cost counts the rest; add them to config "prices"\)/);
    assert.match(table.stdout, /Dates in UTC; list prices as of \d{4}-\d{2}-\d{2}/);

    const json = await runCli("usage", ["--tz", "UTC", "--json"], world.vars);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.period, "daily");
    const sum = report.lines.reduce((n: number, l: { total: number }) => n + l.total, 0);
    assert.equal(sum, report.totals.total);
    assert.ok(total.includes(report.totals.total.toLocaleString("en-US")));

    const codex = JSON.parse(
      (await runCli("usage", ["monthly", "--agent", "codex", "--json", "--tz", "UTC"], world.vars))
        .stdout,
    );
    assert.ok(codex.totals.calls > 0 && codex.totals.calls < report.totals.calls);
    for (const line of codex.lines) assert.match(line.key, /^\d{4}-\d{2}$/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("usage says why an answer is empty, and refuses what it cannot read", async () => {
  const world = await makeWorld();
  try {
    await captureWorld(world);
    const empty = await runCli("usage", [], world.vars);
    assert.equal(empty.code, 1);
    assert.equal(empty.stderr, "No model calls are captured yet: run logbook reindex\n");
    const filtered = await runCli("usage", ["--model", "nothing-like-it"], world.vars);
    assert.equal(filtered.code, 1);
    assert.equal(filtered.stderr, "No model calls match these filters; try without them\n");
    const period = await runCli("usage", ["yearly"], world.vars);
    assert.equal(period.code, 2);
    assert.match(
      period.stderr,
      /Expected a period, daily, weekly, monthly, session, project or blocks, got "yearly"/,
    );
    const zone = await runCli("usage", ["--tz", "Mars/Olympus"], world.vars);
    assert.equal(zone.code, 2);
    assert.match(zone.stderr, /"--tz" expects a time zone such as UTC, got "Mars\/Olympus"/);
  } finally {
    await world.cleanup();
  }
});
