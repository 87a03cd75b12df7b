// The small PostgreSQL client of `search --team` (lib/team/wire.ts) against a real server: the
// driver's API as a team search uses it, values both ways, errors with their SQLSTATE,
// transactions, SCRAM-SHA-256, and the URLs it leaves to the driver. Skips without PostgreSQL.

import assert from "node:assert/strict";
import { SCRAM_ROLE, startPostgres } from "../../postgres_server.ts";
import { connectQuick } from "../../../lib/team/wire.ts";

const pg = await startPostgres();
if (typeof pg === "string") console.warn(`wire tests skipped: ${pg}`);

Deno.test({
  name: "connectQuick() runs a team search's queries as the driver does",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  if (typeof pg === "string") return;
  const sql = await connectQuick(pg.url);
  assert.ok(sql, "a plain URL with trust authentication");
  try {
    await t.step("fragments, raw text and values in order, each type read back", async () => {
      const when = new Date("2026-11-02T03:04:05.678Z");
      const none = sql``;
      const where = sql`AND ${"b"} = ${"b"}`;
      const [row] = await sql<Record<string, unknown>[]>`
        SELECT ${1}::int AS one, ${"it's"} AS text, ${when}::timestamptz AS at,
          ${null}::text AS nothing, 9007199254740991::bigint AS big, 0.5::real AS half,
          ${true}::boolean AS yes, ${sql.unsafe("'raw'")} AS raw
        WHERE true ${none} ${[where, sql`AND ${2} > ${1}`]}`;
      assert.deepEqual(row, {
        one: 1,
        text: "it's",
        at: when,
        nothing: null,
        big: 9007199254740991,
        half: 0.5,
        yes: true,
        raw: "raw",
      });
    });

    await t.step("rows of megabytes, and many rows, arrive whole", async () => {
      const [big] = await sql<{ text: string }[]>`SELECT repeat('ab缓', 1000000) AS text`;
      assert.equal(big?.text, "ab缓".repeat(1000000));
      const many = await sql<{ n: number }[]>`SELECT generate_series(1, 20000) AS n`;
      assert.equal(many.length, 20000);
      assert.equal(many.at(-1)?.n, 20000);
    });

    await t.step("a statement's error carries its SQLSTATE; the connection goes on", async () => {
      await assert.rejects(async () => await sql`SELECT 1 / 0`, {
        code: "22012",
        message: /division by zero/,
      });
      await assert.rejects(
        sql.begin(async (tx) => {
          await tx`SELECT set_config('statement_timeout', '50', true)`;
          await tx`SELECT pg_sleep(5)`;
        }),
        { code: "57014" },
      );
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM pg_class WHERE false`;
      assert.equal(row?.n, 0);
    });

    await t.step(
      "begin commits what it returns; a savepoint undoes only its own part",
      async () => {
        const rows = await sql.begin(async (tx) => {
          await tx`CREATE TEMP TABLE w (n int)`;
          await tx`INSERT INTO w VALUES (1)`;
          await assert.rejects(tx.savepoint(async (sp) => {
            await sp`INSERT INTO w VALUES (2)`;
            await sp`SELECT 1 / 0`;
          }));
          return await tx<{ n: number }[]>`SELECT n FROM w`;
        });
        assert.deepEqual(rows.map((r) => r.n), [1]);
      },
    );
  } finally {
    await sql.end();
  }
});

Deno.test({
  name: "connectQuick() signs in with SCRAM-SHA-256, and refuses a wrong password",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  const made = await pg.run("psql", [
    "-d",
    "team",
    "-c",
    `CREATE ROLE ${SCRAM_ROLE} LOGIN PASSWORD 'pä ss:w/rd'`,
  ]);
  assert.equal(made.code, 0, made.stderr);
  const url = (password: string) =>
    `postgres://${SCRAM_ROLE}:${encodeURIComponent(password)}@127.0.0.1:${pg.port}/team`;
  const sql = await connectQuick(url("pä ss:w/rd"));
  assert.ok(sql);
  try {
    const [row] = await sql<{ user: string }[]>`SELECT current_user AS user`;
    assert.equal(row?.user, SCRAM_ROLE);
  } finally {
    await sql.end();
  }
  await assert.rejects(connectQuick(url("wrong")), { code: "28P01" });
});

Deno.test({
  name: "connectQuick() leaves to the driver the URLs it cannot take",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg === "string") return;
  assert.equal(await connectQuick(`${pg.url}?sslmode=require`), null);
  assert.equal(await connectQuick(`postgres:///team?host=/run/postgresql`), null);
  assert.equal(await connectQuick(`postgres://127.0.0.1:${pg.port}/team`), null, "no user");
  assert.equal(await connectQuick("not a url"), null);
});

Deno.test({
  name: "wire: stop the test cluster",
  ignore: typeof pg === "string",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  if (typeof pg !== "string") await pg.stop();
});
