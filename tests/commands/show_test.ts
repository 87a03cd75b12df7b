// `show` as a user runs it: pages bounded by count and bytes, JSON whose raw chunks rebuild
// the file, the raw bytes themselves, and a readable rendering.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { main as show } from "../../commands/show.ts";
import { captureIo, FIXTURES, makeWorld, manifest, runCli, type World } from "../_helpers.ts";

interface Entry {
  path: string;
  case: string;
  conversation: string;
  phrases: string[];
}

async function capturedWorld(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  return world;
}

Deno.test("show --json pages (a real subprocess) rebuild the long-line file byte for byte", async () => {
  const world = await capturedWorld();
  try {
    const entry = manifest<Entry>("claude").find((e) => e.case === "long-line")!;
    const chunks: Buffer[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const result = await runCli(
        "show",
        [entry.conversation, "--json", "--limit", "3", ...(after ? ["--after", after] : [])],
        world.vars,
      );
      assert.equal(result.code, 0, result.stderr);
      const page = JSON.parse(result.stdout);
      assert.equal(page.conversation.id, entry.conversation);
      assert.ok(page.records.length <= 3);
      for (const r of page.records) {
        assert.deepEqual(Object.keys(r), [
          "id",
          "source",
          "generation",
          "offset",
          "timestamp",
          "kind",
          "role",
          "text",
          "raw",
          "messageId",
          "partId",
        ]);
        chunks.push(Buffer.from(r.raw, "base64"));
      }
      after = page.next === null ? null : String(page.next);
      pages++;
    } while (after);
    assert.ok(pages > 2);
    const file = readFileSync(join(world.claude, entry.path));
    assert.ok(Buffer.concat(chunks).equals(file));
  } finally {
    await world.cleanup();
  }
});

Deno.test("show pages stop at about 512 KiB of raw bytes, one record may cross", async () => {
  const world = await makeWorld();
  try {
    // Lines of ~200 KB each: three of them cross 512 KiB.
    const dir = join(world.claude, "projects", "-home-dev-big");
    await Deno.mkdir(dir, { recursive: true });
    const sid = "0d6c1f53-2a51-4b6e-9b3c-1a2b3c4d5e6f";
    const lines = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({
        type: "user",
        sessionId: sid,
        cwd: "/home/dev/big",
        timestamp: `2026-09-0${i + 1}T10:00:00.000Z`,
        message: { role: "user", content: `page-${i} ` + "lorem ipsum ".repeat(17_000) },
      }));
    Deno.writeTextFileSync(join(dir, `${sid}.jsonl`), lines.join("\n") + "\n");
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const io = captureIo();
    assert.equal(await show([sid, "--json"], io, world.env), 0);
    const page = JSON.parse(io.stdout());
    const bytes = page.records.reduce(
      (n: number, r: { raw: string }) => n + Buffer.from(r.raw, "base64").length,
      0,
    );
    assert.ok(bytes >= 512 * 1024 && bytes < 512 * 1024 + 64 * 1024 + 1, `page of ${bytes} bytes`);
    assert.notEqual(page.next, null);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --raw prints the exact captured bytes, including invalid UTF-8", async () => {
  const world = await capturedWorld();
  try {
    const entry = manifest<Entry>("claude").find((e) => e.case === "invalid-utf8")!;
    const result = await runCli("show", [entry.conversation, "--raw"], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(Buffer.from(result.stdoutBytes).equals(readFileSync(join(world.claude, entry.path))));
  } finally {
    await world.cleanup();
  }
});

Deno.test("show renders roles and folds tool calls to one line", async () => {
  const world = await capturedWorld();
  try {
    const entry = manifest<Entry>("claude").find((e) => e.case === "main")!;
    const io = captureIo();
    assert.equal(await show([entry.conversation], io, world.env), 0);
    const out = io.stdout();
    assert.match(
      out,
      /^tundra-mosaic: nightly export batching$/m,
      "the custom title heads the page",
    );
    assert.match(out, /^\d\d:\d\d user$/m);
    assert.match(out, /^\d\d:\d\d assistant$/m);
    const toolLines = out.split("\n").filter((l) => / ▸ tool_call: /.test(l));
    assert.ok(toolLines.length >= 1);
    for (const line of toolLines) assert.ok(line.length < 140);
    assert.doesNotMatch(out, /base64/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show explains an unknown or ambiguous id", async () => {
  const world = await capturedWorld();
  try {
    const io = captureIo();
    assert.equal(await show(["no-such-conversation"], io, world.env), 1);
    assert.match(io.stderr(), /^error: No conversation "no-such-conversation"/);
    const io2 = captureIo();
    assert.equal(await show(["claude:"], io2, world.env), 1);
    assert.match(io2.stderr(), /is ambiguous/);
    const io3 = captureIo();
    assert.equal(await show([], io3, world.env), 2);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show of a parent that is not captured says so and names its captured children", async () => {
  const world = await makeWorld();
  try {
    // The sessions' own files are gone (Claude Code removed them); their subagents' remain.
    const orphans = join(FIXTURES, "orphan_subagents", "claude", "projects");
    cpSync(orphans, join(world.claude, "projects"), { recursive: true });
    const sid = "7b1e4c2a-9d3f-4e8a-b6c5-2f1a0e9d8c7b";
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);

    for (const id of [`claude:${sid}`, sid]) {
      const result = await runCli("show", [id], world.vars);
      assert.equal(result.code, 1, `show ${id}: ${result.stdout}`);
      assert.equal(result.stdout, "", "no child's records are shown");
      assert.match(result.stderr, new RegExp(`^error: Conversation "${id}" is not captured`));
      assert.match(result.stderr, new RegExp(`"claude:${sid}/agent-a3f9c21"`));
      assert.match(result.stderr, new RegExp(`"claude:${sid}/agent-a8d0e47"`));
    }

    // A session with one captured child: its full id still does not resolve to that child.
    const lone = "c40d8e1f-6a2b-4f7c-9e3d-5b8a1c0f2e4d";
    const alone = await runCli("show", [`claude:${lone}`], world.vars);
    assert.equal(alone.code, 1, alone.stdout);
    assert.match(alone.stderr, /is not captured: only its children are, "claude:c40d.*a51b7e0"$/m);
    const child = `claude:${sid}/agent-a3f9c21`;
    const shown = await runCli("show", [child, "--json"], world.vars);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout).conversation.id, child);

    // A whole UUID that names nothing is not found, not taken as a prefix.
    const none = await runCli("show", [`claude:${sid.replace("7b1e", "7b1f")}`], world.vars);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^error: No conversation "claude:7b1f/);
  } finally {
    await world.cleanup();
  }
});
