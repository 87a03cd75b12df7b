// The team history against a real PostgreSQL server started here: two data dirs push as two
// machines and one search finds both; only allowed projects leave, secrets redacted (checked in
// pg_dump), raw bytes only when asked; forget travels; the read role cannot write; a push killed
// with -9 and resumed sends every record exactly once. Skips, saying why, without PostgreSQL.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  childBaseEnv,
  makeWorld,
  ROOT,
  runCli,
  taskFlags,
  withStore,
  type World,
} from "../_helpers.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { CONTEXT_PROMPT, placeCodexContextRollout } from "../_codex_context.ts";
import { appFor, request, withVars } from "../servers/_dashboard.ts";
import { startPostgres } from "../postgres_server.ts";
import { fakeUpper } from "../lib/_secret_shapes.ts";
import { leaks, placeSecretPathSession, SECRET_PATH_WORD, shownPath } from "../_secret_path.ts";
import { loadContext, openStore, redactorFor } from "../../lib/context.ts";
import { GarbageRelease } from "../../lib/garbage.ts";
import { connectForPush, push } from "../../lib/team/push.ts";
import { ADAPTERS } from "../../lib/sources/mod.ts";
import { type RecordRow, TextDeriver } from "../../lib/store/records.ts";
import { connectTeam, migrateTeam, TEAM_MIGRATIONS } from "../../lib/team/db.ts";
import { connectQuick } from "../../lib/team/wire.ts";
import {
  CONTEXT_START,
  filterSql,
  newestMatches,
  PROBE_IDS,
  RANK_CANDIDATES,
  teamSearch,
} from "../../lib/team/search.ts";
import type { Redactor } from "../../lib/gate/secrets.ts";
import type { Agent } from "../../lib/agents.ts";
import { ANSWER_BOOST } from "../../lib/store/search.ts";
import { isCodexContext } from "../../lib/sources/codex_text.ts";
import { eventually } from "../_wait.ts";

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

/** `n` turns of a question and its answer about `word`. */
function turnsAbout(word: string, n: number): [string, string][] {
  return Array.from({ length: n }, (_, i) => [`${word} question ${i}`, `${word} answer ${i}`]);
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
        args: ["run", ...await taskFlags("mcp"), "--quiet", join(ROOT, "commands", "mcp.ts")],
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
  // Two conversations: a push sends them down two lanes at once, each its own transactions.
  const sessions = ["c73e2049-5fab-4d38-a064-9e2c8d3b7f5a", "d84f315a-60bc-4e49-b175-0f3d9e4c8a6c"];
  const turns = turnsAbout("heron", 300);
  try {
    for (const session of sessions) {
      await placeClaudeTranscript(
        world,
        project,
        session,
        claudeTranscript(session, project, turns),
      );
    }
    await configure(world, { url: pg.url, projects: [project], machine: "killed" });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const local = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
    const expected = (local.prepare(
      "SELECT count(*) AS n FROM records WHERE (flags & 1) != 0 AND (flags & 8) = 0",
    ).get() as { n: number }).n;
    local.close();
    assert.ok(expected >= 1200);

    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...await taskFlags("push"), "--quiet", join(ROOT, "commands", "push.ts")],
      env: { ...childBaseEnv(), ...world.vars, LOGBOOK_PUSH_BATCH: "20" },
      clearEnv: true,
      stdout: "null",
      stderr: "null",
    }).spawn();
    const sent = await eventually("the first records pushed", async () => {
      const count = await psql(
        "SELECT CASE WHEN to_regclass('logbook_records') IS NULL THEN 0 ELSE (SELECT count(*) FROM logbook_records WHERE machine = 'killed') END",
      );
      return Number(count.out || 0) || undefined;
    });
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
  name: "team history: while the server holds one conversation, a push sends the others",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const world = await makeWorld();
  const project = join(world.dir, "src", "egret");
  const turns = turnsAbout("egret", 40);
  const owner = await connectTeam(pg.url);
  try {
    for (const session of [A, B]) {
      await placeClaudeTranscript(
        world,
        project,
        session,
        claudeTranscript(session, project, turns),
      );
    }
    await configure(world, { url: pg.url, projects: [project], machine: "lanes" });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const local = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
    const keys = (local.prepare(
      "SELECT key FROM conversations WHERE project_root = ? ORDER BY id",
    ).all(project) as { key: string }[]).map((c) => c.key);
    const records = (key: string) =>
      (local.prepare(
        `SELECT count(*) AS n FROM records r JOIN conversations c ON c.id = r.conversation_id
         WHERE c.key = ? AND (r.flags & 1) != 0 AND (r.flags & 8) = 0`,
      ).get(key) as { n: number }).n;
    const [first, second] = keys as [string, string];
    const expected = { first: records(first), second: records(second) };
    local.close();
    assert.equal(keys.length, 2);
    assert.ok(expected.first > 0 && expected.second > 0);

    // The push's first conversation waits on a row this test is writing and has not committed.
    await migrateTeam(owner);
    await owner`INSERT INTO logbook_machines (machine) VALUES ('lanes')`;
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => holding = resolve);
    const writer = owner.begin(async (tx) => {
      await tx`
        INSERT INTO logbook_conversations (machine, key, agent) VALUES ('lanes', ${first}, 'claude')`;
      holding();
      await held;
    });
    await holds;
    const reader = await connectTeam(pg.url);
    const pushing = runCli("push", ["--json"], { ...world.vars, LOGBOOK_PUSH_BATCH: "10" });
    try {
      const count = async (key: string) =>
        Number(
          (await reader`
          SELECT count(*) AS n FROM logbook_records WHERE machine = 'lanes' AND conversation_key = ${key}`)[
            0
          ]!.n,
        );
      await eventually(
        "the second conversation sent while the first waits",
        async () => await count(second) === expected.second,
      );
      assert.equal(await count(first), 0, "the first conversation waited");
      release();
      await writer;
      const pushed = await pushing;
      assert.equal(pushed.code, 0, pushed.stderr);
      assert.equal(await count(first), expected.first);
      assert.equal(await count(second), expected.second);
      // A conversation's records arrived in their order, batch after batch, down one lane.
      for (const key of keys) {
        const rows = await reader`
          SELECT record_id FROM logbook_records WHERE machine = 'lanes' AND conversation_key = ${key}
          ORDER BY id`;
        const ids = rows.map((r) => Number(r.record_id));
        assert.deepEqual(ids, ids.toSorted((x, y) => x - y));
      }
    } finally {
      release();
      await pushing;
      await reader.end();
    }
  } finally {
    await owner.end();
    await world.cleanup();
  }
});

Deno.test({
  name: "team history: a push's connections gather the GIN pending list in 64 MB, and keep JIT off",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const sql = await connectForPush(pg.url);
  const plain = await connectTeam(pg.url);
  try {
    const [pushing] = await sql<{ work_mem: string; jit: string }[]>`
      SELECT current_setting('work_mem') AS work_mem, current_setting('jit') AS jit`;
    assert.deepEqual(pushing, { work_mem: "64MB", jit: "off" });
    // Other connections keep the server's own work_mem.
    const [other] = await plain<
      { work_mem: string }[]
    >`SELECT current_setting('work_mem') AS work_mem`;
    assert.equal(other!.work_mem, "4MB");
  } finally {
    await sql.end();
    await plain.end();
  }
});

Deno.test({
  name: "team history: a push collects its sent batches' garbage as it goes",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const world = await makeWorld();
  const project = join(world.dir, "src", "plover");
  const turns = turnsAbout("plover", 60);
  const sql = await connectForPush(pg.url);
  try {
    await placeClaudeTranscript(world, project, A, claudeTranscript(A, project, turns));
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    let collections = 0;
    try {
      const summary = await push({
        store,
        sql,
        adapters: ADAPTERS,
        redact: redactorFor(ctx),
        machine: "collected",
        projects: [project],
        raw: false,
        batchRecords: 10,
        // Every byte sent is enough: a collection after each batch.
        garbage: new GarbageRelease(1, () => collections++, () => 0),
      });
      assert.ok(summary.batches >= 10, `${summary.batches} batches`);
      assert.equal(collections, summary.batches);
    } finally {
      store.close();
    }
  } finally {
    await sql.end();
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

/** A world with `turns` in one Claude session of `project`, captured, configured for `url`. */
async function pushingWorld(
  url: string | null,
  session: string,
  turns: [string, string][],
  team: Record<string, unknown>,
): Promise<{ world: World; project: string; file: string }> {
  const world = await makeWorld();
  const project = join(world.dir, "src", "app");
  const file = await placeClaudeTranscript(
    world,
    project,
    session,
    claudeTranscript(session, project, turns),
  );
  await configure(world, { ...(url ? { url } : {}), projects: [project], ...team });
  const captured = await runCli("reindex", ["--quiet"], world.vars);
  assert.equal(captured.code, 0, captured.stderr);
  return { world, project, file };
}

/** Appends `turns` to a session's transcript (later in time) and captures them. */
async function addTurns(
  world: World,
  file: string,
  session: string,
  project: string,
  turns: [string, string][],
  start = Date.UTC(2026, 10, 3),
): Promise<void> {
  await Deno.writeTextFile(file, claudeTranscript(session, project, turns, start), {
    append: true,
  });
  const captured = await runCli("reindex", ["--quiet"], world.vars);
  assert.equal(captured.code, 0, captured.stderr);
}

/** The JSON a `push --json` printed (its last line). */
function pushed(result: { code: number; stdout: string; stderr: string }) {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

/** Runs psql in the background as `holder`, holding what `sql` takes until it is terminated. */
async function holdLock(url: string, sql: string, relation: string, mode: string) {
  const child = new Deno.Command("psql", {
    args: [url, "-c", `BEGIN; ${sql}; SELECT pg_sleep(120);`],
    env: { PGAPPNAME: "logbook_lock_holder" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  await eventually(`the lock on ${relation} taken`, async () => {
    const held = await psql(
      `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
       WHERE c.relname = '${relation}' AND l.mode = '${mode}' AND l.granted`,
      url,
    );
    return held.out === "1";
  });
  return {
    /** Ends the holder's session, and so its lock. */
    release: async () => {
      await psql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'logbook_lock_holder'`,
        url,
      );
      await child.status;
    },
    /** Resolves once another session waits for the lock on `relation`. */
    waited: async () => {
      await eventually(`another session to wait for ${relation}`, async () => {
        const waiting = await psql(
          `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
           WHERE c.relname = '${relation}' AND NOT l.granted`,
          url,
        );
        return Number(waiting.out) > 0;
      });
    },
  };
}

Deno.test({
  name:
    "team: a push login pushes once the owner migrated, and changes only its own machine's rows",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const owner = await pg.createDatabase("roles");
  for (const role of ["logbook_push", "logbook_read"]) {
    await psql(
      `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
         CREATE ROLE ${role} NOLOGIN; END IF; END $$`,
      owner,
    );
  }
  for (const login of ["laptop_login", "desk_login"]) {
    assert.equal((await psql(`CREATE ROLE ${login} LOGIN IN ROLE logbook_push`, owner)).code, 0);
  }
  const laptop = await pushingWorld(pg.urlAs("laptop_login", "roles"), A, [
    ["Where is the kestrel config?", "In kestrel.toml"],
  ], { machine: "laptop" });
  const desk = await pushingWorld(pg.urlAs("desk_login", "roles"), B, [
    ["Why is the desk kestrel slow?", "Its cache was cold"],
  ], { machine: "desk" });
  try {
    await t.step("before the owner migrated, a push login is told who must", async () => {
      const refused = await runCli("push", [], laptop.world.vars);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /schema needs 0001_team_history, .* and "laptop_login" may not/);
      assert.match(refused.stderr, /run the first push \(or `logbook push --migrate`\) as the/);
    });

    await t.step(
      "push --migrate records each migration once; a second run applies none",
      async () => {
        const vars = { ...laptop.world.vars, LOGBOOK_TEAM_URL: owner };
        const first = await runCli("push", ["--migrate", "--json"], vars);
        assert.equal(first.code, 0, first.stderr);
        const names = JSON.parse(first.stdout).applied;
        assert.deepEqual(names, [
          "0001_team_history",
          "0002_roles",
          "0003_stable_identity_and_own_rows",
          "0004_lighter_indexes",
          "0005_words_as_read",
          "0006_words_in_the_row",
        ]);
        // A record's words stay in its row (the ranking reads them), compressed, while it fits.
        const storage = await psql(
          "SELECT attstorage FROM pg_attribute " +
            "WHERE attrelid = 'logbook_records'::regclass AND attname = 'tsv'",
          owner,
        );
        assert.equal(storage.out, "m");
        const rows = await psql(
          "SELECT name FROM logbook_migrations ORDER BY applied_at, name",
          owner,
        );
        assert.deepEqual(rows.out.split("\n"), names);
        const second = await runCli("push", ["--migrate"], vars);
        assert.equal(second.code, 0, second.stderr);
        assert.match(second.stdout, /is up to date: nothing to apply/);
        assert.equal(
          (await psql("SELECT count(*) FROM logbook_migrations", owner)).out,
          String(names.length),
        );
      },
    );

    await t.step("each push login pushes as its own machine", async () => {
      for (const world of [laptop.world, desk.world]) {
        const sent = pushed(await runCli("push", ["--json"], world.vars));
        assert.equal(sent.records, 2);
      }
      const logins = await psql(
        "SELECT machine || '=' || login FROM logbook_machines ORDER BY machine",
        owner,
      );
      assert.equal(logins.out, "desk=desk_login\nlaptop=laptop_login");
    });

    await t.step("a push login cannot change another machine's rows", async () => {
      const as = pg.urlAs("laptop_login", "roles");
      const before = await psql(
        "SELECT count(*), string_agg(text, '|' ORDER BY id) FROM logbook_records WHERE machine = 'desk'",
        owner,
      );
      for (
        const [sql, result] of [
          ["DELETE FROM logbook_records WHERE machine = 'desk'", "DELETE 0"],
          ["UPDATE logbook_records SET text = 'defaced' WHERE machine = 'desk'", "UPDATE 0"],
          ["UPDATE logbook_conversations SET title = 'defaced' WHERE machine = 'desk'", "UPDATE 0"],
          ["UPDATE logbook_conversations SET sent_through = 0 WHERE machine = 'desk'", "UPDATE 0"],
          ["DELETE FROM logbook_conversations WHERE machine = 'desk'", "DELETE 0"],
          ["UPDATE logbook_machines SET login = 'laptop_login' WHERE machine = 'desk'", "UPDATE 0"],
          ["UPDATE logbook_tombstones SET key = 'x' WHERE machine = 'desk'", "UPDATE 0"],
        ] as const
      ) {
        const run = await psql(sql, as);
        assert.equal(run.code, 0, run.err);
        assert.equal(run.out, result, sql);
      }
      const forged = await psql(
        `INSERT INTO logbook_records (machine, record_id, conversation_key, kind, text)
         VALUES ('desk', 99, 'claude:${B}', 'message', 'forged')`,
        as,
      );
      assert.notEqual(forged.code, 0);
      assert.match(forged.err, /row-level security/);
      const after = await psql(
        "SELECT count(*), string_agg(text, '|' ORDER BY id) FROM logbook_records WHERE machine = 'desk'",
        owner,
      );
      assert.equal(after.out, before.out);
      assert.match(after.out, /^2\|.*kestrel/);
      const own = await psql(
        "UPDATE logbook_conversations SET title = title WHERE machine = 'laptop'",
        as,
      );
      assert.equal(own.out, "UPDATE 1", "its own rows stay its to change");
      const reads = await psql("SELECT count(DISTINCT machine) FROM logbook_records", as);
      assert.equal(reads.out, "2", "and it reads every machine's");
    });

    await t.step("pushing as a machine another login owns is refused, saying why", async () => {
      await configure(desk.world, {
        url: pg.urlAs("desk_login", "roles"),
        projects: [desk.project],
        machine: "laptop",
      });
      const refused = await runCli("push", [], desk.world.vars);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /"laptop" belongs to the login "laptop_login"/);
    });
  } finally {
    await laptop.world.cleanup();
    await desk.world.cleanup();
  }
});

Deno.test({
  name: "team: a conversation that joins an allowed project later is sent whole",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("late");
  const late = "d84f3a51-6b0c-4e49-b175-0f3d9e4c8a6b";
  const { world, project, file } = await pushingWorld(url, A, [["Tern one?", "Tern one."]], {
    machine: "late",
  });
  try {
    // A session whose first line names no working directory: no project until later lines do.
    const folder = join(world.claude, "projects", project.replaceAll("/", "-"));
    const lateFile = join(folder, `${late}.jsonl`);
    await Deno.writeTextFile(
      lateFile,
      JSON.stringify({
        parentUuid: null,
        isSidechain: false,
        type: "user",
        sessionId: late,
        uuid: "0a1b2c3d-0000-4000-8000-000000000001",
        timestamp: "2026-11-01T09:00:00.000Z",
        message: { role: "user", content: "The earliest plover note, before any cwd" },
      }) + "\n",
    );
    // Captured first: its record has the lowest id of the store.
    await Deno.rename(file, `${file}.later`);
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    await Deno.rename(`${file}.later`, file);
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    const first = pushed(await runCli("push", ["--json"], world.vars));
    assert.equal(first.records, 2, "only the session with a project went");

    await addTurns(world, lateFile, late, project, [["Plover two?", "Plover two."]]);
    pushed(await runCli("push", ["--json"], world.vars));
    const texts = await psql(
      `SELECT string_agg(text, '|' ORDER BY id) FROM logbook_records
       WHERE conversation_key = 'claude:${late}'`,
      url,
    );
    assert.equal(
      texts.out,
      "The earliest plover note, before any cwd|Plover two?|Plover two.",
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: a fresh store under the same machine name sends what is new, nothing twice",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("fresh");
  const { world, project, file } = await pushingWorld(url, A, [
    ["Grebe one?", "Grebe one."],
    ["Grebe two?", "Grebe two."],
  ], { machine: "reinstalled" });
  const count = async () =>
    (await psql(
      "SELECT count(*) || '/' || count(DISTINCT uid) || '/' || count(uid) FROM logbook_records",
      url,
    )).out;
  try {
    await t.step("the store is made again and the transcript grows", async () => {
      assert.equal(pushed(await runCli("push", ["--json"], world.vars)).records, 4);
      const removed = await runCli("delete_user_data", ["--yes"], world.vars);
      assert.equal(removed.code, 0, removed.stderr);
      await addTurns(world, file, A, project, [["Grebe three?", "Grebe three."]]);
      const again = pushed(await runCli("push", ["--json"], world.vars));
      assert.equal(again.newStore, true);
      assert.equal(again.records, 2, "the two new records");
      assert.equal(again.already, 4, "the four the team had were skipped");
      assert.equal(await count(), "6/6/6");
      const texts = await psql(
        "SELECT string_agg(text, '|' ORDER BY id) FROM logbook_records",
        url,
      );
      assert.match(texts.out, /Grebe two\.\|Grebe three\?\|Grebe three\.$/);
    });

    await t.step(
      "a cursor set back resends harmlessly (no duplicate key jams the push)",
      async () => {
        await psql("UPDATE logbook_conversations SET sent_through = 0", url);
        const resent = pushed(await runCli("push", ["--json"], world.vars));
        assert.equal(resent.records, 0);
        assert.equal(resent.already, 6);
        assert.equal(resent.newStore, false);
        assert.equal(await count(), "6/6/6");
      },
    );

    await t.step("two pushes at once both finish and keep each record once", async () => {
      await addTurns(
        world,
        file,
        A,
        project,
        [["Grebe four?", "Grebe four."]],
        Date.UTC(2026, 10, 4),
      );
      await psql("UPDATE logbook_conversations SET sent_through = 0", url);
      const vars = { ...world.vars, LOGBOOK_PUSH_BATCH: "1" };
      const both = await Promise.all([
        runCli("push", ["--json"], vars),
        runCli("push", ["--json"], vars),
      ]);
      const sums = both.map(pushed);
      assert.equal(sums[0].records + sums[1].records, 2);
      assert.equal(await count(), "8/8/8");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team finds CJK inside sentences and as a whole word, page by page",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("cjk");
  const { world } = await pushingWorld(url, A, [
    ["我们需要把缓存策略改成按需加载", "好的，缓存策略已改。"],
    ["缓存策略 改好了吗", "缓存策略很好"],
    ["别的事情", "没有关系"],
  ], { machine: "cjk" });
  try {
    assert.equal(pushed(await runCli("push", ["--json"], world.vars)).records, 6);
    const all = await runCli("search", ["--team", "缓存策略", "--json"], world.vars);
    assert.equal(all.code, 0, all.stderr);
    const hits = all.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(hits.length, 4, "the whole word and the three inside sentences");
    assert.match(all.stderr, /matched each word as a substring/);

    const first = await runCli("search", ["--team", "缓存策略", "--limit", "3"], world.vars);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^3 hits in the team database · more: --offset 3$/m);
    const rest = await runCli(
      "search",
      ["--team", "缓存策略", "--limit", "3", "--offset", "3", "--json"],
      world.vars,
    );
    assert.equal(rest.code, 0, rest.stderr);
    const second = rest.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(second.length, 1);
    assert.deepEqual(
      [...hits.slice(0, 3), ...second].map((h) => h.record),
      hits.map((h) => h.record),
      "the pages are the whole list, in order",
    );
    const after = await runCli("search", ["--team", "缓存策略", "--offset", "4"], world.vars);
    assert.equal(after.code, 1);
    assert.match(after.stderr, /No matches after the first 4/);
    const both = await runCli("search", ["--team", "缓存策略 按需", "--json"], world.vars);
    assert.equal(both.stdout.trim().split("\n").length, 1, "every word must appear");
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team keeps local search's bounds and budget, the CLI and the API",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("bounds");
  const { world } = await pushingWorld(url, A, [["Where is the egret?", "Egret found"]], {
    machine: "bounds",
  });
  try {
    pushed(await runCli("push", ["--json"], world.vars));
    const cases: [string, RegExp][] = [
      ["a*", /the prefix "a\*" is too short: a prefix needs at least 3 characters/i],
      [[..."abcdefghijklmnopqrstuvwxyz".repeat(6)].map((c) => `${c}*`).join(" OR "), /"a\*"/],
      [Array.from({ length: 33 }, (_, i) => `w${i}`).join(" "), /has 33 words: at most 32/],
    ];
    await t.step("a query over a bound is refused before it runs", async () => {
      const { app } = appFor(world);
      for (const [q, message] of cases) {
        const cli = await runCli("search", ["--team", q], world.vars);
        assert.equal(cli.code, 2, q);
        assert.match(cli.stderr, message);
        const api = await request(app, `/api/team/search?q=${encodeURIComponent(q)}`);
        assert.equal(api.status, 400);
        const body = await api.json();
        assert.equal(body.error.field, "q");
        assert.match(body.error.message, /^Invalid value for "q": /);
        assert.match(body.error.message, message);
      }
    });

    await t.step("a spent budget stops it with the budget's message", async () => {
      const vars = { ...world.vars, LOGBOOK_SEARCH_BUDGET_MS: "0" };
      const cli = await runCli("search", ["--team", "egret"], vars);
      assert.equal(cli.code, 2);
      assert.match(cli.stderr, /The search was stopped after 0 ms/);
      withVars(world, { LOGBOOK_SEARCH_BUDGET_MS: "0" });
      const { app } = appFor(world);
      const api = await request(app, "/api/team/search?q=egret");
      assert.equal(api.status, 400);
      assert.match((await api.json()).error.message, /the search was stopped after 0 ms/);
    });

    await t.step("PostgreSQL stops a search that waits past the budget", async () => {
      withVars(world, { LOGBOOK_SEARCH_BUDGET_MS: "1500" });
      const lock = await holdLock(
        url,
        "LOCK TABLE logbook_records",
        "logbook_records",
        "AccessExclusiveLock",
      );
      try {
        const guard = (what: Promise<unknown>) =>
          Promise.race([
            what,
            new Promise((r) => setTimeout(() => r("still waiting"), 30_000)),
          ]);
        const cli = runCli("search", ["--team", "egret"], world.vars);
        const answered = await guard(cli);
        assert.notEqual(answered, "still waiting", "the search waited for the lock");
        const done = await cli;
        assert.equal(done.code, 2, done.stderr);
        assert.match(done.stderr, /The search was stopped after 1500 ms/);
        const { app } = appFor(world);
        const api = request(app, "/api/team/search?q=egret");
        assert.notEqual(await guard(api), "still waiting", "the API waited for the lock");
        const response = await api;
        assert.equal(response.status, 400);
        assert.match((await response.json()).error.message, /stopped after 1500 ms/);
      } finally {
        await lock.release();
      }
      withVars(world, { LOGBOOK_SEARCH_BUDGET_MS: "600000" });
      const found = await runCli("search", ["--team", "egret", "--json"], world.vars);
      assert.equal(found.code, 0, found.stderr);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: --max-seconds stops between batches, and the next push finishes",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("deadline");
  const turns: [string, string][] = Array.from({ length: 100 }, (_, i) => [
    `dunlin question ${i}`,
    `dunlin answer ${i}`,
  ]);
  const { world } = await pushingWorld(url, A, turns, { machine: "deadline" });
  try {
    assert.equal((await runCli("push", ["--migrate"], world.vars)).code, 0);
    const vars = { ...world.vars, LOGBOOK_PUSH_BATCH: "20" };
    // The first batch waits for a lock past the time limit: the push stops after it. The push
    // set its one-second limit before it began to wait, so once it is seen waiting, a second
    // and a half more is past the limit however busy the machine: a wait for the clock the
    // limit reads, not a guess at how long something takes.
    const lock = await holdLock(
      url,
      "LOCK TABLE logbook_records IN SHARE MODE",
      "logbook_records",
      "ShareLock",
    );
    const running = runCli("push", ["--max-seconds", "1", "--json"], vars);
    try {
      await lock.waited();
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      await lock.release();
    }
    const stopped = pushed(await running);
    assert.equal(stopped.complete, false);
    assert.equal(stopped.records, 20);
    const rest = pushed(await runCli("push", ["--json"], vars));
    assert.equal(rest.complete, true);
    assert.equal(rest.records, 180);
    const counts = await psql("SELECT count(*), count(DISTINCT uid) FROM logbook_records", url);
    assert.equal(counts.out, "200|200");
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: push --watch survives a failing round, picks up new records, and stops on SIGINT",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("watching");
  const { world, project, file } = await pushingWorld(url, A, [["Avocet one?", "Avocet one."]], {
    machine: "watcher",
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("push"),
      "--quiet",
      join(ROOT, "commands", "push.ts"),
      "--watch",
      "--interval",
      "1",
      "--json",
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = { out: "", err: "" };
  const drain = (stream: ReadableStream<Uint8Array>, key: "out" | "err") =>
    stream.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (text) => void (output[key] += text) }),
    );
  const drained = Promise.all([drain(child.stdout, "out"), drain(child.stderr, "err")]);
  const until = async (what: string, ok: () => Promise<boolean> | boolean) => {
    for (let i = 0; !(await ok()); i++) {
      if (i > 1200) throw new Error(`${what} never happened:\n${output.out}\n${output.err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const records = async () =>
    Number(
      (await psql(
        "SELECT CASE WHEN to_regclass('logbook_records') IS NULL THEN 0 ELSE (SELECT count(*) FROM logbook_records) END",
        url,
      )).out,
    );
  try {
    await until("the first round", async () => (await records()) === 2);
    await psql("ALTER TABLE logbook_conversations RENAME TO logbook_conversations_away", url);
    await until("a failed round reported", () => /trying again in \d+ s/.test(output.err));
    await psql("ALTER TABLE logbook_conversations_away RENAME TO logbook_conversations", url);
    await addTurns(world, file, A, project, [["Avocet two?", "Avocet two."]]);
    await until("the new records", async () => (await records()) === 4);
    child.kill("SIGINT");
    const status = await child.status;
    await drained;
    assert.equal(status.code, 0, output.err);
    assert.match(output.err, /^error: The team database .* failed: .*logbook_conversations/m);
    const rounds = output.out.trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(rounds.length >= 2);
    assert.ok(rounds.some((r) => r.records === 2 && r.complete), output.out);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already stopped
    }
    await world.cleanup();
  }
});

Deno.test({
  name: "team: what a push carries and how it is read back",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("details");
  const turns: [string, string][] = Array.from({ length: 3 }, (_, i) => [
    `Sandpiper question ${i}`,
    `Sandpiper answer ${i}`,
  ]);
  // No url in the config: LOGBOOK_TEAM_URL alone names the database.
  const { world, project, file } = await pushingWorld(null, A, turns, {
    machine: "details",
    raw: true,
  });
  world.vars.LOGBOOK_TEAM_URL = url;
  const agent = "a7c3e1f9b2d4";
  try {
    const subagentDir = join(file.slice(0, -".jsonl".length), "subagents");
    await Deno.mkdir(subagentDir, { recursive: true });
    await Deno.writeTextFile(
      join(subagentDir, `agent-${agent}.jsonl`),
      claudeTranscript(A, project, [["Osprey subagent task", "Osprey subagent done"]])
        .replaceAll('"isSidechain":false', `"isSidechain":true,"agentId":"${agent}"`),
    );
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);

    await t.step(
      "LOGBOOK_TEAM_URL alone is enough, and raw: true sends the exact bytes",
      async () => {
        const sent = pushed(await runCli("push", ["--json"], world.vars));
        assert.equal(sent.records, 8);
        const raw = await psql(
          `SELECT encode(string_agg(raw, ''::bytea ORDER BY id), 'base64') FROM logbook_records
         WHERE conversation_key = 'claude:${A}'`,
          url,
        );
        const bytes = Uint8Array.from(atob(raw.out.replaceAll("\n", "")), (c) => c.charCodeAt(0));
        assert.deepEqual(bytes, await Deno.readFile(file));
      },
    );

    await t.step("a push with nothing new writes no conversation row", async () => {
      const versions = () =>
        psql(
          "SELECT string_agg(key || ':' || xmin, ',' ORDER BY key) FROM logbook_conversations",
          url,
        );
      const before = await versions();
      const again = pushed(await runCli("push", ["--json"], world.vars));
      assert.equal(again.records, 0);
      assert.equal((await versions()).out, before.out);
    });

    await t.step("--no-subagents leaves subagent conversations out of a team search", async () => {
      const withThem = await runCli("search", ["--team", "osprey", "--json"], world.vars);
      assert.equal(withThem.code, 0, withThem.stderr);
      assert.match(withThem.stdout, /agent-a7c3e1f9b2d4/);
      const without = await runCli("search", ["--team", "osprey", "--no-subagents"], world.vars);
      assert.equal(without.code, 1, without.stdout);
    });

    await t.step("show --team pages a conversation to its end", async () => {
      const seen: string[] = [];
      let args = ["--team", `claude:${A}`, "--limit", "4"];
      for (let page = 0; page < 5; page++) {
        const shown = await runCli("show", args, world.vars);
        assert.equal(shown.code, 0, shown.stderr);
        // Each record's text follows its time and role (the first page's title does not).
        seen.push(...[...shown.stdout.matchAll(/^\d\d:\d\d \w+\n(.*)$/gm)].map((m) => m[1]!));
        const more = /^more: logbook show (.*)$/m.exec(shown.stderr);
        if (!more) break;
        args = more[1]!.split(" ");
      }
      assert.deepEqual(seen, turns.flat());
      const json = await runCli(
        "show",
        ["--team", `claude:${A}`, "--limit", "4", "--json"],
        world.vars,
      );
      const page = JSON.parse(json.stdout);
      assert.equal(page.records.length, 4);
      assert.equal(page.next, page.records[3].id);
    });

    await t.step("--dry-run reports the forgets the push would carry", async () => {
      // The session and its subagent.
      assert.equal((await runCli("forget", [`claude:${A}`], world.vars)).code, 0);
      const plan = JSON.parse((await runCli("push", ["--dry-run", "--json"], world.vars)).stdout);
      assert.equal(plan.forgets, 2);
      const text = await runCli("push", ["--dry-run"], world.vars);
      assert.match(text.stdout, /and remove 2 forgotten conversations from the team database/);
      const sent = pushed(await runCli("push", ["--json"], world.vars));
      assert.equal(sent.forgotten, 2);
      const plan2 = JSON.parse((await runCli("push", ["--dry-run", "--json"], world.vars)).stdout);
      assert.equal(plan2.forgets, 0);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: a push holds a bounded batch in memory, counted in decoded bytes",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("memory");
  // Answers of 60 KiB that zstd stores in a few hundred bytes each.
  const turns: [string, string][] = Array.from({ length: 40 }, (_, i) => [
    `Curlew ${i}?`,
    `curlew ${i} `.repeat(6000).slice(0, 60 * 1024),
  ]);
  const { world } = await pushingWorld(url, A, turns, { machine: "memory" });
  try {
    const local = new DatabaseSync(join(world.data, "history.db"), { readOnly: true });
    const sizes = local.prepare(
      "SELECT sum(length(raw)) AS stored, sum(coalesce(length, length(raw))) AS decoded FROM records",
    ).get() as { stored: number; decoded: number };
    local.close();
    assert.ok(sizes.stored < 512 * 1024, `stored compressed: ${sizes.stored}`);
    assert.ok(sizes.decoded > 2 << 20, `decoded: ${sizes.decoded}`);
    const sent = pushed(await runCli("push", ["--json"], world.vars));
    assert.equal(sent.records, 80);
    assert.ok(sent.batches >= 3, `batches: ${sent.batches}`);
    assert.ok(sent.largestBatch <= (1 << 20) + 2 * 64 * 1024, `largest: ${sent.largestBatch}`);
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: hostile transcript text reaches search --team and show --team shown, not obeyed",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("hostile");
  const hostile = [
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "\u009b31m",
    "overwrite\rX",
  ].join(" ");
  const { world } = await pushingWorld(url, A, [
    [`Deploy the ruff ${hostile}`, `Ruff deployed ${hostile}`],
  ], { machine: "hostile" });
  try {
    pushed(await runCli("push", ["--json"], world.vars));
    for (
      const args of [["search", "--team", "ruff"], ["show", "--team", `claude:${A}`]] as const
    ) {
      const [command, ...rest] = args;
      const run = await runCli(command, rest, world.vars);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /ruff/i);
      for (const [name, text] of [["stdout", run.stdout], ["stderr", run.stderr]]) {
        // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
        const raw = text!.match(/[\0-\x08\x0b-\x1f\x7f-\x9f]/g) ?? [];
        assert.deepEqual(raw, [], `${command} --team ${name}: ${JSON.stringify(text)}`);
      }
      assert.match(run.stdout, /␛/, "the escapes are shown");
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name:
    "team: rows pushed before records had a uid get theirs, and what the old cursor skipped is sent",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("legacy");
  const { world } = await pushingWorld(url, A, [
    ["Shrike one?", "Shrike one."],
    ["Shrike two?", "Shrike two."],
  ], { machine: "old" });
  try {
    // The schema as 0001 and 0002 left it, and what a push of that time sent: every record but
    // the first, which its per-project cursor had skipped.
    const setup = [
      "CREATE TABLE logbook_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      ...TEAM_MIGRATIONS.slice(0, 2).flatMap((m) => [
        m.sql,
        `INSERT INTO logbook_migrations (name) VALUES ('${m.name}')`,
      ]),
    ];
    for (const sql of setup) assert.equal((await psql(sql, url)).code, 0, sql);
    const sent = withStore(world, (store, ctx) => {
      const deriver = new TextDeriver(store, ADAPTERS, redactorFor(ctx));
      const rows = store.db.prepare("SELECT * FROM records ORDER BY id")
        .all() as unknown as RecordRow[];
      return rows.map((row) => ({
        id: row.id,
        kind: row.kind,
        role: row.role,
        text: deriver.textOf(row),
      }));
    });
    assert.equal(sent.length, 4);
    const old = [
      "INSERT INTO logbook_machines (machine) VALUES ('old')",
      `INSERT INTO logbook_conversations (machine, key, agent, messages) VALUES ('old', 'claude:${A}', 'claude', 4)`,
      ...sent.slice(1).map((r) =>
        `INSERT INTO logbook_records (machine, record_id, conversation_key, kind, role, text)
         VALUES ('old', ${r.id}, 'claude:${A}', '${r.kind}', '${r.role}', $t$${r.text}$t$)`
      ),
      `INSERT INTO logbook_cursors (machine, project, record_cursor) VALUES ('old', 'x', ${
        sent.at(-1)!.id
      })`,
    ];
    for (const sql of old) assert.equal((await psql(sql, url)).code, 0, sql);

    const upgraded = pushed(await runCli("push", ["--json"], world.vars));
    assert.equal(upgraded.records, 1, "the record the old cursor skipped");
    assert.equal(upgraded.already, 3, "the three sent before, known by their new uid");
    const rows = await psql(
      "SELECT count(*) || '/' || count(DISTINCT uid) || '/' || count(uid) FROM logbook_records",
      url,
    );
    assert.equal(rows.out, "4/4/4");
    const texts = await psql(
      "SELECT string_agg(text, '|' ORDER BY id) FROM logbook_records",
      url,
    );
    assert.equal(texts.out, [...sent.slice(1), sent[0]!].map((r) => r.text).join("|"));
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name:
    "team: 0004 drops the trigram index of whole texts, and CJK pushed before it is still found",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("lighter");
  const { world } = await pushingWorld(url, A, [["Grebe?", "Grebe."]], { machine: "new" });
  try {
    const setup = [
      "CREATE TABLE logbook_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      ...TEAM_MIGRATIONS.slice(0, 3).flatMap((m) => [
        m.sql,
        `INSERT INTO logbook_migrations (name) VALUES ('${m.name}')`,
      ]),
      "INSERT INTO logbook_machines (machine) VALUES ('old')",
      `INSERT INTO logbook_conversations (machine, key, agent, messages) VALUES ('old', 'claude:${B}', 'claude', 1)`,
      `INSERT INTO logbook_records (machine, record_id, conversation_key, kind, role, text, uid)
       VALUES ('old', 1, 'claude:${B}', 'message', 'assistant',
         'The grebe notes: 我们的缓存策略是按需加载 (lazy) for now', sha256('old'))`,
    ];
    for (const sql of setup) assert.equal((await psql(sql, url)).code, 0, sql);
    const migrated = await runCli("push", ["--migrate", "--json"], world.vars);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(JSON.parse(migrated.stdout).applied, [
      "0004_lighter_indexes",
      "0005_words_as_read",
      "0006_words_in_the_row",
    ]);

    const indexes = await psql(
      "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes " +
        "WHERE tablename = 'logbook_records' AND indexdef LIKE '%gin_trgm_ops%'",
      url,
    );
    assert.equal(indexes.out, "logbook_records_cjk");
    const cjk = await psql("SELECT cjk FROM logbook_records", url);
    assert.equal(cjk.out, "我们的缓存策略是按需加载");
    const plan = await psql(
      "SET enable_seqscan = off; EXPLAIN SELECT id FROM logbook_records r " +
        "WHERE r.cjk ILIKE '%缓存策%' AND r.text ILIKE '%缓存策%'",
      url,
    );
    assert.match(plan.out, /logbook_records_cjk/);

    const found = await runCli("search", ["--team", "缓存策略", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(hits.map((h) => h.machine), ["old"]);
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: a word written with an invisible character is found as a reader sees it, " +
    "pushed before 0005 or after",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("invisible");
  const { world } = await pushingWorld(url, A, [
    ["Who filed the e\u00adgret report?", "The dunlin team did."],
  ], { machine: "new" });
  try {
    const setup = [
      "CREATE TABLE logbook_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      ...TEAM_MIGRATIONS.slice(0, 4).flatMap((m) => [
        m.sql,
        `INSERT INTO logbook_migrations (name) VALUES ('${m.name}')`,
      ]),
      "INSERT INTO logbook_machines (machine) VALUES ('old')",
      `INSERT INTO logbook_conversations (machine, key, agent, messages) VALUES ('old', 'claude:${B}', 'claude', 1)`,
      `INSERT INTO logbook_records (machine, record_id, conversation_key, kind, role, text, uid)
       VALUES ('old', 1, 'claude:${B}', 'message', 'assistant',
         'The sand\u200bpiper count is in', sha256('old'))`,
    ];
    for (const sql of setup) assert.equal((await psql(sql, url)).code, 0, sql);
    pushed(await runCli("push", ["--json"], world.vars));
    const machines = async (query: string) => {
      const found = await runCli("search", ["--team", query, "--json"], world.vars);
      assert.equal(found.code, 0, `${query}: ${found.stderr}`);
      return found.stdout.trim().split("\n").map((line) => JSON.parse(line).machine);
    };
    assert.deepEqual(await machines("sandpiper"), ["old"], "pushed before, indexed again");
    assert.deepEqual(await machines("egret"), ["new"], "pushed after");
    assert.deepEqual(await machines("sand\u200dpiper"), ["old"], "typed with one");
    const kept = await psql(
      "SELECT count(*) FROM logbook_records WHERE index_text IS NOT NULL",
      url,
    );
    assert.equal(kept.out, "0", "the text without them is never stored");
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team ranks what Codex told the model below what was said, as search does",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("injected");
  const world = await makeWorld();
  try {
    const project = join(world.dir, "src", "atlas");
    await Deno.mkdir(project, { recursive: true });
    placeCodexContextRollout(world, project);
    await configure(world, { url, projects: [project], machine: "atlas" });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    pushed(await runCli("push", ["--json"], world.vars));
    const found = await runCli("search", ["--team", "gazetteer", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    const hits = found.stdout.trim().split("\n").map((line) => JSON.parse(line));
    // PostgreSQL's parser keeps a path whole: the environment's `<cwd>…/gazetteer` is no hit.
    assert.equal(hits.length, 3, found.stdout);
    assert.match(hits[0].snippet, CONTEXT_PROMPT, "the prompt ranks first");
    const rest = hits.slice(1).map((h: { role: string }) => h.role).sort();
    assert.deepEqual(rest, ["developer", "user"], "and the rules are still found");
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: PostgreSQL tells Codex's context from the pushed text as isCodexContext does",
  ignore: typeof pg === "string",
}, async () => {
  if (typeof pg === "string") return;
  const texts = [
    "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>",
    "  \n# AGENTS.md instructions for /x\n\n- rules",
    '<image name=[Image #1] path="/tmp/a.png">\n</image>\nWhat does this chart show?',
    "<image name=[Image #2]>\n</image>\n<environment_context>\n</environment_context>",
    "What does <b> do here?",
    "<image name=[Image #1]>\n</image>",
    "</image>",
    "# AGENTS.md is where the rules go?",
  ];
  const values = texts.map((t) => `(${JSON.stringify(texts.indexOf(t))}, $t$${t}$t$)`).join(", ");
  const run = await psql(
    `SELECT n, substr(t, 1, 2048) ~ '${CONTEXT_START}' FROM (VALUES ${values}) v(n, t) ORDER BY n`,
  );
  assert.equal(run.code, 0, run.err);
  const told = run.out.split("\n").map((line) => line.endsWith("|t"));
  assert.deepEqual(told, texts.map(isCodexContext));
  assert.deepEqual(told, [true, true, false, true, false, false, false, false]);
});

Deno.test({
  name: "team: a secret in a project's directory never leaves; search --team finds the project",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const world = await makeWorld();
  const url = await pg.createDatabase("pathy");
  const dump = async () => {
    const out = await pg.run("pg_dump", ["-d", "pathy", "--data-only"]);
    assert.equal(out.code, 0, out.stderr);
    return out.stdout;
  };
  try {
    const cwd = await placeSecretPathSession(world);
    await configure(world, { url, projects: [cwd], machine: "pathy" });
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    await t.step("push sends the project and directory as shown, the text redacted", async () => {
      const pushed = await runCli("push", [], world.vars);
      assert.equal(pushed.code, 0, pushed.stderr);
      const sent = await dump();
      assert.ok(sent.includes(SECRET_PATH_WORD), "the dump has the data");
      assert.deepEqual(leaks(sent), []);
      const row = await psql("SELECT project, cwd FROM logbook_conversations", url);
      assert.equal(row.out, `${shownPath(cwd)}|${shownPath(cwd)}`);
    });
    await t.step("search --team narrows to the project by its directory or as shown", async () => {
      for (const project of [cwd, shownPath(cwd)]) {
        const found = await runCli(
          "search",
          ["--team", SECRET_PATH_WORD, "--project", project, "--json"],
          world.vars,
        );
        assert.equal(found.code, 0, found.stderr);
        assert.match(found.stdout, /"machine":"pathy"/);
        assert.deepEqual(leaks(found.stdout), []);
      }
    });
    await t.step("a row pushed with its path whole is sent again as shown", async () => {
      const raw = cwd.replaceAll("'", "''");
      await psql(`UPDATE logbook_conversations SET project = '${raw}', cwd = '${raw}'`, url);
      assert.deepEqual(leaks(await dump()), ["the token"]);
      assert.equal((await runCli("push", ["--quiet"], world.vars)).code, 0);
      assert.deepEqual(leaks(await dump()), []);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team counts a typed prompt once, show --team takes short ids, and an " +
    "empty search suggests word*",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("prompts");
  const { world, project } = await pushingWorld(url, A, [
    ["Why does the kestrel ledger drift overnight? 账本漂移很慢", "A timezone bug in the rollup"],
  ], { machine: "prompts" });
  // Only typed, in a session whose transcript is gone: its id begins as A's does.
  const typedOnly = "a51c9d04-7b2e-4f18-8c3a-5e6f7a8b9c0d";
  const at = Date.UTC(2026, 10, 2, 10, 0);
  const history = [
    { display: "Why does the kestrel ledger drift overnight? 账本漂移很慢", sessionId: A },
    { display: "Is the kestrel export done yet? 又漂移了", sessionId: typedOnly },
  ].map((line) => JSON.stringify({ ...line, pastedContents: {}, timestamp: at, project }));
  try {
    await Deno.writeTextFile(join(world.claude, "history.jsonl"), history.join("\n") + "\n");
    assert.equal((await runCli("reindex", ["--quiet"], world.vars)).code, 0);
    pushed(await runCli("push", ["--json"], world.vars));

    await t.step("a typed prompt is one hit, as in a local search", async () => {
      const hits = async (args: string[], query = "kestrel") => {
        const run = await runCli("search", [...args, query, "--json"], world.vars);
        assert.equal(run.code, 0, run.stderr);
        return run.stdout.trim().split("\n").map((l) => JSON.parse(l))
          .map((h) => `${h.conversation} ${h.kind}/${h.role}`).sort();
      };
      const expected = [`claude:${A} message/user`, `claude:${typedOnly} prompt/user`];
      assert.deepEqual(await hits([]), expected);
      assert.deepEqual(await hits(["--team"]), expected);
      // The same by substring (CJK inside a run), with a filter on conversations and without.
      for (const args of [[], ["--agent", "claude"]]) {
        assert.deepEqual(await hits(args, "漂移"), expected);
        assert.deepEqual(await hits(["--team", ...args], "漂移"), expected);
      }
      const messages = await runCli(
        "search",
        ["--team", "kestrel", "--kind", "message", "--json"],
        world.vars,
      );
      assert.equal(messages.stdout.trim().split("\n").length, 2, "typed prompts are messages");
    });

    await t.step("show --team takes a unique prefix of an id or a native id", async () => {
      for (const id of [`claude:${A.slice(0, 8)}`, A.slice(0, 8), "claude:a51c0"]) {
        const shown = await runCli("show", ["--team", id], world.vars);
        assert.equal(shown.code, 0, `${id}: ${shown.stderr}`);
        assert.match(shown.stdout, /timezone bug/);
        assert.ok(shown.stdout.includes(`claude:${A}  from prompts`), shown.stdout);
      }
      const both = await runCli("show", ["--team", "claude:a51c"], world.vars);
      assert.equal(both.code, 1);
      assert.match(both.stderr, /Conversation id "claude:a51c" is ambiguous: it matches /);
      assert.ok(both.stderr.includes(`"claude:${A}"`) && both.stderr.includes(typedOnly));
      const none = await runCli("show", ["--team", "claude:ffff"], world.vars);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /No conversation "claude:ffff" in the team database/);
      const elsewhere = await runCli(
        "show",
        ["--team", A.slice(0, 8), "--machine", "desk"],
        world.vars,
      );
      assert.match(elsewhere.stderr, /No conversation ".*" in what machine "desk" pushed/);
    });

    await t.step("an empty search --exact suggests a prefix, and the prefix finds", async () => {
      const none = await runCli("search", ["--team", "kestr", "--exact"], world.vars);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /No matches in the team database .*: try "kestr\*"/);
      const prefixed = await runCli("search", ["--team", "kestr*", "ledger", "--json"], world.vars);
      assert.equal(prefixed.code, 0, prefixed.stderr);
      assert.equal(prefixed.stdout.trim().split("\n").length, 1);
      const nothing = await runCli("search", ["--team", "zzzqx"], world.vars);
      assert.doesNotMatch(nothing.stderr, /try/);
      const { app, services } = appFor(world);
      try {
        const api = await (await request(app, "/api/team/search?q=kestr&forgive=exact")).json();
        assert.equal(api.suggestion, "kestr*");
        const page = await (await request(app, "/?q=kestr&scope=team&forgive=exact")).text();
        assert.match(
          page,
          /No matches in the team database; indexed words begin with it: try <a href="\/\?q=kestr\*&amp;scope=team&amp;forgive=exact">kestr\*<\/a>/,
        );
      } finally {
        services.searches.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team forgives as a local search does: prefix, forms, spelling, --exact",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("forgiving");
  const { world } = await pushingWorld(url, A, [
    [
      "The signing keys for the lanternfish service expire on Friday",
      "I rotated the signing keys for the lanternfish service",
    ],
    ["We keep rotating log files by hand", "Rotating logs is handled by logrotate now"],
  ], { machine: "forgiving" });
  try {
    pushed(await runCli("push", ["--json"], world.vars));
    const team = async (...args: string[]) => {
      const run = await runCli("search", ["--team", ...args, "--json"], world.vars);
      const hits = run.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      return { ...run, hits };
    };
    await t.step("found as typed: nothing forgiven, each word matched as typed", async () => {
      const found = await team("lanternfish");
      assert.equal(found.code, 0, found.stderr);
      assert.equal(found.stderr, "");
      assert.deepEqual(found.hits[0].matched, [
        { word: "lanternfish", term: "lanternfish", how: "exact" },
      ]);
    });
    await t.step("the first letters", async () => {
      const found = await team("lanternf");
      assert.equal(found.hits.length, 2);
      assert.equal(
        found.stderr,
        'note: no hits for "lanternf"; showing "lanternf*" (--exact for none)\n',
      );
      assert.deepEqual(found.hits[0].matched, [
        { word: "lanternf", term: "lanternfish", how: "prefix" },
      ]);
    });
    await t.step("other forms of two words in another order", async () => {
      const found = await team("keys", "rotation");
      assert.equal(found.code, 0, found.stderr);
      assert.deepEqual(found.hits.map((h) => h.role), ["assistant"]);
      assert.match(found.stderr, /^note: no hits for "keys rotation"; showing ".*rotated.*"/);
      assert.deepEqual(found.hits[0].matched, [
        { word: "keys", term: "keys", how: "exact" },
        { word: "rotation", term: "rotated", how: "form" },
      ]);
    });
    await t.step("a typo, its closest word found by pg_trgm", async () => {
      for (const typo of ["lanternfsh", "lnaternfish"]) {
        const found = await team(typo);
        assert.equal(found.code, 0, found.stderr);
        assert.equal(found.hits.length, 2, typo);
        assert.match(found.stderr, new RegExp(`showing ".*lanternfish.*"`), typo);
        assert.deepEqual(found.hits[0].matched, [
          { word: typo, term: "lanternfish", how: "spelling" },
        ]);
      }
    });
    await t.step("--exact, a quoted phrase and a negated word are not forgiven", async () => {
      assert.equal((await team("lanternfsh", "--exact")).code, 1);
      assert.equal((await team('"lanternfsh service"')).code, 1);
      assert.equal((await team("signing -keys")).code, 1);
    });
    await t.step("the team API and page say what they searched instead", async () => {
      const { app, services } = appFor(world);
      try {
        const api = await (await request(app, "/api/team/search?q=lanternfsh")).json();
        assert.equal(api.forgiven.how, "spelling");
        assert.equal(api.hits.length, 2);
        const exact = await (await request(app, "/api/team/search?q=lanternfsh&forgive=exact"))
          .json();
        assert.equal(exact.forgiven, null);
        const page = await (await request(app, "/?q=lanternf&scope=team")).text();
        assert.match(page, /No hits for &quot;lanternf&quot;; showing &quot;lanternf\*&quot;/);
        assert.ok(page.includes('href="/?q=lanternf&amp;scope=team&amp;forgive=exact"'), page);
      } finally {
        services.searches.close();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: search --team ranks the newest matches of a word too common to rank, and says so",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("common");
  const turns: [string, string][] = Array.from({ length: RANK_CANDIDATES / 2 + 50 }, (_, i) => [
    `plover question ${i}`,
    `plover answer ${i}`,
  ]);
  const { world } = await pushingWorld(url, A, turns, { machine: "common" });
  try {
    pushed(await runCli("push", ["--json"], world.vars));
    const found = await runCli("search", ["--team", "plover", "--json"], world.vars);
    assert.equal(found.code, 0, found.stderr);
    assert.equal(found.stdout.trim().split("\n").length, 20);
    assert.equal(
      found.stderr,
      "note: more than 2,000 records match: ranked the 2,000 most recently pushed; add words " +
        "or filters to rank them all\n",
    );
    const rare = await runCli("search", ["--team", "plover 7", "--json"], world.vars);
    assert.equal(rare.code, 0, rare.stderr);
    assert.equal(rare.stderr, "");
  } finally {
    await world.cleanup();
  }
});

Deno.test({
  name: "team: a word matched by many records is ranked from its newest matches, found window " +
    "by window, as one pass over all of them finds them",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const sql = await connectTeam(await pg.createDatabase("windows"));
  const asIs: Redactor = Object.assign((text: string) => text, {
    between: (_before: string, text: string) => text,
  });
  try {
    await migrateTeam(sql);
    // Nine times the probe's records: "heron" in one in ten, as often as three times in some,
    // in conversations of either agent (so a tenth of the probe holds it, for codex a twentieth,
    // and more windows follow the first); every seventh record a prompt, whose conversation
    // decides whether it counts; a fifth of the conversations without messages.
    const records = PROBE_IDS * 9;
    await sql`INSERT INTO logbook_machines (machine) VALUES ('w')`;
    await sql`
      INSERT INTO logbook_conversations (machine, key, agent, messages)
      SELECT 'w', (CASE WHEN i % 2 = 0 THEN 'codex:' ELSE 'claude:' END) || i,
        CASE WHEN i % 2 = 0 THEN 'codex' ELSE 'claude' END, CASE WHEN i % 5 = 0 THEN 0 ELSE 3 END
      FROM generate_series(0, 58) i`;
    await sql`
      INSERT INTO logbook_records (machine, uid, record_id, conversation_key, ts, kind, role, text)
      SELECT 'w', sha256(i::text::bytea), i,
        (CASE WHEN i % 59 % 2 = 0 THEN 'codex:' ELSE 'claude:' END) || (i % 59),
        timestamptz '2026-01-01' + i * interval '1 second',
        CASE WHEN i % 7 = 0 THEN 'prompt' ELSE 'message' END,
        CASE WHEN i % 3 = 0 THEN 'user' ELSE 'assistant' END,
        CASE WHEN i % 10 = 0 THEN repeat('heron ', 1 + i % 3) || 'wading bird ' || i
          ELSE 'a quiet marsh ' || i END || CASE WHEN i = 777 THEN ' bittern' ELSE '' END
      FROM generate_series(1, ${records}) i`;
    await sql`ANALYZE`;
    // What a search ranks, in one plain statement: the newest matches that count, best first
    // (no text here is what Codex injects, so answers alone weigh more).
    const reference = async (word: string, agent?: Agent) =>
      (await sql<{ id: number }[]>`
        WITH m AS (
          SELECT r.id FROM logbook_records r
            JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
          WHERE r.tsv @@ to_tsquery('simple', ${word}) AND (r.kind <> 'prompt' OR c.messages = 0)
            ${agent ? sql`AND c.agent = ${agent}` : sql``}
          ORDER BY r.id DESC LIMIT ${RANK_CANDIDATES})
        SELECT r.id FROM m JOIN logbook_records r ON r.id = m.id
          JOIN logbook_conversations c ON c.machine = r.machine AND c.key = r.conversation_key
        ORDER BY ts_rank(r.tsv, to_tsquery('simple', ${word})) * CASE
            WHEN r.kind = 'message' AND r.role = 'assistant' THEN ${ANSWER_BOOST} ELSE 1.0
          END DESC, r.ts DESC, r.id DESC
        LIMIT 20`).map((row) => Number(row.id));
    // How many windows a search read: each is a range of ids.
    let windows = 0;
    const windowed = async (word: string, agent?: Agent) =>
      await sql.begin(async (tx) =>
        await newestMatches(
          new Proxy(tx, {
            apply(target, self, args) {
              if ((args[0] as string[]).join("?").startsWith("AND r.id >")) windows++;
              return Reflect.apply(target, self, args);
            },
          }),
          `'${word}'`,
          filterSql(sql, asIs, { query: word, ...(agent ? { agent } : {}) }),
          RANK_CANDIDATES,
          async () => {},
        )
      );
    for (const agent of [undefined, "codex" as const]) {
      windows = 0;
      const ids = await windowed("heron", agent);
      assert.ok(ids, "the newest records hold many matches: read by windows");
      assert.equal(ids.length, RANK_CANDIDATES);
      // The planner's statistics hold "heron": the first window is sized from them and holds the
      // newest 2,000. The codex filter is a conversation's, which the plan does not count: half
      // as many match there, so a second window may follow.
      assert.ok(windows >= 1 && windows <= (agent ? 2 : 1), `${windows} windows`);
      const found = await teamSearch(sql, asIs, {
        query: "heron",
        limit: 20,
        ...(agent ? { agent } : {}),
      });
      assert.deepEqual(found.hits.map((hit) => hit.record), await reference("heron", agent));
      assert.match(found.note ?? "", /^more than 2,000 records match/);
    }
    assert.equal(await windowed("bittern"), null, "a rare word is read in one pass");
    const rare = await teamSearch(sql, asIs, { query: "bittern" });
    assert.deepEqual(rare.hits.map((hit) => hit.record), await reference("bittern"));
  } finally {
    await sql.end();
  }
});

Deno.test({
  name: "team: both clients ask the server to compile none of logbook's statements (JIT off)",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("nojit");
  for (const connect of [connectQuick, connectTeam]) {
    const sql = await connect(url);
    assert.ok(sql, connect.name);
    try {
      const [row] = await sql<{ jit: string }[]>`SELECT current_setting('jit') AS jit`;
      assert.equal(row?.jit, "off", connect.name);
    } finally {
      await sql.end();
    }
  }
});

Deno.test({
  name: "team: search --team answers without loading the postgres driver",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const url = await pg.createDatabase("quick");
  const { world } = await pushingWorld(url, A, [["Where is the avocet report?", "In docs."]], {
    machine: "quick",
  });
  try {
    pushed(await runCli("push", ["--json"], world.vars));
    // The project's config, but the driver a module that fails when loaded.
    const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
    config.imports.postgres = "data:text/javascript,throw new Error('the driver was loaded')";
    const configFile = join(world.dir, "deno.json");
    await Deno.writeTextFile(configFile, JSON.stringify(config));
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        configFile,
        "--no-lock",
        ...await taskFlags("search"),
        join(ROOT, "commands", "search.ts"),
        "--team",
        "avocet",
        "--json",
      ],
      env: { ...childBaseEnv(), ...world.vars, NO_COLOR: "1", LOGBOOK_SOURCES: "1" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, err);
    const hits = new TextDecoder().decode(output.stdout).trim().split("\n");
    assert.equal(hits.length, 1);
    assert.equal(JSON.parse(hits[0]!).machine, "quick");
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
