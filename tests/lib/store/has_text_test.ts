// TextDeriver.hasText() (what `show --around` asks of each record it walks back over) for the
// lines whose rows it tells without reading them: a line longer than a chunk has its whole text
// in its first row and none in the others; a line of exactly one chunk is read like any other,
// blank or not.

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { DEFAULT_LIMITS } from "../../../lib/capture/limits.ts";
import { FLAG_ZSTD } from "../../../lib/store/schema.ts";
import { READERS } from "../../../lib/agents.ts";
import { type RecordRow, TextDeriver } from "../../../lib/store/records.ts";
import { captureWorld, makeWorld } from "../../_helpers.ts";

const CHUNK = DEFAULT_LIMITS.chunkSize;
const SESSION = "5e7d1c2a-9b3f-4c6d-8e1a-0000000a57e1";

/** An assistant line of the session whose text is `text`, padded to `length` bytes outside it. */
function assistantLine(n: number, text: string, length?: number): string {
  const line = (pad: string) =>
    JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: "external",
      cwd: "/home/dev/src/rows",
      sessionId: SESSION,
      version: "2.1.44",
      type: "assistant",
      uuid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
      timestamp: `2026-10-06T06:${String(10 + n).padStart(2, "0")}:00.000Z`,
      message: {
        model: "claude-opus-4-6",
        id: `msg_01rows${n}`,
        type: "message",
        role: "assistant",
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
      },
      requestId: `req_${pad}`,
    });
  if (length === undefined) return line("x");
  const unpadded = line("");
  assert.ok(unpadded.length <= length);
  const out = line("p".repeat(length - unpadded.length));
  assert.equal(new TextEncoder().encode(out).length, length);
  return out;
}

Deno.test("hasText() tells a long line's rows and a one-chunk line, blank or not, as textOf does", async () => {
  const world = await makeWorld();
  try {
    const dir = join(world.claude, "projects", "-rows");
    Deno.mkdirSync(dir, { recursive: true });
    const words = "the rows of a long answer ".repeat(Math.ceil((3 * CHUNK) / 26));
    const lines = [
      assistantLine(1, words.slice(0, 3 * CHUNK)), // four rows, the text in the first
      assistantLine(2, "\n\n", CHUNK - 1), // one row of exactly a chunk (with its newline), blank
      assistantLine(3, "a short answer", CHUNK - 1), // one row of exactly a chunk, with text
      assistantLine(4, "\n\n"), // short and blank
    ];
    Deno.writeTextFileSync(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
    await captureWorld(world);
    const ctx = loadContext({ env: world.env });
    const store = openStore(ctx);
    try {
      const deriver = new TextDeriver(store, READERS, redactorFor(ctx));
      const rows = store.db.prepare("SELECT id, seq FROM records ORDER BY id").all() as {
        id: number;
        seq: number;
      }[];
      const heads = rows.filter((r) => r.seq === 0);
      assert.equal(heads.length, 4);
      assert.equal(rows.length, 7, "the long line is four rows, the others one each");
      for (const head of heads.slice(1, 3)) {
        assert.equal(deriver.recordById(head.id).raw.length, CHUNK, "a row of exactly a chunk");
      }
      for (const { id } of rows) {
        const stored: RecordRow = deriver.storedById(id);
        const expected = deriver.textOf(deriver.recordById(id)).trim() !== "";
        assert.equal(deriver.hasText(stored), expected, `record ${id}`);
      }
      const said = heads.map(({ id }) => deriver.hasText(deriver.storedById(id)));
      assert.deepEqual(said, [true, false, true, false]);
      // The long line's text is its first row's, whole; its other rows have none.
      const later = rows.filter((r) => r.id > heads[0]!.id && r.id < heads[1]!.id);
      assert.equal(later.length, 3);
      for (const { id } of later) assert.equal(deriver.textOf(deriver.recordById(id)), "");
      assert.equal(deriver.textOf(deriver.recordById(heads[0]!.id)), words.slice(0, 3 * CHUNK));
      // The long line is told from one lookup, its bytes unread: a head row without them answers.
      const head = deriver.storedById(heads[0]!.id);
      assert.ok(head.flags & FLAG_ZSTD, "the long line's first row is stored compressed");
      assert.equal(deriver.hasText({ ...head, raw: new Uint8Array(0) }), true);
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
});
