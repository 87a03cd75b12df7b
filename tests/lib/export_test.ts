// A conversation as a document: fences that text cannot close, HTML with nothing unescaped, and
// JSON that is `show --json` with every record.

import assert from "node:assert/strict";
import { escapeHtml, exportConversation } from "../../lib/export.ts";
import type { RecordJson } from "../../lib/store/conversations.ts";
import type { ConversationJson } from "../../lib/store/records.ts";

const conversation: ConversationJson = {
  id: "claude:0f0f",
  agent: "claude",
  nativeId: "0f0f",
  title: "Fence <b>test</b>",
  project: "/work/p",
  projectKey: "p-000",
  cwd: "/work/p",
  branch: null,
  firstTimestamp: "2026-04-01T09:00:00.000Z",
  lastTimestamp: "2026-04-01T09:05:00.000Z",
  messages: 2,
  records: 3,
  bytes: 100,
  parent: null,
  subagent: false,
  agentType: null,
  archived: false,
  sourceGone: false,
  agentVersion: null,
};

function record(id: number, kind: RecordJson["kind"], role: RecordJson["role"], text: string) {
  return {
    id,
    source: "/x.jsonl",
    generation: 1,
    offset: id * 10,
    timestamp: "2026-04-01T09:00:00.000Z",
    kind,
    role,
    text,
    raw: "",
    messageId: null,
    partId: null,
  } satisfies RecordJson;
}

const records = [
  record(1, "message", "user", "Show me the fence"),
  record(2, "tool_result", null, "before\n````\ninside\n````\nafter"),
  record(3, "meta", null, "session meta"),
];

Deno.test("Markdown fences a tool block with more backticks than its text holds", () => {
  const md = exportConversation("md", conversation, records);
  assert.match(md, /\n`````text\nbefore\n````\ninside\n````\nafter\n`````\n/);
  assert.ok(!md.includes("session meta"), "meta is left out");
  assert.ok(
    exportConversation("md", conversation, records, { all: true }).includes("session meta"),
  );
  assert.match(md, /^# Fence \\<b\\>test\\<\/b\\>$/m);
});

Deno.test("HTML escapes every transcript string, the title too", () => {
  assert.equal(
    escapeHtml(`<a href="x">'&'</a>`),
    "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
  );
  const html = exportConversation("html", conversation, records);
  assert.ok(html.includes("<title>Fence &#60;b&#62;test&#60;/b&#62;</title>"));
  assert.ok(!html.includes("<b>"));
});

Deno.test("JSON is the show --json object with every record and no next page", () => {
  const page = JSON.parse(exportConversation("json", conversation, records));
  assert.deepEqual(page, { conversation, records, next: null });
});
