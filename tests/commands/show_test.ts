// `show` as a user runs it: pages bounded by count and bytes, JSON whose raw chunks rebuild
// the file, the raw bytes themselves, and a readable rendering.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { main as show } from "../../commands/show.ts";
import { safeText } from "../../lib/safe_text.ts";
import { captureIo, FIXTURES, makeWorld, manifest, runCli, type World } from "../_helpers.ts";
import { fake } from "../lib/_secret_shapes.ts";
import { addToolHeavy, TOOL_HEAVY } from "../_tool_heavy.ts";
import {
  leaks,
  placeSecretPathSession,
  SECRET_PATH_ID,
  SECRET_PATH_WORD,
  shownPath,
} from "../_secret_path.ts";
import { allRecords, unescapeHtml, unescapeMarkdown } from "./_show.ts";

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
        [entry.conversation, "--json", "--limit", "2", ...(after ? ["--after", after] : [])],
        world.vars,
      );
      assert.equal(result.code, 0, result.stderr);
      const page = JSON.parse(result.stdout);
      assert.equal(page.conversation.id, entry.conversation);
      // At most 2 records, each line whole: a long line's rows come with its first.
      const raws = page.records.map((r: { raw: string }) => Buffer.from(r.raw, "base64"));
      const lines = raws.filter((_: Buffer, i: number) => i === 0 || raws[i - 1]!.at(-1) === 0x0a);
      assert.ok(lines.length <= 2 && raws.at(-1)!.at(-1) === 0x0a, `${lines.length} lines`);
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

Deno.test("show pages stop at about 512 KiB of raw bytes, a line whole", async () => {
  const world = await makeWorld();
  try {
    // Lines of ~200 KB each (four chunk rows): three of them cross 512 KiB.
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
    const raw = Buffer.concat(
      page.records.map((r: { raw: string }) => Buffer.from(r.raw, "base64")),
    ).toString();
    assert.equal(raw, lines.slice(0, 3).join("\n") + "\n", "three lines, the third whole");
    assert.ok(raw.length >= 512 * 1024);
    assert.notEqual(page.next, null);
    const texts = page.records.map((r: { text: string }) => r.text).filter((t: string) => t);
    assert.deepEqual(texts.map((t: string) => t.slice(0, 7)), ["page-0 ", "page-1 ", "page-2 "]);
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
    assert.match(out, /^\d{4}-\d\d-\d\d \d\d:\d\d user$/m);
    assert.match(out, /^\d{4}-\d\d-\d\d \d\d:\d\d assistant$/m);
    const toolLines = out.split("\n").filter((l) => / ▸ tool_call: /.test(l));
    assert.ok(toolLines.length >= 1);
    for (const line of toolLines) assert.ok(line.length < 140);
    assert.doesNotMatch(out, /base64/);
    // A local command is what was typed and what it printed, as the dashboard shows it.
    assert.match(out, /^\d\d:\d\d · command: \/cost$/m);
    assert.match(out, /^\d\d:\d\d · output: Total cost: \$0\.4127 /m);
    assert.doesNotMatch(out, /<command-name>|<local-command-stdout>/);
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
    // An id longer than any is refused as such: not "no conversation", nor SQLite's words for a
    // LIKE pattern over its limit.
    for (const length of [301, 60_000]) {
      const io4 = captureIo();
      assert.equal(await show(["a".repeat(length)], io4, world.env), 1);
      assert.equal(
        io4.stderr(),
        `error: The conversation id is too long: ${length} characters, at most 300\n`,
      );
    }
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

const SECRET = "ghp" + "_" + fake(36);
const HOSTILE =
  `Render <script>alert("x")</script> & </details> and \`\`\`fences\`\`\` <img src="https://example.com/x.png">` +
  " \x1b]0;pwned\x07 \u009b2J";

/** A Claude Code transcript in its real format: questions, answers, a tool call and its result. */
function writeConversation(world: World, cwd: string, sessionId: string): string[] {
  const dir = join(world.claude, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  Deno.mkdirSync(dir, { recursive: true });
  const base = { isSidechain: false, cwd, sessionId, version: "2.1.40", gitBranch: "main" };
  const texts = [
    "Why does the heron-ledger import drop rows?",
    `It trims the last batch. ${HOSTILE}`,
    `Here is my token ${SECRET}, does it matter?`,
    "Never paste tokens: rotate it. The fix is in import.ts, line 40.\n\nSecond paragraph.",
  ];
  let parent: string | null = null;
  const lines: unknown[] = [];
  const at = (i: number) => new Date(Date.parse("2026-04-01T09:00:00Z") + i * 60_000).toISOString();
  texts.forEach((text, i) => {
    const uuid = crypto.randomUUID();
    const user = i % 2 === 0;
    lines.push({
      ...base,
      parentUuid: parent,
      type: user ? "user" : "assistant",
      uuid,
      timestamp: at(i * 3),
      message: user ? { role: "user", content: text } : {
        id: `msg_${i}`,
        type: "message",
        role: "assistant",
        model: "claude-x",
        content: [{ type: "text", text }],
      },
    });
    parent = uuid;
    if (i === 1) {
      const call = crypto.randomUUID();
      lines.push({
        ...base,
        parentUuid: parent,
        type: "assistant",
        uuid: call,
        timestamp: at(i * 3 + 1),
        message: {
          id: "msg_tool",
          type: "message",
          role: "assistant",
          model: "claude-x",
          content: [{
            type: "tool_use",
            id: "toolu_1",
            name: "Read",
            input: { file_path: "import.ts" },
          }],
        },
      });
      const result = crypto.randomUUID();
      lines.push({
        ...base,
        parentUuid: call,
        type: "user",
        uuid: result,
        timestamp: at(i * 3 + 2),
        message: {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "export function importRows() {}",
          }],
        },
      });
      parent = result;
    }
  });
  Deno.writeTextFileSync(
    join(dir, `${sessionId}.jsonl`),
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
  return texts;
}

async function conversationWorld(): Promise<{ world: World; id: string; texts: string[] }> {
  const world = await makeWorld({ fixtures: ["claude"] });
  const sid = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
  const texts = writeConversation(world, join(world.dir, "work"), sid);
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  return { world, id: `claude:${sid}`, texts };
}

Deno.test("show --format exports every message text of the conversation in each format", async () => {
  const { world, id, texts } = await conversationWorld();
  try {
    const records = await allRecords(world, id, 2);
    const messages = records.filter((r) => r.kind === "message");
    assert.equal(messages.length, 4);
    const redacted = messages.map((m) => m.text.trim());
    assert.ok(redacted[2]!.includes("[REDACTED:"), "the gate ran on the token");
    assert.ok(redacted.some((t) => t.includes("<script>")));
    for (const format of ["md", "html", "json", "text"]) {
      const result = await runCli("show", [id, "--format", format], world.vars);
      assert.equal(result.code, 0, result.stderr);
      const out = result.stdout;
      assert.ok(!out.includes(SECRET), `${format}: no secret`);
      if (format === "json") {
        const page = JSON.parse(out);
        assert.equal(page.next, null);
        assert.deepEqual(page.records.map((r: { id: number }) => r.id), records.map((r) => r.id));
        assert.deepEqual(
          page.records.filter((r: { kind: string }) => r.kind === "message").map((
            r: { text: string },
          ) => r.text.trim()),
          redacted,
        );
        continue;
      }
      const readable = format === "html"
        ? unescapeHtml(out)
        : format === "md"
        ? unescapeMarkdown(out)
        : out;
      for (const text of redacted) {
        const shown = safeText(text, { multiline: true });
        assert.ok(readable.includes(shown), `${format}: ${shown}`);
      }
      assert.ok(readable.includes("importRows"), `${format}: the tool result`);
    }
    assert.equal(texts.length, 4);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --format md folds tool calls; html is one self-contained, escaped file", async () => {
  const { world, id } = await conversationWorld();
  try {
    const md = await runCli("show", [id, "--format", "md"], world.vars);
    assert.match(
      md.stdout,
      /<details>\n<summary>tool_call · [^<]*<\/summary>\n\n```+text\n[^]*Read[^]*\n```+\n\n<\/details>/,
    );
    assert.match(md.stdout, /^### user · 2026-04-01 \d\d:\d\d$/m);
    // A message's markup is text in Markdown too, which most viewers would render as HTML.
    assert.ok(md.stdout.includes("Render &lt;script>alert("), "message markup is escaped");
    assert.doesNotMatch(md.stdout, /<(script|img)\b|<\/details> and/);
    const html = await runCli("show", [id, "--format", "html"], world.vars);
    const page = html.stdout;
    assert.match(page, /^<!doctype html>/);
    assert.doesNotMatch(
      page,
      /<(script|img|link|iframe|object|embed)\b|<[^>]*\s(src|href)=|url\(/i,
    );
    assert.ok(page.includes("&#60;script&#62;alert("), "message markup is escaped");
    assert.match(page, /<details class="tool_call"><summary>/);
    assert.match(page, /Content-Security-Policy" content="default-src 'none'/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --format -o writes the file owner-only, replacing it atomically", async () => {
  const { world, id } = await conversationWorld();
  try {
    const out = join(world.dir, "export.md");
    Deno.writeTextFileSync(out, "old", { mode: 0o644 });
    Deno.chmodSync(out, 0o644);
    const result = await runCli("show", [id, "--format", "md", "-o", out], world.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /^Wrote \d+ records to /);
    assert.equal(Deno.statSync(out).mode! & 0o777, 0o600);
    // Each format's file is what it prints, and nothing in either can drive the terminal it is
    // read on: the documents hold what a terminal shows, JSON escapes every such character.
    for (const format of ["md", "html", "json", "text"]) {
      const file = join(world.dir, `export.${format}`);
      const written = await runCli("show", [id, "--format", format, "-o", file], world.vars);
      assert.equal(written.code, 0, written.stderr);
      const printed = (await runCli("show", [id, "--format", format], world.vars)).stdout;
      const bytes = Deno.readFileSync(file);
      assert.ok(!bytes.includes(0x1b) && !bytes.includes(0x07), `${format}: no ESC or BEL byte`);
      const controls = ["\x1b", "\x07", "\x9b"].filter((c) => printed.includes(c));
      assert.deepEqual(controls, [], `${format}: a pipe gets no control either`);
      const text = new TextDecoder().decode(bytes);
      assert.ok(!text.includes("\u009b"), `${format}: no C1 control`);
      if (format === "json") {
        assert.ok(text.includes("\\u001b]0;pwned\\u0007 \\u009b2J"), "escaped in JSON");
        assert.deepEqual(JSON.parse(text), JSON.parse(printed), "JSON loses nothing");
      } else {
        assert.equal(text, printed, format);
        assert.ok(text.includes("␛]0;pwned\\x07 \\x9b2J"), format);
      }
    }
    assert.equal(Deno.readTextFileSync(out), Deno.readTextFileSync(join(world.dir, "export.md")));
    assert.deepEqual(
      [...Deno.readDirSync(world.dir)].map((e) => e.name).filter((n) => n.includes(".tmp-")),
      [],
    );
    const usage = await runCli("show", [id, "-o", out], world.vars);
    assert.equal(usage.code, 2);
    const both = await runCli("show", [id, "--format", "md", "--json"], world.vars);
    assert.equal(both.code, 2);
    const bad = await runCli("show", [id, "--format", "pdf"], world.vars);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /^error: Option "--format" expects md, html, json or text, got "pdf"\n/,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --around opens at a search hit with the question before it, marked", async () => {
  const { world, id } = await conversationWorld();
  try {
    const hit = await runCli("search", ["rotate", "--session", id, "--json"], world.vars);
    const { record, conversation } = JSON.parse(hit.stdout.split("\n")[0]!);
    assert.equal(conversation, id);
    const result = await runCli("show", [id, "--around", String(record)], {
      ...world.vars,
      TZ: "Asia/Tokyo",
    });
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.ok(!out.includes("It trims the last batch"), "it opens at the hit, not the start");
    assert.match(out, /^Why does the heron-ledger import drop rows\?\n/, "under the heading");
    const question = out.indexOf("Here is my token");
    const answer = out.indexOf("Never paste tokens");
    assert.ok(question >= 0 && answer > question, out);
    // Local date-times: 09:09 UTC is 18:09 in Tokyo.
    assert.match(out, new RegExp(`^2026-04-01 18:09 assistant ◀ #${record}$`, "m"));
    const other = await runCli("show", [id, "--around", "1"], world.vars);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /Record 1 is not in conversation/);
    const both = await runCli("show", [id, "--around", "5", "--after", "2"], world.vars);
    assert.equal(both.code, 2);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show --around reaches back over a turn of tool calls to the question, and holds the hit at any --limit", async (t) => {
  const world = await makeWorld();
  addToolHeavy(world);
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  try {
    for (const agent of ["claude", "codex"] as const) {
      const { id, question, answer } = TOOL_HEAVY[agent];
      const hit = await runCli("search", [answer, "--json"], world.vars);
      assert.equal(hit.code, 0, hit.stderr);
      const { record } = JSON.parse(hit.stdout.split("\n")[0]!);
      const mark = new RegExp(`assistant ◀ #${record}$`, "m");
      await t.step(`${agent}: the whole turn from the question`, async () => {
        const result = await runCli("show", [id, "--around", String(record)], world.vars);
        assert.equal(result.code, 0, result.stderr);
        const at = result.stdout.indexOf(`user\n${question}`);
        assert.ok(at > 0, result.stdout);
        assert.ok(at < result.stdout.search(mark), "the question is above the hit");
        assert.doesNotMatch(result.stdout, /earlier records?/, "no gap: the turn fits the page");
      });
      for (const limit of ["6", "3", "1"]) {
        await t.step(
          `${agent}: --limit ${limit} shows the question, a gap, and the hit`,
          async () => {
            const args = [id, "--around", String(record), "--limit", limit];
            const result = await runCli("show", args, world.vars);
            assert.equal(result.code, 0, result.stderr);
            const out = result.stdout;
            assert.match(out, mark, "the page holds the hit");
            const gap = /… (\d+) earlier records? · all of them: logbook show \S+ --after (\d+)/
              .exec(out);
            assert.ok(gap, out);
            const at = out.indexOf(`user\n${question}`);
            assert.ok(at > 0 && at < gap.index, "the question comes before the gap");
            assert.ok(gap.index < out.search(mark), "the gap comes before the hit");
            // The gap stands for the records shown between the question and the page.
            const page = JSON.parse((await runCli("show", [...args, "--json"], world.vars)).stdout);
            const all = JSON.parse(
              (await runCli("show", [id, "--after", gap[2]!, "--json"], world.vars)).stdout,
            );
            const skipped = all.records.filter((r: { id: number; kind: string; text: string }) =>
              r.id < page.records[0].id && r.kind !== "meta" && r.text.trim() !== ""
            );
            assert.equal(skipped.length, Number(gap[1]));
            assert.ok(page.records.length <= Number(limit));
          },
        );
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("show hides meta records unless --all", async () => {
  const world = await capturedWorld();
  try {
    const entry = manifest<Entry>("claude").find((e) => e.case === "main")!;
    const records = await allRecords(world, entry.conversation, 2);
    assert.ok(records.some((r) => r.kind === "meta"), "the fixture has meta records");
    const plain = captureIo();
    assert.equal(await show([entry.conversation, "--limit", "500"], plain, world.env), 0);
    assert.doesNotMatch(plain.stdout(), / · meta: /);
    const all = captureIo();
    assert.equal(await show([entry.conversation, "--limit", "500", "--all"], all, world.env), 0);
    assert.match(all.stdout(), / · meta: /);
  } finally {
    await world.cleanup();
  }
});

Deno.test("on a terminal show pages the whole conversation through $PAGER, wrapped to its width", async () => {
  const { world, id, texts } = await conversationWorld();
  try {
    const paged = join(world.dir, "paged.txt");
    const terminal = { ...captureIo(), outIsTerminal: true };
    const env = {
      get: (k: string) =>
        ({ ...world.vars, PAGER: `cat > '${paged}'`, COLUMNS: "30" } as Record<string, string>)[k],
    };
    assert.equal(await show([id, "--limit", "2"], terminal, env), 0);
    assert.equal(terminal.stdout(), "", "everything went to the pager");
    const out = Deno.readTextFileSync(paged);
    for (const line of out.split("\n")) {
      // The id is the one thing never broken.
      if (!line.startsWith(id)) assert.ok([...line].length <= 30, line);
    }
    assert.ok(
      out.replace(/\s+/g, " ").includes("Never paste tokens: rotate it."),
      "the last page too",
    );
    assert.ok(out.includes(texts[0]!.split(" ")[0]!));

    const direct = { ...captureIo(), outIsTerminal: true };
    assert.equal(await show([id, "--limit", "2", "--no-pager"], direct, env), 0);
    assert.match(direct.stderr(), /^more: logbook show /);
    assert.ok(!direct.stdout().includes("Never paste tokens"));

    // Not a terminal: no pager runs.
    const marker = join(world.dir, "pager-ran");
    const piped = await runCli("show", [id], { ...world.vars, PAGER: `touch '${marker}'` });
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(piped.stdout.includes("heron-ledger"));
    assert.throws(() => Deno.statSync(marker));
  } finally {
    await world.cleanup();
  }
});

Deno.test("show folds what Codex told the model to one line each, and the user's prompt stays whole", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const io = captureIo();
    assert.equal(await show(["codex:019ec4f9-2ec6-7da7-bbee-b6e59f34f595"], io, world.env), 0);
    const out = io.stdout();
    assert.match(out, /^\d{4}-\d\d-\d\d \d\d:\d\d · developer: <permissions instructions> /m);
    assert.match(
      out,
      /^\d\d:\d\d · context: # AGENTS\.md instructions for \/home\/ines\/src\/ferrylog /m,
    );
    assert.doesNotMatch(out, /^<INSTRUCTIONS>$|^# Escalation|^<environment_context>/m);
    assert.match(out, /^\d{4}-\d\d-\d\d \d\d:\d\d user\nThe webhook dispatcher hammers receivers/m);
  } finally {
    await world.cleanup();
  }
});

Deno.test("show holds no secret of a transcript's directory: the header, each --format, --json", async (t) => {
  const world = await makeWorld();
  try {
    const cwd = await placeSecretPathSession(world);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    await t.step("the header names the directory as the gate shows it", async () => {
      const shown = await runCli("show", [SECRET_PATH_ID], world.vars);
      assert.equal(shown.code, 0, shown.stderr);
      assert.deepEqual(leaks(shown.stdout), []);
      assert.ok(shown.stdout.includes(shownPath(cwd)), shown.stdout);
      assert.ok(shown.stdout.includes("aws-secret [REDACTED:aws-secret-key]"), shown.stdout);
    });
    for (const format of ["md", "html", "json", "text"]) {
      await t.step(`--format ${format}`, async () => {
        const out = await runCli("show", [SECRET_PATH_ID, "--format", format], world.vars);
        assert.equal(out.code, 0, out.stderr);
        assert.deepEqual(leaks(out.stdout), []);
        const readable = format === "html" ? unescapeHtml(out.stdout) : out.stdout;
        assert.ok(readable.includes(shownPath(cwd)), readable);
      });
    }
    await t.step("--json: project, cwd, the project key and each record's source", async () => {
      const out = await runCli("show", [SECRET_PATH_ID, "--json"], world.vars);
      assert.equal(out.code, 0, out.stderr);
      const page = JSON.parse(out.stdout);
      assert.equal(page.conversation.project, shownPath(cwd));
      assert.equal(page.conversation.cwd, shownPath(cwd));
      assert.match(page.conversation.projectKey, /^app-[0-9a-f]{12}$/);
      for (const record of page.records) assert.deepEqual(leaks(record.source), []);
      assert.deepEqual(leaks(JSON.stringify({ ...page, records: [] })), []);
    });
    await t.step("search narrows to the project named as it is shown", async () => {
      const found = await runCli(
        "search",
        [SECRET_PATH_WORD, "--project", shownPath(cwd), "--json"],
        world.vars,
      );
      assert.equal(found.code, 0, found.stderr);
      const hits = found.stdout.trim().split("\n").map((line) => JSON.parse(line));
      assert.ok(hits.length > 0 && hits.every((h) => h.project === shownPath(cwd)), found.stdout);
      assert.deepEqual(leaks(found.stdout), []);
    });
  } finally {
    await world.cleanup();
  }
});
