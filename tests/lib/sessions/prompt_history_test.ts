// Tests for lib/sessions/prompt_history.ts: the history file (cap, collapsed duplicates, cancelled
// prompts, time and project, corrupt reads as empty, old lines kept) and the walk through it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { PromptHistory } from "../../../lib/sessions/prompt_history.ts";
import { redactSecrets } from "../../../lib/gate/secrets.ts";
import { removeDir, tempDir } from "../../_helpers.ts";

async function withHistory(
  fn: (
    make: (extra?: { cap?: number; incognito?: boolean }) => PromptHistory,
    path: string,
  ) => void | Promise<void>,
): Promise<void> {
  const dir = await tempDir();
  let clock = Date.parse("2026-05-01T08:00:00Z");
  const root = join(dir, "data");
  const path = join(root, "prompt-history.jsonl");
  try {
    await fn(
      (extra = {}) =>
        new PromptHistory({
          path,
          root,
          project: "/work/alpha",
          redact: redactSecrets,
          now: () => (clock += 1000),
          ...extra,
        }),
      path,
    );
  } finally {
    await removeDir(dir);
  }
}

Deno.test("each entry keeps its time and project; the file is owner-only", async () => {
  await withHistory((make, path) => {
    const history = make();
    history.add("first prompt");
    history.add("second prompt");
    const entries = history.entries();
    assert.deepEqual(entries.map((e) => e.text), ["first prompt", "second prompt"]);
    assert.equal(entries[0]!.project, "/work/alpha");
    assert.equal(entries[0]!.at, "2026-05-01T08:00:01.000Z");
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
  });
});

Deno.test("consecutive duplicates collapse into one; others are kept", async () => {
  await withHistory((make) => {
    const history = make();
    for (const p of ["a", "a", "b", "a", "a"]) history.add(p);
    assert.deepEqual(history.texts(), ["a", "b", "a"]);
  });
});

Deno.test("the history is capped, the oldest going first", async () => {
  await withHistory((make) => {
    const history = make({ cap: 5 });
    for (let i = 1; i <= 8; i++) history.add(`prompt ${i}`);
    assert.deepEqual(history.texts(), ["prompt 4", "prompt 5", "prompt 6", "prompt 7", "prompt 8"]);
  });
});

Deno.test("the default cap is 1,000 entries", async () => {
  await withHistory((make, path) => {
    const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ text: `p${i}` }));
    Deno.mkdirSync(join(path, ".."), { recursive: true });
    Deno.writeTextFileSync(path, lines.join("\n") + "\n");
    const history = make();
    history.add("newest");
    const texts = history.texts();
    assert.equal(texts.length, 1000);
    assert.equal(texts[0], "p1");
    assert.equal(texts.at(-1), "newest");
  });
});

Deno.test("a cancelled prompt is removed again, and a collapsed duplicate put back", async () => {
  await withHistory((make) => {
    const history = make();
    history.add("keep me");
    const mark = history.add("cancel me")!;
    history.remove(mark);
    assert.deepEqual(history.texts(), ["keep me"]);
    const before = history.entries();
    const again = history.add("keep me")!;
    history.remove(again);
    assert.deepEqual(history.entries(), before);
  });
});

Deno.test("a corrupt history reads as empty and the next prompt starts it again", async () => {
  await withHistory((make, path) => {
    Deno.mkdirSync(join(path, ".."), { recursive: true });
    Deno.writeTextFileSync(path, '{"text":"fine"}\nnot json at all\n');
    const history = make();
    assert.deepEqual(history.entries(), []);
    Deno.writeFileSync(path, new Uint8Array([0xff, 0xfe, 0x0a]));
    assert.deepEqual(history.entries(), []);
    history.add("after");
    assert.deepEqual(history.texts(), ["after"]);
  });
});

Deno.test("lines written before time and project were kept still read, and are written back as they came", async () => {
  await withHistory((make, path) => {
    Deno.mkdirSync(join(path, ".."), { recursive: true });
    const old = '"a bare old prompt"\n{"text":"an object without time","extra":1}\n';
    Deno.writeTextFileSync(path, old);
    const history = make();
    assert.deepEqual(history.entries(), [
      { text: "a bare old prompt" },
      { text: "an object without time" },
    ]);
    history.add("new one");
    assert.ok(Deno.readTextFileSync(path).startsWith(old));
  });
});

Deno.test("prompts pass the gate before they are written; incognito writes nothing", async () => {
  await withHistory((make, path) => {
    const key = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);
    make({ incognito: true }).add(`use ${key}`);
    assert.throws(() => Deno.statSync(path), Deno.errors.NotFound);
    assert.throws(() => Deno.statSync(join(path, "..")), Deno.errors.NotFound);
    make().add(`use ${key}`);
    const text = Deno.readTextFileSync(path);
    assert.ok(!text.includes(key));
    assert.match(text, /use \[REDACTED:openai-key\]/);
  });
});
