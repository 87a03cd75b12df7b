// The usage page: the last 30 days as an SVG chart with the same numbers in a table, by agent or
// by model, the cost per project, the running block, and a day's sessions behind its link.

import assert from "node:assert/strict";
import { appFor, capturedWorld, request } from "../_dashboard.ts";
import { withStore } from "../../_helpers.ts";
import { usageReport } from "../../../lib/usage/report.ts";

Deno.test("the usage page draws the last 30 days with their numbers beside, and lists a day's sessions", async () => {
  const world = await capturedWorld();
  try {
    // The fixtures' last calls are on 2026-11-20 and 21: the 30 days up to 2026-12-03 hold them.
    const now = Date.parse("2026-12-03T12:00:00Z");
    const { app } = appFor(world, { now: () => now });
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const expected = usageReportOf(world, now, timeZone);
    const page = await (await request(app, "/usage")).text();
    assert.match(page, /<svg role="group" aria-labelledby="chart-title"/);
    assert.match(page, /<title id="chart-title">Daily cost \(USD\) by agent, /);
    // Every day of the report is a bar (a link with its title) and a row of the table.
    for (const line of expected.lines) {
      assert.ok(page.includes(`<a href="/usage?day=${line.key}"><title>${line.key}:`), line.key);
      assert.ok(page.includes(`<th scope="row"><a href="/usage?day=${line.key}">`), line.key);
    }
    assert.match(page, /<h2>By project<\/h2>/);
    assert.match(page, /No five-hour block is running\./);
    assert.match(page, /aria-current="page"[^>]*>Usage<|href="\/usage"[^>]*aria-current="page"/);

    const byModel = await (await request(app, "/usage?by=model")).text();
    assert.match(byModel, /Daily cost \(USD\) by model, /);

    const day = expected.lines.at(-1)!.key;
    const sessions = await (await request(app, `/usage?day=${day}`)).text();
    assert.match(sessions, new RegExp(`<h2 id="day">Sessions on ${day}</h2>`));
    assert.match(sessions, /(claude|codex|opencode):/);
  } finally {
    await world.cleanup();
  }
});

/** What the page's chart covers: the daily report of the 30 days before `now`. */
function usageReportOf(
  world: Awaited<ReturnType<typeof capturedWorld>>,
  now: number,
  timeZone: string,
) {
  return withStore(
    world,
    (store) => usageReport(store, { period: "daily", timeZone, since: now - 30 * 86_400_000 }),
  );
}
