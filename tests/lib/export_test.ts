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

/** A message record of each text, ids from 10. */
function messages(...texts: string[]): RecordJson[] {
  return texts.map((text, i) => record(10 + i, "message", i % 2 ? "assistant" : "user", text));
}

/** The Markdown as a viewer that passes HTML through renders it (markdown-it, GFM tables). */
async function rendered(md: string): Promise<string> {
  const { default: MarkdownIt } = await import("markdown-it");
  return new MarkdownIt({ html: true }).render(md);
}

Deno.test("Markdown escapes HTML a message holds, however it is dressed, and a viewer runs none of it", async (t) => {
  const attacks = [
    "<script>alert(1)</script>",
    "Inline <img src=x onerror=alert(2)> and <!-- hidden --> and <javascript:alert(3)>",
    // A fence left open, then one whose opening line would close it.
    "```\nopen to the end",
    "```\n<script>alert(4)</script>\n```",
    // A code span a viewer closes on the next line, where a one-line reading would open one.
    "`a\nb` <img src=x onerror=alert(5)> `c`",
    // A table splits cells at `|` before it reads code spans.
    "| a | b |\n|---|---|\n| `x | <img src=x onerror=alert(6)> | y` |",
    "\\`<img src=x onerror=alert(7)>`",
    "\\\\<img src=x onerror=alert(8)>",
    // Lone CRs end lines in Markdown.
    "x\r\r<script>alert(9)</script>",
    // Content less indented than its fence ends the list that holds it.
    "- item\n  ```\n<script>alert(10)</script>\n  ```",
    "> ```\n> <script>alert(11)</script>\n> ```",
    "~~~ `info` <b>\n<img src=x onerror=alert(12)>\n~~~",
    // An image a viewer would fetch, telling its server what the address holds.
    "![pixel](https://example.com/p.png?alert(17)) ![ref][r]\n\n[r]: https://example.com/alert(18)",
    // A fence too deep to be read here as one, that a viewer opens in the list item.
    "- a\n\n     ```\n  x\n  ```\n  <script>alert(16)</script>\n  ```",
  ];
  const folded = record(30, "tool_result", null, "<script>alert(13)</script>\n`````");
  const md = exportConversation("md", {
    ...conversation,
    title: "<script>alert(14)</script>",
    cwd: "/work/p\n\n<script>alert(15)</script>",
  }, [...messages(...attacks), folded]);
  const html = await rendered(md);
  await t.step("no element, comment or link of the transcript's is rendered", () => {
    // The document's own folding is the only HTML it writes.
    const tags = [...html.matchAll(/<([a-z!][^\s>/]*)/gi)].map((m) => m[1]!.toLowerCase());
    const allowed = ["h1", "h3", "p", "ul", "li", "strong", "code", "pre", "details", "summary"];
    const more = ["table", "thead", "tbody", "tr", "th", "td", "blockquote", "em", "a"];
    assert.deepEqual([...new Set(tags)].filter((tag) => ![...allowed, ...more].includes(tag)), []);
    assert.doesNotMatch(html, /<(script|img|b)\b|<!--|href="javascript/i);
    for (let n = 1; n <= 18; n++) {
      assert.ok(html.includes(`alert(${n})`), `attack ${n} is shown as text`);
    }
  });
  await t.step("code keeps its markup as written, readable", async () => {
    const code = exportConversation(
      "md",
      conversation,
      messages(
        "Use `<details>` here:\n\n```html\n<details><summary>x</summary></details>\n```",
        "1. Then:\n   ```ts\n   const a = b < c && d > e;\n   ```",
        "An image is written `![alt](src)`.",
      ),
    );
    assert.ok(code.includes("Use `<details>` here:"), code);
    assert.ok(code.includes("```html\n<details><summary>x</summary></details>\n```"), code);
    assert.ok(code.includes("   ```ts\n   const a = b < c && d > e;\n   ```"), code);
    assert.ok(code.includes("An image is written `![alt](src)`."), code);
    const shown = await rendered(code);
    assert.ok(shown.includes("<code>&lt;details&gt;</code>"), shown);
    assert.ok(
      shown.includes("&lt;details&gt;&lt;summary&gt;x&lt;/summary&gt;&lt;/details&gt;"),
      shown,
    );
    assert.ok(shown.includes("const a = b &lt; c &amp;&amp; d &gt; e;"), shown);
    assert.doesNotMatch(shown, /&amp;lt;/, "nothing escaped twice");
  });
});

Deno.test("a document shows hidden text and controls, and escapes what tag characters spelt", () => {
  // `<script>` written in tag characters: invisible, and markup once spelt out.
  const hidden = [...`<script>alert(1)</script>`]
    .map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
  const hostile = [
    record(1, "message", "user", `pass\u200bword ${hidden} bell\x07 \x1b]0;title\x07`),
  ];
  const about = { ...conversation, title: `t\u202eitle${hidden}` };
  for (const format of ["md", "html", "text"] as const) {
    const document = exportConversation(format, about, hostile);
    const controls = [...document].filter((c) => c < "\t" || (c > "\n" && c < " "));
    assert.deepEqual(controls, [], format);
    assert.doesNotMatch(document, /[\u200b\u202e]|[\u{e0000}-\u{e007f}]/u);
    assert.ok(document.includes("pass\\u200bword"), format);
    assert.ok(document.includes("⟨tag text: "), format);
    // Escaped as any markup is: `&lt;script` in HTML and Markdown, `\\<script` in a heading.
    if (format !== "text") assert.doesNotMatch(document, /(^|[^\\])<script/m, format);
  }
  const json = exportConversation("json", about, hostile);
  assert.equal(JSON.parse(json).records[0].text, hostile[0]!.text, "JSON keeps every character");
  assert.doesNotMatch(json, /[\u200b\u202e]|[\u{e0000}-\u{e007f}]/u);
});

Deno.test("what Codex injected is folded as context, its headings no document's headings", () => {
  const codex: ConversationJson = { ...conversation, id: "codex:0e0e", agent: "codex" };
  const agentsMd = "# AGENTS.md instructions for /work/p\n\n## Tests\n\nRun the suite first.";
  const env = "<environment_context>\n  <cwd>/work/p</cwd>\n</environment_context>";
  const said = [
    record(1, "message", "developer", "<permissions instructions>\nread-only\n</permissions>"),
    record(2, "message", "user", agentsMd),
    record(3, "message", "user", env),
    record(4, "message", "user", "# Why does the importer drop accents?"),
  ];
  const md = exportConversation("md", codex, said);
  const outsideFences = md.replace(/\n(`{3,})text\n[\s\S]*?\n\1\n/g, "\n");
  assert.doesNotMatch(outsideFences, /AGENTS\.md|## Tests|environment_context|permissions/);
  assert.match(md, /<summary>context · [^<]+<\/summary>\n\n```text\n# AGENTS\.md instructions/);
  assert.match(md, /<summary>context · [^<]+<\/summary>\n\n```text\n<environment_context>/);
  assert.match(md, /<summary>developer · [^<]+<\/summary>\n\n```text\n<permissions/);
  assert.equal([...md.matchAll(/^### user/gm)].length, 1, "the prompt alone is the user's");

  const page = exportConversation("html", codex, said);
  assert.equal([...page.matchAll(/<details class="context"><summary>context · /g)].length, 2);
  assert.equal([...page.matchAll(/<section class="user">/g)].length, 1);

  const text = exportConversation("text", codex, said);
  assert.equal([...text.matchAll(/\] context\n/g)].length, 2);
  assert.equal([...text.matchAll(/\] user\n/g)].length, 1);

  // A Claude conversation's message that opens with a heading is the user's own.
  const claude = exportConversation("md", conversation, [record(1, "message", "user", agentsMd)]);
  assert.match(claude, /^### user/m);
});
