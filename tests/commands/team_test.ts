// The team history against a real PostgreSQL server started here: two data dirs push as two
// machines and one search finds both; only allowed projects leave, secrets redacted (checked in
// pg_dump), raw bytes only when asked; forget travels; the read role cannot write; a push killed
// with -9 and resumed sends every record exactly once. Skips, saying why, without PostgreSQL.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { childBaseEnv, makeWorld, ROOT, runCli, taskFlags, type World } from "../_helpers.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { appFor, request } from "../servers/_dashboard.ts";
import { startPostgres } from "../postgres_server.ts";
import { fakeUpper } from "../lib/_secret_shapes.ts";

const pg = await startPostgres();
if (typeof pg === "string") console.warn(`team tests skipped: ${pg}`);

async function configure(world: World, team: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(world.config, { recursive: true });
  await Deno.writeTextFile(join(world.config, "config.json"), JSON.stringify({ team }));
}

async function psql(
  sql: string,
  url?: string,
): Promise<{ code: number; out: string; err: string }> {
  if (typeof pg === "string") throw new Error(pg);
  const args = url ? [url] : ["-d", "team"];
  const r = url
    ? await new Deno.Command("psql", {
      args: [...args, "-At", "-c", sql],
      stdout: "piped",
      stderr: "piped",
    }).output().then((o) => ({
      code: o.code,
      stdout: new TextDecoder().decode(o.stdout),
      stderr: new TextDecoder().decode(o.stderr),
    }))
    : await pg.run("psql", [...args, "-At", "-c", sql]);
  return { code: r.code, out: r.stdout.trim(), err: r.stderr };
}

const A = "a51c0e27-3d8f-4b16-9e42-7c0a6b1f5d38";
const B = "b62d1f38-4e9a-4c27-8f53-8d1b7c2a6e49";

Deno.test({
  name: "team history: two machines push, one search finds both; only what is allowed leaves",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const laptop = await makeWorld({ fixtures: ["claude"] });
  const desk = await makeWorld();
  const secret = "AKIA" + fakeUpper(16);
  const shared = join(laptop.dir, "src", "atlas");
  const deskProject = join(desk.dir, "src", "atlas");
  try {
    await placeClaudeTranscript(
      laptop,
      shared,
      A,
      claudeTranscript(A, shared, [
        [
          `Rotate the staging key ${secret} before the cormorant release`,
          "Rotated; cormorant ships",
        ],
        ["我们需要把缓存策略改成按需加载", "好的，缓存策略已改。"],
      ]),
    );
    await placeClaudeTranscript(
      desk,
      deskProject,
      B,
      claudeTranscript(B, deskProject, [
        ["Why does the cormorant build fail on the desk?", "A stale lockfile; removed it."],
      ]),
    );
    await configure(laptop, { url: pg.url, projects: [shared], machine: "laptop" });
    await configure(desk, { url: pg.url, projects: [deskProject], machine: "desk" });
    for (const world of [laptop, desk]) {
      assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    }

    await t.step("--dry-run says what would go and sends nothing", async () => {
      const dry = await runCli("push", ["--dry-run", "--json"], laptop.vars);
      assert.equal(dry.code, 0, dry.stderr);
      const plan = JSON.parse(dry.stdout);
      assert.equal(plan.dryRun, true);
      assert.equal(plan.perProject.length, 1);
      assert.ok(plan.records >= 4, dry.stdout);
      const tables = await psql("SELECT to_regclass('logbook_records') IS NULL");
      assert.equal(tables.out, "t", "nothing was created or sent");
    });

    await t.step(
      "both machines push; search --team finds both and says which machine",
      async () => {
        const first = await runCli("push", [], laptop.vars);
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stdout, /Sent \d+ records of 1 conversation \(.* as "laptop"/);
        assert.equal((await runCli("push", ["--quiet"], desk.vars)).code, 0);
        const again = await runCli("push", [], laptop.vars);
        assert.match(again.stdout, /Nothing new to send/);

        const found = await runCli("search", ["--team", "cormorant", "--json"], laptop.vars);
        assert.equal(found.code, 0, found.stderr);
        const hits = found.stdout.trim().split("\n").map((l) => JSON.parse(l));
        assert.deepEqual([...new Set(hits.map((h) => h.machine))].sort(), ["desk", "laptop"]);
        const only = await runCli(
          "search",
          ["--team", "cormorant", "--machine", "desk", "--json"],
          desk.vars,
        );
        const deskHits = only.stdout.trim().split("\n").map((l) => JSON.parse(l));
        assert.ok(deskHits.every((h) => h.machine === "desk" && h.conversation === `claude:${B}`));
        const text = await runCli("search", ["--team", "cormorant"], desk.vars);
        assert.match(text.stdout, /laptop/);
        assert.match(text.stdout, /desk/);
      },
    );

    await t.step("the MCP server searches the team history too", async () => {
      const transport = new StdioClientTransport({
        command: Deno.execPath(),
        args: ["run", ...taskFlags("mcp"), "--quiet", join(ROOT, "commands", "mcp.ts")],
        env: { ...childBaseEnv(), ...desk.vars },
        stderr: "pipe",
      });
      const client = new Client({ name: "logbook-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        const result = await client.callTool({
          name: "search_history",
          arguments: { query: "cormorant", team: true, all_projects: true },
        });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        const hits = (result.structuredContent as { hits: { machine: string }[] }).hits;
        assert.deepEqual([...new Set(hits.map((h) => h.machine))].sort(), ["desk", "laptop"]);
      } finally {
        await client.close();
      }
    });

    await t.step("the dashboard's team scope answers the same search", async () => {
      const { app, services } = appFor(desk);
      try {
        const res = await request(app, "/api/team/search?q=cormorant");
        assert.equal(res.status, 200);
        const body = await res.json();
        const machines = body.hits.map((h: { machine: string }) => h.machine);
        assert.deepEqual([...new Set(machines)].sort(), ["desk", "laptop"]);
        const bad = await request(app, "/api/team/search?q=cormorant&machine=no%20spaces");
        assert.equal(bad.status, 400);
        const page = await request(app, "/?q=cormorant&scope=team");
        assert.equal(page.status, 200);
        const text = await page.text();
        assert.match(text, /name="scope" value="team"\s+checked/);
        assert.match(text, /<span class="machine">laptop<\/span>/);
        assert.match(text, /<span class="machine">desk<\/span>/);
        const local = await (await request(app, "/?q=cormorant")).text();
        assert.doesNotMatch(
          local,
          /<span class="machine">laptop/,
          "this machine's scope by default",
        );
      } finally {
        services.searches.close();
      }
      const bareWorld = await makeWorld();
      const { app: bare, services: bareServices } = appFor(bareWorld);
      try {
        const none = await request(bare, "/api/team/search?q=x");
        assert.equal(none.status, 404);
        assert.match((await none.json()).error.message, /No team database is configured/);
      } finally {
        bareServices.searches.close();
        await bareWorld.cleanup();
      }
    });

    await t.step("a fixture's project was not allowed: none of it left", async () => {
      const none = await runCli("search", ["--team", "quokka-lantern"], laptop.vars);
      assert.equal(none.code, 1);
      const projects = await psql("SELECT DISTINCT project FROM logbook_conversations ORDER BY 1");
      assert.equal(projects.out.split("\n").length, 2, projects.out);
    });

    await t.step("CJK text is found through the trigram fallback", async () => {
      const cjk = await runCli("search", ["--team", "缓存策略", "--json"], laptop.vars);
      assert.equal(cjk.code, 0, cjk.stderr);
      assert.match(cjk.stdout, /缓存策略/);
    });

    await t.step("no row holds the planted secret (pg_dump), and raw stays home", async () => {
      const dump = await pg.run("pg_dump", ["-d", "team", "--data-only"]);
      assert.equal(dump.code, 0, dump.stderr);
      assert.ok(dump.stdout.includes("cormorant"), "the dump has the data");
      assert.ok(!dump.stdout.includes(secret), "the secret never left");
      assert.ok(dump.stdout.includes("[REDACTED:aws-access-key-id]"));
      const raw = await psql("SELECT count(*) FROM logbook_records WHERE raw IS NOT NULL");
      assert.equal(raw.out, "0");
    });

    await t.step("show --team pages a pushed conversation", async () => {
      const shown = await runCli("show", ["--team", `claude:${B}`], laptop.vars);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /stale lockfile/);
      assert.match(shown.stdout, /from desk/);
    });

    await t.step("forget travels: the conversation leaves the team database", async () => {
      assert.equal((await runCli("forget", [`claude:${A}`], laptop.vars)).code, 0);
      const pushed = await runCli("push", [], laptop.vars);
      assert.match(pushed.stdout, /removed 1 forgotten conversation[;.]/);
      const left = await psql(
        `SELECT count(*) FROM logbook_records WHERE conversation_key = 'claude:${A}'`,
      );
      assert.equal(left.out, "0");
      const tomb = await psql(`SELECT machine FROM logbook_tombstones WHERE key = 'claude:${A}'`);
      assert.equal(tomb.out, "laptop");
    });

    await t.step("the read role reads and cannot write", async () => {
      assert.equal((await psql("CREATE ROLE reader LOGIN IN ROLE logbook_read")).code, 0);
      const reads = await psql("SELECT count(*) > 0 FROM logbook_records", pg.urlAs("reader"));
      assert.equal(reads.out, "t", reads.err);
      const writes = await psql(
        "INSERT INTO logbook_machines (machine) VALUES ('intruder')",
        pg.urlAs("reader"),
      );
      assert.notEqual(writes.code, 0);
      assert.match(writes.err, /permission denied/);
      const deletes = await psql("DELETE FROM logbook_records", pg.urlAs("reader"));
      assert.match(deletes.err, /permission denied/);
    });
  } finally {
    await laptop.cleanup();
    await desk.cleanup();
  }
});

Deno.test({
  name: "team history: a push killed with -9 and resumed sends every record exactly once",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const world = await makeWorld();
  const project = join(world.dir, "src", "heron");
  const session = "c73e2049-5fab-4d38-a064-9e2c8d3b7f5a";
  const turns: [string, string][] = Array.from({ length: 600 }, (_, i) => [
    `heron question ${i} about the ledger`,
    `heron answer ${i}: it balances`,
  ]);
  try {
    await placeClaudeTranscript(world, project, session, claudeTranscript(session, project, turns));
    await configure(world, { url: pg.url, projects: [project], machine: "killed" });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const local = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
    const expected = (local.prepare(
      "SELECT count(*) AS n FROM records WHERE (flags & 1) != 0 AND (flags & 8) = 0",
    ).get() as { n: number }).n;
    local.close();
    assert.ok(expected >= 1200);

    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...taskFlags("push"), "--quiet", join(ROOT, "commands", "push.ts")],
      env: { ...childBaseEnv(), ...world.vars, LOGBOOK_PUSH_BATCH: "20" },
      clearEnv: true,
      stdout: "null",
      stderr: "null",
    }).spawn();
    let sent = 0;
    for (let i = 0; i < 600 && sent === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const count = await psql(
        "SELECT CASE WHEN to_regclass('logbook_records') IS NULL THEN 0 ELSE (SELECT count(*) FROM logbook_records WHERE machine = 'killed') END",
      );
      sent = Number(count.out || 0);
    }
    child.kill("SIGKILL");
    await child.status;
    assert.ok(sent > 0 && sent < expected, `killed part way: ${sent} of ${expected}`);

    const resumed = await runCli("push", ["--json"], { ...world.vars, LOGBOOK_PUSH_BATCH: "20" });
    assert.equal(resumed.code, 0, resumed.stderr);
    const counts = await psql(
      "SELECT count(*), count(DISTINCT record_id) FROM logbook_records WHERE machine = 'killed'",
    );
    assert.equal(counts.out, `${expected}|${expected}`);
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: push and search --team without a team database say what to configure",
}, async () => {
  const world = await makeWorld();
  try {
    const pushed = await runCli("push", [], world.vars);
    assert.equal(pushed.code, 1);
    assert.match(pushed.stderr, /No team database is configured: add \{"team"/);
    const searched = await runCli("search", ["--team", "x"], world.vars);
    assert.equal(searched.code, 1);
    assert.match(searched.stderr, /LOGBOOK_TEAM_URL/);
    const machine = await runCli("search", ["x", "--machine", "desk"], world.vars);
    assert.equal(machine.code, 2);
    const help = await runCli("push", ["--help"], world.vars);
    assert.equal(help.code, 0);
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: stop the test cluster",
  ignore: typeof pg === "string",
}, async () => {
  if (typeof pg !== "string") await pg.stop();
});
