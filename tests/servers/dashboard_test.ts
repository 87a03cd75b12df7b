// The served dashboard: bound to 127.0.0.1 only, holding `run/dashboard.lock` while it runs, and
// the `dashboard` command as a user runs it (help, refusals, the URL it prints, SIGTERM).

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadContext } from "../../lib/context.ts";
import { isLockHeld, readLock } from "../../lib/lock.ts";
import { stageMarkersFromEnv } from "../../lib/stage_markers.ts";
import {
  DashboardRunningError,
  isLoopback,
  serveDashboard,
  servedHosts,
} from "../../servers/dashboard.ts";
import { childBaseEnv, ROOT, taskFlags } from "../_helpers.ts";
import { capturedWorld, TOKEN } from "./_dashboard.ts";

/** Other local addresses this machine has: 127.0.0.2 on Linux, and its non-loopback IPv4s. */
function otherLocalAddresses(): string[] {
  const addresses = Deno.build.os === "linux" ? ["127.0.0.2"] : [];
  for (const nic of Deno.networkInterfaces()) {
    if (nic.family === "IPv4" && !isLoopback(nic.address)) addresses.push(nic.address);
  }
  return addresses;
}

async function refused(hostname: string, port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname, port });
    conn.close();
    return false;
  } catch (err) {
    if (err instanceof Deno.errors.ConnectionRefused) return true;
    throw err;
  }
}

Deno.test("the dashboard binds 127.0.0.1 only and holds run/dashboard.lock until shut down", async (t) => {
  const world = await capturedWorld();
  const ctx = loadContext({ env: world.env });
  const dashboard = serveDashboard({
    ctx,
    hostname: "127.0.0.1",
    port: 0,
    token: TOKEN,
    markers: stageMarkersFromEnv(world.env),
  });
  const lockPath = join(ctx.paths.run, "dashboard.lock");
  try {
    await t.step("it answers on 127.0.0.1 with the token", async () => {
      assert.ok(dashboard.port > 0);
      assert.equal(dashboard.url, `http://127.0.0.1:${dashboard.port}/`);
      const response = await fetch(`${dashboard.url}api/status`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(response.status, 200);
      assert.ok((await response.json()).store.records > 0);
    });

    await t.step("no other address of this machine reaches it", async () => {
      const others = otherLocalAddresses();
      assert.ok(others.length > 0, "an address other than 127.0.0.1 to try");
      for (const address of others) {
        assert.ok(await refused(address, dashboard.port), `${address}:${dashboard.port}`);
      }
    });

    await t.step("the lock names this process, and a second dashboard is refused", () => {
      assert.ok(isLockHeld(lockPath));
      assert.equal(readLock(lockPath)?.pid, Deno.pid);
      assert.throws(
        () => serveDashboard({ ctx, hostname: "127.0.0.1", port: 0, token: TOKEN }),
        (err: unknown) => err instanceof DashboardRunningError && /pid \d+/.test(err.message),
      );
    });
  } finally {
    await dashboard.shutdown();
  }
  try {
    assert.equal(isLockHeld(lockPath), false, "released on shutdown");
    assert.ok(await refused("127.0.0.1", dashboard.port), "no longer listening");
  } finally {
    await world.cleanup();
  }
});

Deno.test("servedHosts() lists the loopback names of the bound port", () => {
  assert.deepEqual(servedHosts("127.0.0.1", 8787), ["127.0.0.1:8787", "localhost:8787"]);
  assert.deepEqual(servedHosts("::1", 9000), ["[::1]:9000", "127.0.0.1:9000", "localhost:9000"]);
  assert.deepEqual(servedHosts("192.168.1.5", 80), ["192.168.1.5:80"]);
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
    assert.equal(isLoopback(host), true, host);
  }
  for (const host of ["0.0.0.0", "192.168.1.5", "::", "example.com", "128.0.0.1"]) {
    assert.equal(isLoopback(host), false, host);
  }
});

Deno.test("dashboard prints its URL with the token, serves it, and stops cleanly on SIGTERM", async () => {
  const world = await capturedWorld();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("dashboard"),
      "--quiet",
      join(ROOT, "commands", "dashboard.ts"),
      "--port",
      "0",
    ],
    env: { ...childBaseEnv(), ...world.vars, LOGBOOK_DASHBOARD_TOKEN: TOKEN },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stopped = false;
  try {
    let printed = "";
    while (!printed.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      printed += value;
    }
    const match = /^logbook dashboard: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+))\n/.exec(
      printed,
    );
    assert.ok(match, `the URL line: ${JSON.stringify(printed)}`);
    assert.equal(decodeURIComponent(match[3]!), TOKEN);

    const first = await fetch(match[1]!, { redirect: "manual" });
    await first.body?.cancel();
    assert.equal(first.status, 303);
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    assert.match(cookie, new RegExp(`^logbook_token_${match[2]}=`));
    const page = await fetch(`http://127.0.0.1:${match[2]}/status`, {
      headers: { Cookie: cookie },
    });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<h1>Status<\/h1>/);

    const lock = join(world.data, "run", "dashboard.lock");
    assert.equal(readLock(lock)?.pid, child.pid);
    child.kill("SIGTERM");
    stopped = true;
    const status = await child.status;
    assert.equal(status.code, 0);
    assert.match(await stderr, /Dashboard stopped/);
    assert.equal(isLockHeld(lock), false);
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    await world.cleanup();
  }
});
