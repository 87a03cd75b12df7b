// `deno task start` as a new user runs it: capture, then the dashboard on the store, its URL with
// the token on stdout, served until SIGTERM; on a machine without histories, the demo's store.

import assert from "node:assert/strict";
import { join } from "node:path";
import { isLockHeld, readLock } from "../../lib/lock.ts";
import { childBaseEnv, makeWorld, removeDir, ROOT, taskFlags, type World } from "../_helpers.ts";
import { ctrlCTwice } from "./_ctrl_c_twice.ts";

/** How `deno task start` runs it. */
const START_FLAGS = await taskFlags("start");
const URL_LINE = /^logbook dashboard: (http:\/\/127\.0\.0\.1:(\d+)\/)\?token=(\S+)$/m;

/** `start` with `args` as `deno task start` runs it, in `world`. */
function spawnStart(world: World, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...START_FLAGS,
      "--quiet",
      join(ROOT, "commands", "start.ts"),
      ...args,
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Reads stdout until the dashboard's URL line; throws with what was printed if it ends first. */
async function untilUrl(
  reader: ReadableStreamDefaultReader<string>,
  stderr: Promise<string>,
): Promise<{ printed: string; url: string; port: string; token: string }> {
  let printed = "";
  while (true) {
    const match = URL_LINE.exec(printed);
    if (match) {
      return { printed, url: match[1]!, port: match[2]!, token: decodeURIComponent(match[3]!) };
    }
    const { value, done } = await reader.read();
    if (done) {
      assert.fail(`start ended before printing its URL:\n${printed}\n${await stderr}`);
    }
    printed += value;
  }
}

/** Trades the URL's token for the cookie, as a browser's first visit does. */
async function cookieFor(url: string, token: string): Promise<string> {
  const first = await fetch(`${url}?token=${encodeURIComponent(token)}`, { redirect: "manual" });
  await first.body?.cancel();
  assert.equal(first.status, 303);
  return first.headers.get("set-cookie")!.split(";")[0]!;
}

Deno.test("start captures, serves the dashboard with its token, and stops cleanly on SIGTERM", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const child = spawnStart(world, ["--port", "0"]);
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stopped = false;
  try {
    const { printed, url, port, token } = await untilUrl(reader, stderr);
    assert.match(printed, /Captured \d+ new records \(29 new conversations\)/);
    assert.match(printed, /Or search, read, resume and fork them in the dashboard:/);
    assert.ok(token.length >= 32, "a random token");

    const cookie = await cookieFor(url, token);
    const page = await fetch(url, { headers: { Cookie: cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<h1[^>]*>Search<\/h1>/);

    const status = await fetch(`http://127.0.0.1:${port}/api/status`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(status.status, 200);
    const body = await status.json();
    assert.ok(body.store.records > 0);
    const noToken = await fetch(`http://127.0.0.1:${port}/api/status`);
    await noToken.body?.cancel();
    assert.equal(noToken.status, 401);

    const lock = join(world.data, "run", "dashboard.lock");
    assert.equal(readLock(lock)?.pid, child.pid);
    child.kill("SIGTERM");
    stopped = true;
    assert.equal((await child.status).code, 0);
    assert.match(await stderr, /Dashboard stopped/);
    assert.equal(isLockHeld(lock), false, "run/dashboard.lock released");
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    await world.cleanup();
  }
});

Deno.test("start on a machine without histories serves the demo's store and says it is a demo", async () => {
  const world = await makeWorld();
  const child = spawnStart(world, ["--port", "0"]);
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stopped = false;
  let printed = "";
  try {
    const found = await untilUrl(reader, stderr);
    printed = found.printed;
    assert.match(printed, /Running the demo on logbook's bundled sample transcripts instead/);
    const demo =
      /This is a demo: the dashboard below serves .* temporary store\n(\S+), not your own/
        .exec(printed);
    assert.ok(demo, printed);
    const dir = demo[1]!;
    assert.match(printed, /removed when this command exits/);

    const hits = await fetch(`${found.url}api/search?q=marmot+keyring`, {
      headers: { Authorization: `Bearer ${found.token}` },
    });
    assert.equal(hits.status, 200);
    assert.ok((await hits.json()).hits.length > 0, "the demo's store is served");
    const home = await fetch(found.url, { headers: { Authorization: `Bearer ${found.token}` } });
    const page = await home.text();
    assert.match(page, /<strong>This is a demo<\/strong>/, "the dashboard says so too");
    assert.ok(page.includes(`<code>${dir}</code>`), "with its temporary store");
    assert.match(page, /<ol class="rows recent">/, "its conversations, before any search");
    assert.equal(readLock(join(dir, "run", "dashboard.lock"))?.pid, child.pid);

    child.kill("SIGTERM");
    stopped = true;
    assert.equal((await child.status).code, 0);
    assert.equal(await Deno.stat(dir).catch(() => null), null, "the demo store removed on exit");
    assert.equal(
      await Deno.stat(world.data).catch(() => null),
      null,
      "the user's data dir untouched",
    );
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    const dirs = /The demo store is (\S+) \([^)]*\); it and (\S+) are removed/.exec(printed);
    if (dirs) { for (const dir of dirs.slice(1)) await removeDir(dir); }
    await world.cleanup();
  }
});

Deno.test("Ctrl-C on the demo, which deno task delivers twice, still removes its folders", async () => {
  const world = await makeWorld();
  const child = spawnStart(world, ["--demo", "--port", "0"]);
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let dirs: string[] = [];
  let stopped = false;
  try {
    const found = await untilUrl(reader, stderr);
    dirs = /The demo store is (\S+) \([^)]*\); it and (\S+) are removed/.exec(found.printed)!
      .slice(1);
    assert.equal(dirs.length, 2, found.printed);
    await ctrlCTwice(child.pid, Number(found.port), found.token);
    stopped = true;
    const status = await child.status;
    assert.equal(status.code, 0, `${status.signal ?? ""} ${await stderr}`);
    assert.match(await stderr, /Dashboard stopped/);
    for (const dir of dirs) {
      assert.equal(await Deno.stat(dir).catch(() => null), null, `${dir} removed`);
    }
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    for (const dir of dirs) await removeDir(dir);
    await world.cleanup();
  }
});

Deno.test("start with its configured port taken serves on a free one and says so", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  await Deno.mkdir(world.config, { recursive: true });
  await Deno.writeTextFile(
    join(world.config, "config.json"),
    JSON.stringify({ dashboard: { port } }),
  );
  const child = spawnStart(world, []);
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stopped = false;
  try {
    const found = await untilUrl(reader, stderr);
    assert.notEqual(Number(found.port), port);
    const status = await fetch(`${found.url}api/status`, {
      headers: { Authorization: `Bearer ${found.token}` },
    });
    assert.equal(status.status, 200);
    await status.body?.cancel();
    child.kill("SIGTERM");
    stopped = true;
    assert.equal((await child.status).code, 0);
    assert.match(
      await stderr,
      new RegExp(`Port ${port} is in use: serving on a free port instead`),
    );
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await stderr.catch(() => "");
    taken.close();
    await world.cleanup();
  }
});
