// Capture of Factory Droid's session settings (`<uuid>.settings.json` beside each session file,
// as the real `droid exec` 0.215.0 wrote them): the session's token totals as its one call for
// `logbook usage`, replaced by newer totals, never counted twice.

import { readersAgree } from "./_shown.ts";
import { sessionUsage, storedCalls } from "./_usage.ts";
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envFrom } from "../../../lib/env.ts";
import { droidSettings } from "../../../lib/sources/droid_settings.ts";
import {
  captureWorld,
  FIXTURES,
  makeWorld,
  runCli,
  withStore,
  type World,
} from "../../_helpers.ts";

const MAIN = "c2c36cf4-cc57-4a46-b1af-1bb79cacc73e";
const UGLY = "dcecd198-b235-4f21-ac1a-4326b2986b07";
const SLUG = "-home-user-project";
const MODEL = "custom:Conformance-Model-0";

/** A world whose `$FACTORY_HOME_OVERRIDE` holds a copy of `fixtures/droid/<folder>/.factory`. */
async function droidWorld(...folders: string[]): Promise<World> {
  const world = await makeWorld();
  world.vars.FACTORY_HOME_OVERRIDE = join(world.dir, "factory-home");
  world.env = envFrom(world.vars);
  for (const folder of folders) {
    cpSync(
      join(FIXTURES, "droid", folder, ".factory"),
      join(world.dir, "factory-home", ".factory"),
      {
        recursive: true,
      },
    );
  }
  return world;
}

function settingsPath(world: World, session: string): string {
  return join(
    world.vars.FACTORY_HOME_OVERRIDE!,
    ".factory",
    "sessions",
    SLUG,
    `${session}.settings.json`,
  );
}

/** The session's settings, changed by `change`, written whole in place as Droid writes them. */
function rewriteSettings(world: World, session: string, change: (s: Settings) => void): void {
  const path = settingsPath(world, session);
  const settings = JSON.parse(Deno.readTextFileSync(path)) as Settings;
  change(settings);
  writeFileSync(path, JSON.stringify(settings, null, 2));
}

interface Settings {
  model: string;
  tokenUsage: Record<string, number>;
}

/** The report's line of a session's totals. */
function totals(input: number, output: number) {
  return { calls: 1, input, output, cacheWrite: 0, cacheRead: 0 };
}

Deno.test("a session's token totals are its one call, with its model; newer totals replace them", async (t) => {
  const world = await droidWorld("home");
  const usage = () => sessionUsage(world, "droid");
  try {
    await t.step("the session as droid exec left it", async () => {
      const summary = await captureWorld(world);
      assert.deepEqual(summary.drift, []);
      assert.deepEqual(summary.errors, []);
      // Two calls of 320 tokens in, 19 and 11 out, as the settings total them.
      assert.deepEqual(usage(), { [`droid:${MAIN}`]: totals(640, 30) });
      const [call] = storedCalls(world, "droid");
      assert.equal(call?.call, `session:${MAIN}`);
      assert.equal(call?.model, MODEL);
      assert.equal(call?.cost, null);
      assert.equal(typeof call?.ts, "number");
    });
    await t.step("the next turn: the settings rewritten with the new totals", async () => {
      rewriteSettings(world, MAIN, (s) => {
        s.tokenUsage.inputTokens! += 320;
        s.tokenUsage.outputTokens! += 7;
        s.tokenUsage.cacheReadTokens = 200;
        s.tokenUsage.cacheCreationTokens = 50;
      });
      await captureWorld(world);
      assert.deepEqual(usage(), {
        [`droid:${MAIN}`]: { calls: 1, input: 960, output: 37, cacheWrite: 50, cacheRead: 200 },
      });
    });
    await t.step(
      "the same settings again, written again, and a rebuild change nothing",
      async () => {
        const before = usage();
        assert.equal((await captureWorld(world)).records, 0);
        const path = settingsPath(world, MAIN);
        writeFileSync(path, Deno.readFileSync(path));
        await captureWorld(world);
        await captureWorld(world, { rebuild: true });
        assert.deepEqual(usage(), before);
        assert.equal(storedCalls(world, "droid").length, 1);
      },
    );
    await t.step("the session's conversation keeps its title and cwd", () => {
      const row = withStore(
        world,
        (store) =>
          store.db.prepare("SELECT title, cwd FROM conversations WHERE key = ?").get(
            `droid:${MAIN}`,
          ),
      );
      assert.deepEqual({ ...row }, {
        title: "Read the notes for me, quasarbeet lanternfig.",
        cwd: "/home/user/project",
      });
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("each session counts its own totals; a .bak copy is no source; READERS agree", async () => {
  const world = await droidWorld("home", "ugly");
  try {
    writeFileSync(
      `${settingsPath(world, MAIN)}.bak`,
      Deno.readFileSync(settingsPath(world, MAIN)),
    );
    const ctx = { env: world.env, extraRoots: {}, skipped: new Map() };
    const found = [];
    for await (const source of droidSettings.discover(ctx)) found.push(source.locator);
    assert.deepEqual(found.sort(), [settingsPath(world, MAIN), settingsPath(world, UGLY)].sort());
    await captureWorld(world);
    assert.deepEqual(sessionUsage(world, "droid"), {
      [`droid:${MAIN}`]: totals(640, 30),
      [`droid:${UGLY}`]: totals(640, 30),
    });
    withStore(world, (store, ctx) => {
      const { records } = readersAgree(store, ctx, "droid");
      assert.ok(records > 2);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("settings caught mid-write are read again once whole; none, or no tokens, is no call", async () => {
  const world = await droidWorld("home");
  try {
    const path = settingsPath(world, MAIN);
    const whole = Deno.readFileSync(path);
    writeFileSync(path, whole.subarray(0, 200));
    const torn = await captureWorld(world);
    assert.equal(torn.errors.length, 1);
    assert.match(torn.errors[0]!.message, /settings .* were being written when read/);
    assert.deepEqual(sessionUsage(world, "droid"), {});
    writeFileSync(path, whole);
    await captureWorld(world);
    assert.deepEqual(sessionUsage(world, "droid"), { [`droid:${MAIN}`]: totals(640, 30) });
  } finally {
    await world.cleanup();
  }
  const fresh = await droidWorld("home");
  try {
    rewriteSettings(fresh, MAIN, (s) => {
      for (const name of Object.keys(s.tokenUsage)) s.tokenUsage[name] = 0;
    });
    await captureWorld(fresh);
    assert.deepEqual(sessionUsage(fresh, "droid"), {});
  } finally {
    await fresh.cleanup();
  }
});

Deno.test("logbook usage session --json reports a Droid session's totals after reindex", async () => {
  const world = await droidWorld("home");
  try {
    const reindex = await runCli("reindex", [], world.vars);
    assert.equal(reindex.code, 0, reindex.stderr);
    const run = await runCli("usage", ["session", "--agent", "droid", "--json"], world.vars);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.deepEqual(
      report.lines.map((l: Record<string, unknown>) => [l.key, l.calls, l.input, l.output]),
      [[`droid:${MAIN}`, 1, 640, 30]],
    );
    assert.deepEqual(report.unpriced, [{ model: MODEL, calls: 1 }]);
  } finally {
    await world.cleanup();
  }
});
