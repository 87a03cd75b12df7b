// What each machine of the bench's team part pushes (bench/_team.ts): all of a small store's
// projects, and at most its share of a large one's, so a 10 GB run pushes the 5 GB.

import assert from "node:assert/strict";
import { machineShares, outOfBudget } from "../../bench/_team.ts";

const projects = (...sizes: number[]) => sizes.map((bytes, i) => ({ root: `/p${i}`, bytes }));

Deno.test("machineShares() gives every machine all of a store within the cap", () => {
  const shares = machineShares(projects(300, 200, 100), 5, 1000);
  assert.deepEqual(shares, Array(5).fill(["/p0", "/p1", "/p2"]));
});

Deno.test("machineShares() gives each machine the next projects within the cap, in turn", () => {
  // Ten projects of 400: two a machine, the last machine taking the first two again.
  const shares = machineShares(projects(...Array(10).fill(400)), 6, 1000);
  assert.deepEqual(shares, [
    ["/p0", "/p1"],
    ["/p2", "/p3"],
    ["/p4", "/p5"],
    ["/p6", "/p7"],
    ["/p8", "/p9"],
    ["/p0", "/p1"],
  ]);
  assert.deepEqual(machineShares(projects(1500, 10), 2, 1000), [["/p0"], ["/p1"]], "one over");
});

Deno.test("outOfBudget() tells a search stopped by its budget from a failure", () => {
  const run = (code: number, stderr: string) => ({ code, stderr });
  assert.ok(outOfBudget(run(2, "error: The search was stopped after 1200 ms: it matches too")));
  assert.ok(outOfBudget(run(2, "error: The search was stopped: 642 ms of its 1200 ms passed")));
  assert.ok(!outOfBudget(run(2, 'error: Option "--team" cannot be used with "--exact"')));
  assert.ok(!outOfBudget(run(1, "No matches in the team database")));
});
