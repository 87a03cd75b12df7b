// Secrets cut by a chunk boundary: a line longer than the chunk size is stored as several rows,
// and each shape of the gate's table, planted so that a boundary falls inside it, is redacted
// whole wherever text derived from those rows is indexed or shown (search, `show`, the dashboard's
// text and raw view, a fork). One capture of one transcript: a streamed line over 8 MiB and
// lines of a few chunks that are parsed whole.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { main as show } from "../../../commands/show.ts";
import { loadContext, openStore, redactorFor } from "../../../lib/context.ts";
import { createGate } from "../../../lib/gate/gate.ts";
import { projectOf } from "../../../lib/paths.ts";
import { forkConversation } from "../../../lib/sessions/fork.ts";
import { findRow, pickerRows, withHistoryStore } from "../../../lib/sessions/resume.ts";
import { ADAPTERS } from "../../../lib/sources/mod.ts";
import { FLAG_STREAMED } from "../../../lib/store/schema.ts";
import { DEFAULT_LIMITS } from "../../../lib/capture/limits.ts";
import { search } from "../../../lib/store/search.ts";
import { SessionStore } from "../../../lib/sessions/records.ts";
import { captureIo, captureWorld, makeWorld, type World } from "../../_helpers.ts";
import { appFor, request } from "../../servers/_dashboard.ts";
import { SECRET_SHAPES, type SecretShape } from "../_secret_shapes.ts";

const CHUNK = DEFAULT_LIMITS.chunkSize;
const SESSION = "c4a9b1e2-5d3f-4e6a-8b7c-0000000c4e55";
const ID = `claude:${SESSION}`;
/** Words with nothing of a secret in them, to fill the space between planted secrets. */
const FILLER = "quiet meadow river stone lantern orchard pebble willow harbor ember ";
/** Parts of a secret shorter than this are not looked for (they occur in ordinary text). */
const MIN_PART = 4;

/** `n` characters of filler. */
function filler(n: number): string {
  return FILLER.repeat(Math.ceil(n / FILLER.length)).slice(0, n);
}

/** The bytes of `text` inside a JSON string (the filler and the markers are ASCII). */
function escapedLength(text: string): number {
  return new TextEncoder().encode(JSON.stringify(text).slice(1, -1)).length;
}

/** A shape planted at a chunk boundary: its markers, and the two parts the boundary cuts. */
interface Planted {
  shape: SecretShape;
  /** Words just before and after it, which find its chunks in a search. */
  markers: [string, string];
  parts: [string, string];
}

/**
 * A JSONL line of `record`, whose string `content` is built so that a chunk boundary falls in
 * the middle of each shape's secret: shape `i` goes to the boundary `(first + i) * CHUNK` of the
 * line, and filler pads the line to `length` bytes.
 */
function lineWithShapes(
  record: (content: string) => unknown,
  shapes: { shape: SecretShape; index: number }[],
  first: number,
  length: number,
): { line: string; planted: Planted[] } {
  const [head, tail] = JSON.stringify(record("\u0000")).split("\\u0000") as [string, string];
  let content = "";
  let at = new TextEncoder().encode(head).length;
  const planted: Planted[] = [];
  shapes.forEach(({ shape, index }, i) => {
    const markers: [string, string] = [`alpha${index}x`, `omega${index}x`];
    const cut = Math.floor(shape.secret.length / 2);
    const lead = `\n${markers[0]} ${shape.before}${shape.secret.slice(0, cut)}`;
    const boundary = (first + i) * CHUNK;
    const pad = boundary - at - escapedLength(lead);
    assert.ok(pad > 100, `no room before boundary ${first + i} for "${shape.name}"`);
    const piece = `${filler(pad)}${lead}${shape.secret.slice(cut)}${shape.after} ${markers[1]}\n`;
    content += piece;
    at += escapedLength(piece);
    planted.push({ shape, markers, parts: [shape.secret.slice(0, cut), shape.secret.slice(cut)] });
  });
  content += filler(length - at - new TextEncoder().encode(tail).length);
  return { line: JSON.stringify(record(content)), planted };
}

/** The transcript: a prompt, a tool call, a streamed tool result, then messages of 4 chunks. */
function plantTranscript(world: World, cwd: string): Planted[] {
  const base = {
    isSidechain: false,
    userType: "external",
    cwd,
    sessionId: SESSION,
    version: "2.1.44",
    gitBranch: "main",
  };
  let n = 0;
  const uuid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const at = () => `2026-10-06T06:${String(10 + n).padStart(2, "0")}:00.000Z`;
  const lines: string[] = [
    JSON.stringify({
      ...base,
      parentUuid: null,
      type: "user",
      uuid: uuid(),
      timestamp: at(),
      message: { role: "user", content: "Read the deploy log and the settings it printed" },
    }),
    JSON.stringify({
      ...base,
      parentUuid: null,
      type: "assistant",
      uuid: uuid(),
      timestamp: at(),
      message: {
        model: "claude-opus-4-6",
        id: "msg_01chunks",
        type: "message",
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_01chunks", name: "Read", input: {} }],
      },
    }),
  ];
  const shapes = SECRET_SHAPES.map((shape, index) => ({ shape, index }));
  const planted: Planted[] = [];
  // Over 8 MiB: captured as it streams, one chunk at a time.
  const streamed = lineWithShapes(
    (content) => ({
      ...base,
      parentUuid: null,
      type: "user",
      uuid: uuid(),
      timestamp: at(),
      message: {
        role: "user",
        content: [{ tool_use_id: "toolu_01chunks", type: "tool_result", content }],
      },
    }),
    shapes,
    2,
    DEFAULT_LIMITS.maxLine + 4 * CHUNK,
  );
  assert.ok(streamed.line.length > DEFAULT_LIMITS.maxLine);
  lines.push(streamed.line);
  planted.push(...streamed.planted);
  // Four chunks each, parsed whole: three shapes per line, at its three boundaries.
  for (let i = 0; i < shapes.length; i += 3) {
    const part = lineWithShapes(
      (content) => ({
        ...base,
        parentUuid: null,
        type: "user",
        uuid: uuid(),
        timestamp: at(),
        message: { role: "user", content },
      }),
      shapes.slice(i, i + 3),
      1,
      4 * CHUNK - 1000,
    );
    lines.push(part.line);
    planted.push(...part.planted);
  }
  const dir = join(world.claude, "projects", "-chunks");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(join(dir, `${SESSION}.jsonl`), lines.join("\n") + "\n");
  return planted;
}

/**
 * The forms a part of a secret takes where it is shown: as is, with its spaces folded (snippets,
 * one-line tool results), in raw JSON bytes (escaped once more), and each of its long lines.
 */
function forms(part: string): string[] {
  const escaped = JSON.stringify(part).slice(1, -1);
  const lines = part.split(/\s+|\\n/).filter((line) => line.length >= 12);
  return [...new Set([part, part.replace(/\s+/g, " "), escaped, ...lines])];
}

/**
 * Fails when `text` shows a planted secret whole, or either part of it. The test's own folder
 * (`dir`, in the paths shown) is left out first: its random name held a part ("abc1") once.
 */
function assertNoLeak(where: string, shown: string, planted: Planted[], dir: string): void {
  const text = shown.replaceAll(dir, "");
  for (const { shape, parts } of planted) {
    for (const part of [shape.secret, ...parts]) {
      if (part.length < MIN_PART) continue;
      for (const form of forms(part)) {
        assert.ok(!text.includes(form), `${where} shows part of "${shape.name}": ${form}`);
      }
    }
  }
}

/** Tokens of a secret FTS5 would index: long runs of letters and digits with both in them. */
function secretTokens(planted: Planted): string[] {
  const text = [planted.shape.secret, ...planted.parts].join(" ");
  return (text.match(/[A-Za-z0-9]+/g) ?? []).filter((t) =>
    t.length >= 8 && /[0-9]/.test(t) && /[A-Za-z]/.test(t)
  );
}

Deno.test("a secret cut by a chunk boundary is redacted wherever the chunks' text is shown", async (t) => {
  const world = await makeWorld();
  try {
    const cwd = join(world.home, "src", "vault");
    Deno.mkdirSync(cwd, { recursive: true });
    const planted = plantTranscript(world, cwd);
    await captureWorld(world);
    const ctx = loadContext({ env: world.env });

    await t.step("the boundaries fall inside the secrets, and the long line was streamed", () => {
      const store = openStore(ctx);
      try {
        const rows = store.db.prepare(
          "SELECT seq, flags FROM records WHERE conversation_id = (SELECT id FROM conversations WHERE key = ?) ORDER BY id",
        ).all(ID) as { seq: number; flags: number }[];
        assert.ok(rows.filter((r) => r.flags & FLAG_STREAMED).length > 128);
        assert.ok(rows.filter((r) => r.seq === 3 && !(r.flags & FLAG_STREAMED)).length >= 30);
      } finally {
        store.close();
      }
      for (const { parts } of planted) assert.ok(parts[0].length > 0 && parts[1].length > 0);
    });

    await t.step("the index holds no token of a secret, whole or cut", () => {
      const store = openStore(ctx);
      try {
        const count = store.db.prepare("SELECT count(*) AS n FROM fts WHERE fts MATCH ?");
        for (const p of planted) {
          for (const token of secretTokens(p)) {
            const { n } = count.get(`"${token}"`) as { n: number };
            assert.equal(n, 0, `"${p.shape.name}" is indexed: ${token}`);
          }
        }
      } finally {
        store.close();
      }
    });

    await t.step("search snippets on both sides of each boundary", () => {
      const store = openStore(ctx);
      try {
        const redact = redactorFor(ctx);
        let snippets = "";
        for (const { markers } of planted) {
          for (const marker of markers) {
            const hits = search(store, ADAPTERS, redact, { query: marker, limit: 5 }).hits;
            assert.ok(hits.length > 0, marker);
            snippets += hits.map((h) => h.snippet).join("\n");
          }
        }
        assertNoLeak("a search snippet", snippets, planted, world.dir);
      } finally {
        store.close();
      }
    });

    const pages: string[] = [];
    await t.step("show, as text and as --json records", async () => {
      let after: number | null = null;
      let text = "";
      let json = "";
      do {
        const paging: string[] = after === null ? [] : ["--after", String(after)];
        const io = captureIo();
        assert.equal(await show([ID, "--json", ...paging], io, world.env), 0, io.stderr());
        const page = JSON.parse(io.stdout());
        json += page.records.map((r: { text: string }) => r.text).join("\n");
        const human = captureIo();
        assert.equal(await show([ID, ...paging], human, world.env), 0, human.stderr());
        text += human.stdout();
        pages.push(after === null ? "" : String(after));
        after = page.next;
      } while (after !== null);
      assert.ok(pages.length > 20);
      assertNoLeak("show", text, planted, world.dir);
      assertNoLeak("show --json", json, planted, world.dir);
    });

    await t.step("the dashboard's conversation text and raw view", async () => {
      const { app } = appFor(world);
      let text = "";
      let raw = "";
      for (const after of pages) {
        const query = after === "" ? "" : `?after=${after}`;
        const res = await request(app, `/api/conversations/${encodeURIComponent(ID)}${query}`);
        assert.equal(res.status, 200);
        const page = await res.json();
        for (const r of page.records as { text: string; raw: string }[]) {
          text += r.text + "\n";
          raw += Buffer.from(r.raw, "base64").toString("utf8") + "\n";
        }
      }
      assertNoLeak("the dashboard's text", text, planted, world.dir);
      assertNoLeak("the dashboard's raw view", raw, planted, world.dir);
    });

    await t.step("a fork of the conversation", () => {
      const sessions = new SessionStore(ctx.paths, { incognito: true });
      const fork = withHistoryStore(ctx, (store) => {
        const row = findRow(
          pickerRows(sessions, projectOf(cwd), { store, redact: redactorFor(ctx) }).rows,
          SESSION,
          "fork",
        );
        return forkConversation({ sessions, store: store!, row, gate: createGate(), now: 0 });
      });
      const messages = fork.messages.map((m) => m.content).join("\n");
      assert.ok(messages.includes(planted.at(-1)!.markers[1]), "the fork holds the messages");
      assertNoLeak("a fork", messages, planted, world.dir);
    });
  } finally {
    await world.cleanup();
  }
});
