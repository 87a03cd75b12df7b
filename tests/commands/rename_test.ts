// `rename` as a user runs it: the record is rewritten at once (by id or unique prefix), an empty
// title is refused, and another agent's conversation cannot be renamed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { loadContext } from "../../lib/context.ts";
import { projectOf } from "../../lib/paths.ts";
import { newRecord, type SessionRecord, SessionStore } from "../../lib/sessions/records.ts";
import { captureIo, makeWorld, runCli, type World } from "../_helpers.ts";

async function projectWorld(): Promise<{ world: World; project: string; store: SessionStore }> {
  const world = await makeWorld();
  const project = join(world.dir, "project");
  Deno.mkdirSync(project);
  world.vars.INIT_CWD = project;
  return { world, project, store: new SessionStore(loadContext({ env: world.env }).paths) };
}

function saved(store: SessionStore, project: string): SessionRecord {
  const record = newRecord({
    cwd: project,
    project: projectOf(project).root,
    branch: "main",
    build: "0.1.0",
    now: Date.parse("2026-02-01T00:00:00Z"),
    title: "Retry helper",
  });
  record.messages.push({ role: "user", content: "why?" }, {
    role: "assistant",
    content: "because",
  });
  store.save(record);
  return record;
}

Deno.test("rename rewrites the record at once; an empty title is refused", async () => {
  const { world, project, store } = await projectWorld();
  try {
    const record = saved(store, project);
    const result = await runCli(
      "rename",
      [record.id.slice(0, 6), "dependency", "audit"],
      world.vars,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `Renamed ${record.id} to "dependency audit"\n`);
    const after = store.read(projectOf(project).key, record.id);
    assert.equal(after.title, "dependency audit");
    assert.ok(Date.parse(after.updatedAt) > Date.parse(record.updatedAt));
    assert.deepEqual(after.messages, record.messages);

    const empty = await runCli("rename", [record.id, "  "], world.vars);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^error: Cannot rename session ".*": the title is empty\n/);
    const none = await runCli("rename", [record.id], world.vars);
    assert.equal(none.code, 2);
    assert.equal(store.read(projectOf(project).key, record.id).title, "dependency audit");
  } finally {
    await world.cleanup();
  }
});

Deno.test("rename refuses another agent's conversation", async () => {
  const { world, project } = await projectWorld();
  try {
    const sid = "8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e";
    const dir = join(world.claude, "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(
      join(dir, `${sid}.jsonl`),
      JSON.stringify({
        type: "user",
        uuid: "u1",
        parentUuid: null,
        sessionId: sid,
        cwd: project,
        timestamp: "2026-04-01T09:00:00.000Z",
        message: { role: "user", content: "hello" },
      }) + "\n",
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const result = await runCli("rename", [sid, "new title"], world.vars);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `error: Cannot rename "claude:${sid}": only logbook's own sessions can be renamed\n`,
    );
  } finally {
    await world.cleanup();
  }
});
