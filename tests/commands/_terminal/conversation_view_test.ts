// The readable view of a conversation: folded lines give their date when the day changes, and
// every line fits the width it is drawn for.

import assert from "node:assert/strict";
import { renderPage } from "../../../commands/_terminal/conversation_view.ts";
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
