// FLAG_INJECTED: capture marks what an agent put into a conversation (Codex's rules, AGENTS.md
// and environment), told from a message's whole text, and a store captured before that gets the
// same marks from the next capture (migration 0011 leaves the work, injected_backfill.ts does it).

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { backfillInjected, INJECTED_BACKFILL_KEY } from "../../../lib/capture/injected_backfill.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { FLAG_INJECTED } from "../../../lib/store/schema.ts";
import { captureWorld, makeWorld, withStore, type World } from "../../_helpers.ts";

const SESSION = "019ee0bb-2222-7333-8444-555566667777";

/** Words enough for a text of `bytes` that spans several 64 KiB rows; `tag` starts each line. */
function long(bytes: number, tag: string): string {
  const line = `${tag} keep the quarry ledger in step with the survey, row by row\n`;
  return line.repeat(Math.ceil(bytes / line.length));
}

/** A Codex rollout: a long AGENTS.md, a prompt with an image pasted first, a long prompt. */
function placeRollout(world: World): void {
  const dir = join(world.codex, "sessions", "2026", "11", "29");
  Deno.mkdirSync(dir, { recursive: true });
  const at = (n: number) => `2026-11-29T10:00:0${n}.000Z`;
  const user = (n: number, content: unknown[]) =>
    JSON.stringify({
      timestamp: at(n),
      type: "response_item",
      payload: { type: "message", role: "user", content },
    });
  const text = (t: string) => ({ type: "input_text", text: t });
  const lines = [
    JSON.stringify({
      timestamp: at(0),
      type: "session_meta",
      payload: {
        id: SESSION,
        timestamp: at(0),
        cwd: "/home/ines/src/quarry",
        cli_version: "0.151.2",
      },
    }),
    user(1, [text(`# AGENTS.md instructions for /home/ines/src/quarry\n\n${long(150_000, "-")}`)]),
    user(2, [
      text('<image name=[Image #1] path="/tmp/survey.png">'),
      { type: "input_image", image_url: "data:image/png;base64,AAAA" },
      text("</image>"),
      text("What does this survey chart show?"),
    ]),
    // Typed, and long: rows after the first start where the text was cut, here at a tag.
    user(3, [text(`Why is this markup slow?\n${long(150_000, "<td>")}`)]),
  ];
  Deno.writeTextFileSync(
    join(dir, `rollout-2026-11-29T10-00-00-${SESSION}.jsonl`),
    lines.join("\n") + "\n",
  );
}

interface Row {
  id: number;
  offset: number;
  seq: number;
  injected: number;
}

/** Every user message row of the rollout, in order, with its mark. */
function userRows(world: World): Row[] {
  return withStore(world, (store) =>
    store.db.prepare(
      `SELECT r.id, r.offset, r.seq, (r.flags & ${FLAG_INJECTED}) != 0 AS injected
       FROM records r JOIN conversations c ON c.id = r.conversation_id
       WHERE c.key = ? AND r.role = 'user' AND r.kind = 'message' ORDER BY r.offset`,
    ).all(`codex:${SESSION}`) as unknown as Row[]);
}

/** The user message rows grouped into their lines (a new line at seq 0). */
function lines(rows: Row[]): Row[][] {
  const out: Row[][] = [];
  for (const row of rows) {
    if (row.seq === 0) out.push([]);
    out.at(-1)!.push(row);
  }
  return out;
}

Deno.test("capture marks a message from its whole text: every row of a long AGENTS.md, no typed prompt", async () => {
  const world = await makeWorld();
  try {
    placeRollout(world);
    await captureWorld(world);
    const [agents, image, markup] = lines(userRows(world));
    assert.ok(agents!.length >= 3, `AGENTS.md spans rows: ${agents!.length}`);
    assert.ok(agents!.every((r) => r.injected), "every row of AGENTS.md is marked");
    assert.deepEqual(image!.map((r) => r.injected), [0], "an image pasted first is no context");
    assert.ok(markup!.length >= 3 && markup!.every((r) => !r.injected), "a long prompt is typed");
    const title = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT title FROM conversations WHERE key = ?")
          .get(`codex:${SESSION}`) as { title: string }).title,
    );
    assert.equal(title, "What does this survey chart show?");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a store captured before the mark gets the same marks from its next capture", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    placeRollout(world);
    await captureWorld(world);
    const marked = () =>
      withStore(world, (store) =>
        (store.db.prepare(
          `SELECT id FROM records WHERE (flags & ${FLAG_INJECTED}) != 0 ORDER BY id`,
        ).all() as { id: number }[]).map((r) => r.id));
    const captured = marked();
    // The fixtures' developer rules and environment, both line shapes, and the long AGENTS.md.
    assert.ok(captured.length >= 6, JSON.stringify(captured));

    // The store as the build before 0011 left it: nothing marked, the step not applied.
    const makeOld = () => {
      const db = new DatabaseSync(join(world.data, "history.db"));
      try {
        db.exec(`UPDATE records SET flags = flags & ~${FLAG_INJECTED}; DELETE FROM record_changes`);
        db.prepare("DELETE FROM migrations WHERE name = ?").run("0011_injected_flag");
      } finally {
        db.close();
      }
    };
    makeOld();
    assert.deepEqual(marked(), [], "opening the store leaves the marking to capture");
    assert.ok(withStore(world, (store) => store.getMeta(INJECTED_BACKFILL_KEY) !== undefined));
    await captureWorld(world);
    assert.deepEqual(marked(), captured);
    withStore(world, (store) => {
      assert.equal(store.getMeta(INJECTED_BACKFILL_KEY), undefined, "and the work is done");
    });

    // Once more, by the step alone: each row it marks is noted for the project mirrors.
    makeOld();
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    let count: number;
    try {
      count = await backfillInjected(store, ADAPTERS, redactorFor(ctx));
    } finally {
      store.close();
    }
    assert.equal(count, captured.length);
    assert.deepEqual(marked(), captured);
    const noted = withStore(
      world,
      (store) =>
        (store.db.prepare("SELECT record_id FROM record_changes ORDER BY record_id")
          .all() as { record_id: number }[]).map((r) => r.record_id),
    );
    assert.deepEqual(noted, captured);
  } finally {
    await world.cleanup();
  }
});
