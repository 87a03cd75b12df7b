// The permissions a spec declares, written as the flags Deno takes, and the union the `logbook`
// dispatcher runs with.

import assert from "node:assert/strict";
import { permissionFlags, runFlags, unionPermissions, V8_FLAGS } from "../../lib/run_flags.ts";

Deno.test("permissionFlags() writes each kind once, short where Deno has a short flag", () => {
  assert.deepEqual(permissionFlags({}), []);
  assert.deepEqual(
    permissionFlags({ sys: ["hostname"], run: ["git"], env: true, read: true, write: true }),
    ["-R", "-W", "-E", "--allow-run=git", "--allow-sys=hostname"],
  );
  assert.deepEqual(
    permissionFlags({ read: ["/data"], net: ["127.0.0.1", "db.internal"], run: true }),
    ["--allow-read=/data", "--allow-net=127.0.0.1,db.internal", "--allow-run"],
  );
  assert.deepEqual(runFlags({ env: true }), [V8_FLAGS, "-E"]);
});

Deno.test("unionPermissions() grants a kind whole when one grants it whole, else joins the lists", () => {
  assert.deepEqual(
    unionPermissions([
      { read: true, net: ["127.0.0.1"], run: ["git"] },
      { read: true, net: true, sys: ["hostname"] },
      { run: ["git", "less"] },
    ]),
    { read: true, net: true, run: ["git", "less"], sys: ["hostname"] },
  );
  assert.deepEqual(unionPermissions([]), {});
});
