// The conformance checks can fail: a transcript with a record type no adapter knows shows up as
// drift (the canary's "new types"), its types are listed, and bytes that differ from the file
// are caught.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import type { Rig } from "./_rig.ts";
import { assertFilesExact, capture, driftOf, show, status, typesSeen } from "./_checks.ts";

const SESSION = "5b0c9d64-7a3e-4c1f-9e21-3d8f0a6b2c11";

Deno.test("a record type no adapter knows is drift, listed with the types seen", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "logbook-checks-" }));
  try {
    const home = join(root, "home");
    const folder = join(home, ".claude", "projects", "-work-demo");
    await Deno.mkdir(folder, { recursive: true });
    const file = join(folder, `${SESSION}.jsonl`);
    const lines = [
      {
        type: "user",
        uuid: "0f9a1c2e-3b4d-4e5f-8a6b-7c8d9e0f1a2b",
        parentUuid: null,
        sessionId: SESSION,
        timestamp: "2026-11-30T10:00:00.000Z",
        cwd: "/work/demo",
        version: "9.9.9",
        message: { role: "user", content: "Which word, brackenfold?" },
      },
      { type: "brand-new-latch", sessionId: SESSION, timestamp: "2026-11-30T10:00:01.000Z" },
    ];
    await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const rig = {
      root,
      home,
      project: root,
      data: join(root, "data"),
      config: join(root, "config"),
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    } as unknown as Rig;
    await capture(rig);
    const shown = [await show(rig, `claude:${SESSION}`)];
    assert.deepEqual(typesSeen(shown, "claude"), ["brand-new-latch", "user"]);
    const drift = driftOf(await status(rig), "claude");
    assert.equal(drift.length, 1);
    assert.match(drift[0]!, /unknown_type brand-new-latch/);
    assertFilesExact(shown, [file]);
    // One byte more on disk than was shown is caught.
    await Deno.writeTextFile(file, "x", { append: true });
    assert.throws(() => assertFilesExact(shown, [file]), /bytes shown/);
    // And a record that is not the file's is caught too.
    const altered = structuredClone(shown);
    altered[0]!.records[0]!.raw = Buffer.from("{}\n").toString("base64");
    assert.throws(() => assertFilesExact(altered, [file]));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
