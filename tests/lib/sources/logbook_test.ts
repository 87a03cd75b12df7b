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
import { captureIo, makeWorld, type World } from "../../_helpers.ts";
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
