// logbook's own sessions are a source too: their messages are searched with everything else,
// as `logbook:<id>`, once, through renames and compactions.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../../commands/reindex.ts";
import { main as search } from "../../../commands/search.ts";
import { chatSetup } from "../../../lib/sessions/setup.ts";
import { ChatSession } from "../../../lib/sessions/turn.ts";
import { loadContext } from "../../../lib/context.ts";
import { envFrom } from "../../../lib/env.ts";
import { createModelClient } from "../../../lib/sessions/model.ts";
import { projectOf } from "../../../lib/paths.ts";
import { newRecord, SessionStore } from "../../../lib/sessions/records.ts";
import { captureIo, makeWorld, manifest, runCli, type World } from "../../_helpers.ts";
import { startOpenAiServer } from "../../_openai_server.ts";

async function capture(world: World, env = world.env): Promise<number> {
  const io = captureIo();
  assert.equal(await reindex(["--json"], io, env), 0, io.stderr());
  return JSON.parse(io.stdout()).records;
}

async function hits(env: World["env"], query: string, extra: string[] = []) {
  const io = captureIo();
  const code = await search([query, "--json", ...extra], io, env);
  return code === 0 ? io.stdout().trim().split("\n").map((l) => JSON.parse(l)) : [];
}

Deno.test("a logbook session is searchable as logbook:<id>, once, through rename and compaction", async () => {
  const world = await makeWorld();
  const server = startOpenAiServer({
    reply: (req) =>
      req.messages[0]?.content.startsWith("You are compacting")
        ? "SUMMARY"
        : "the answer is gannet-velvet",
  });
  try {
    const project = join(world.dir, "project");
    Deno.mkdirSync(project);
    const env = envFrom({
      ...world.vars,
      INIT_CWD: project,
      OPENAI_BASE_URL: server.baseUrl,
      LOGBOOK_MODEL: "m",
    });
    const ctx = loadContext({ env, agent: "logbook" });
    const setup = chatSetup(ctx, {
      incognito: false,
      model: createModelClient({ baseUrl: server.baseUrl, model: "m" }),
    });
    const session = ChatSession.start({ ...setup.options, cwd: project, stream: false });
    await session.turn("how do I tune the heron-lattice?");
    await capture(world, env);

    const found = await hits(env, "heron-lattice");
    assert.equal(found.length, 1);
    assert.equal(found[0].conversation, `logbook:${session.id}`);
    assert.equal(found[0].agent, "logbook");
    assert.equal(found[0].role, "user");
    assert.equal(found[0].project, project);
    assert.equal(
      (await hits(env, "gannet-velvet", ["--agent", "logbook", "--role", "assistant"])).length,
      1,
    );
    assert.equal(await capture(world, env), 0, "nothing new");

    session.rename("Heron work");
    await session.turn("second question");
    await session.turn("third question");
    const compacted = await session.compact();
    assert.equal(compacted.outcome, "compacted");
    const added = await capture(world, env);
    assert.ok(added >= 4, "the new turns and the renamed session");
    assert.equal(
      (await hits(env, "heron-lattice")).length,
      1,
      "compaction moved it, not copied it",
    );
    const io = captureIo();
    assert.equal(await search(["second question", "--json"], io, env), 0);

    const show = await import("../../../commands/show.ts");
    const out = captureIo();
    assert.equal(await show.main([`logbook:${session.id}`, "--json"], out, env), 0);
    assert.equal(JSON.parse(out.stdout()).conversation.title, "Heron work");
  } finally {
    await server.close();
    await world.cleanup();
  }
});

Deno.test("a fork shows what it copied but a search finds it once, in the original", async () => {
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    const project = join(world.dir, "project");
    Deno.mkdirSync(project);
    world.vars.INIT_CWD = project;
    const env = envFrom(world.vars);
    const store = new SessionStore(loadContext({ env }).paths);
    const source = newRecord({
      cwd: project,
      project: projectOf(project).root,
      branch: "main",
      build: "0.1.0",
      now: Date.parse("2026-02-01T00:00:00Z"),
      title: "Sluice",
    });
    source.messages.push(
      { role: "user", content: "why does the ptarmigan-sluice stall?" },
      { role: "assistant", content: "its queue never drains" },
    );
    store.save(source);
    const forked = await runCli("fork", [source.id], world.vars);
    assert.equal(forked.code, 0, forked.stderr);
    const fork = store.read(projectOf(project).key, forked.stdout.trim());
    assert.equal(fork.forkedMessages, 2);
    fork.messages.push({ role: "user", content: "and the kestrel-dune one?" });
    store.save(fork);
    await capture(world, env);

    const copied = await hits(env, "ptarmigan-sluice");
    assert.deepEqual(copied.map((h) => h.conversation), [`logbook:${source.id}`]);
    const own = await hits(env, "kestrel-dune");
    assert.deepEqual(own.map((h) => h.conversation), [`logbook:${fork.id}`]);
    // The fork still shows the messages it copied.
    const io = captureIo();
    const { main: show } = await import("../../../commands/show.ts");
    assert.equal(await show([`logbook:${fork.id}`, "--json"], io, env), 0, io.stderr());
    assert.match(io.stdout(), /ptarmigan-sluice/);

    // A fork of another agent's conversation: its words are still found once, in Claude's.
    const main = manifest<{ case: string; conversation: string }>("claude")
      .find((e) => e.case === "main")!;
    const other = await runCli("fork", [main.conversation], {
      ...world.vars,
      INIT_CWD: "/home/dev/src/alpha",
    });
    assert.equal(other.code, 0, other.stderr);
    await capture(world, env);
    const prompt = await hits(env, '"quokka-lantern"');
    assert.deepEqual(prompt.map((h) => h.conversation), [main.conversation]);
  } finally {
    await world.cleanup();
  }
});
