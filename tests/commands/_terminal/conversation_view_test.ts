// The readable view of a conversation: folded lines give their date when the day changes, and
// every line fits the width it is drawn for.

import assert from "node:assert/strict";
import {
  openingLine,
  rendered,
  renderPage,
} from "../../../commands/_terminal/conversation_view.ts";
import { displayWidth } from "../../../commands/_terminal/wrap.ts";
import type { Page, RecordJson } from "../../../lib/store/conversations.ts";
import { formatLocalTime } from "../../../lib/format.ts";
import { captureIo } from "../_io.ts";

function record(id: number, timestamp: string, kind: RecordJson["kind"], text: string): RecordJson {
  return {
    id,
    source: "claude:/x.jsonl",
    generation: 1,
    offset: id * 100,
    timestamp,
    kind,
    role: kind === "message" ? "user" : null,
    text,
    raw: "",
    messageId: null,
    partId: null,
  };
}

const PAGE: Page = {
  conversation: {
    id: "claude:7e1c0a2b-3d4e-4f5a-8b6c-7d8e9f0a1b2c",
    agent: "claude",
    nativeId: "7e1c0a2b-3d4e-4f5a-8b6c-7d8e9f0a1b2c",
    title: "Nightly export",
    project: "/home/dev/src/alpha",
    projectKey: null,
    cwd: "/home/dev/src/alpha",
    branch: "main",
    firstTimestamp: "2026-03-01T10:00:00.000Z",
    lastTimestamp: "2026-03-03T10:00:00.000Z",
    messages: 1,
    records: 3,
    bytes: 300,
    parent: null,
    subagent: false,
    archived: false,
    sourceGone: false,
    agentVersion: "2.1.40",
    agentType: null,
  },
  records: [
    record(1, "2026-03-01T10:00:00.000Z", "message", "Why does the export fail?"),
    record(2, "2026-03-01T10:00:30.000Z", "tool_call", "Read src/export/csv.ts"),
    record(3, "2026-03-03T10:00:00.000Z", "tool_call", "Bash deno task export --dry-run"),
  ],
  next: null,
};

Deno.test("a folded line gives its date only when the day changed since the line before", () => {
  const lines = renderPage(PAGE, { io: captureIo(), all: false, width: 80, hit: null }, false)
    .split("\n");
  const same = lines.find((l) => l.includes("csv.ts"))!;
  const later = lines.find((l) => l.includes("--dry-run"))!;
  const first = formatLocalTime(PAGE.records[1]!.timestamp);
  const third = formatLocalTime(PAGE.records[2]!.timestamp);
  assert.ok(same.startsWith(`${first.slice(11)} ▸ tool_call: `), same);
  assert.ok(later.startsWith(`${third} ▸ tool_call: `), later);
});

Deno.test("folded lines fit the width, the date left out where it would not leave room", () => {
  for (const width of [30, 40, 60, 80]) {
    const text = renderPage(PAGE, { io: captureIo(), all: false, width, hit: null }, false);
    for (const line of text.split("\n")) {
      assert.ok(displayWidth(line) <= width, `${width}: "${line}"`);
    }
  }
});

Deno.test("a page opened at a hit below the first screen opens where the hit shows, the question above it", async (t) => {
  const question = record(1, "2026-03-01T10:00:00.000Z", "message", "step\n".repeat(40).trim());
  const answer: RecordJson = {
    ...record(2, "2026-03-01T10:01:00.000Z", "message", "Done."),
    role: "assistant",
  };
  const page: Page = { ...PAGE, records: [question, answer] };
  const view = { io: captureIo(), all: false, width: 80, hit: 2 };
  const { text, hit } = rendered(page, view, true);
  const lines = text.split("\n");
  await t.step("the hit's lines are found by what was rendered, not by its mark", () => {
    assert.ok(hit);
    assert.match(lines[hit.line]!, /assistant ◀ #2$/);
    assert.equal(hit.lines, 2);
    assert.equal(lines[hit.line + 1], "Done.");
  });
  await t.step("24 rows: the hit at the bottom, the question's end filling the rows above", () => {
    const at = openingLine(text, hit!, 80, 24)!;
    // Rows at..hit, then the hit's two lines, on the 23 rows less leaves above its prompt.
    assert.equal(hit!.line + 2 - (at - 1), 23);
    assert.equal(lines[at - 1], "step");
  });
  await t.step("a screen that holds it all opens at the top", () => {
    assert.equal(openingLine(text, hit!, 80, 60), null);
  });
  await t.step("a line wider than the terminal counts the rows it wraps to", () => {
    // The gap line under a question further back may be wider than the terminal.
    const wide = ["x".repeat(200), ...Array(40).fill("step"), "", "hit ◀ #2", "Done."];
    const text = wide.join("\n") + "\n";
    const at = { line: 42, lines: 2 };
    // The hit's 2 rows, the blank line and 40 steps take 43 rows; the 200 columns need 3 more.
    assert.equal(openingLine(text, at, 80, 47), null, "46 rows above the prompt: all of it");
    assert.equal(openingLine(text, at, 80, 46), 2, "45 rows: from the first step");
    assert.equal(openingLine(text, at, null, 46), null, "unwrapped, a line is a row");
  });
  await t.step("a long hit takes at most a third of the screen", () => {
    const long = { ...answer, text: "line\n".repeat(30).trim() };
    const both = rendered({ ...PAGE, records: [question, long] }, view, false);
    const at = openingLine(both.text, both.hit!, 80, 25)!;
    assert.equal(both.hit!.line - (at - 1), 24 - 8);
  });
});
