// The search screen's drawing, as a pure function: every line fits the width as a terminal counts
// it (CJK included) at every size, the selected row is in reverse video, NO_COLOR draws no colour,
// transcript text never reaches the terminal raw, and the preview opens at the hit.

import assert from "node:assert/strict";
import {
  fitted,
  type Item,
  itemLine,
  layout,
  paint,
  previewLines,
  render,
  type SearchModel,
  statusLines,
} from "../../../commands/_terminal/search_view.ts";
import { displayWidth } from "../../../commands/_terminal/wrap.ts";
import type { Page, RecordJson } from "../../../lib/store/conversations.ts";
import type { ConversationJson } from "../../../lib/store/records.ts";

const NOW = Date.UTC(2026, 10, 30, 12, 0);
const HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil";

// deno-lint-ignore no-control-regex -- the screen's own styling is what is taken off
const SGR = /\x1b\[[0-9;]*m/g;
// deno-lint-ignore no-control-regex -- reverse video, as the screen turns it on
const REVERSE_ON = /\x1b\[0;7m/;
// deno-lint-ignore no-control-regex -- a match's bold yellow
const BOLD_YELLOW = /\x1b\[0;1;33m/;

/** What the terminal shows of a line: its styling taken off. */
function visible(line: string): string {
  return line.replace(SGR, "");
}

/** Control characters left once the screen's own styling is taken off. */
function controls(line: string): string[] {
  // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
  return visible(line).match(/[\0-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g) ?? [];
}

function item(overrides: Partial<Item> = {}): Item {
  return {
    conversation: "claude:f332cca8-0b9a-4244-835f-c44f31385301",
    record: 21,
    agent: "claude",
    project: "/home/me/src/alpha",
    when: NOW - 3 * 86_400_000,
    title: "tundra-mosaic: nightly export batching",
    snippet: "…the nightly invoice export failed with a RangeError once the flag was on…",
    ranges: [[4, 11], [20, 26]],
    ...overrides,
  };
}

const ITEMS: Item[] = [
  item(),
  item({
    agent: "codex",
    title: "缓存策略改成按需加载，并且在发布前测试所有的边界情况",
    snippet: "我们需要把缓存策略改成按需加载，这样首屏更快。缓存策略的改动在 src/cache.ts 里",
    ranges: [[5, 9], [23, 27]],
    project: "/home/me/项目/前端应用",
  }),
  item({
    agent: "opencode",
    title: `${HOSTILE} set the key`,
    snippet: `quokka ${HOSTILE} deployed`,
    ranges: [[0, 6]],
    project: `/tmp/proj ${HOSTILE}`,
  }),
  item({ record: null, snippet: "", ranges: [], messages: 1, when: null, title: null }),
  item({ snippet: "x".repeat(500) + " nightly " + "y".repeat(500), ranges: [[501, 508]] }),
];

function conversation(overrides: Partial<ConversationJson> = {}): ConversationJson {
  return {
    id: "claude:f332cca8-0b9a-4244-835f-c44f31385301",
    agent: "claude",
    nativeId: "f332cca8-0b9a-4244-835f-c44f31385301",
    title: "tundra-mosaic: nightly export batching",
    project: "/home/me/src/alpha",
    projectKey: null,
    cwd: "/home/me/src/alpha",
    branch: null,
    firstTimestamp: null,
    lastTimestamp: null,
    messages: 4,
    records: 6,
    bytes: 1000,
    parent: null,
    subagent: false,
    agentType: null,
    archived: false,
    sourceGone: false,
    agentVersion: null,
    ...overrides,
  };
}

function record(id: number, kind: RecordJson["kind"], role: RecordJson["role"], text: string) {
  return {
    id,
    source: "x.jsonl",
    generation: 1,
    offset: id * 100,
    timestamp: "2026-11-27T08:47:00.000Z",
    kind,
    role,
    text,
    raw: "",
    messageId: null,
    partId: null,
  } satisfies RecordJson;
}

const PAGE: Page = {
  conversation: conversation(),
  records: [
    record(18, "message", "user", "The nightly invoice export started failing. 缓存策略 too."),
    record(19, "tool_call", null, `Bash deno task export:nightly ${HOSTILE}`),
    record(20, "meta", null, "{}"),
    record(
      21,
      "message",
      "assistant",
      `Found it: the nightly export ${HOSTILE}\n` + "z ".repeat(900),
    ),
  ],
  next: null,
};

function model(overrides: Partial<SearchModel> = {}): SearchModel {
  return {
    input: "nightly export agent:claude 缓存策略",
    cursor: 10,
    items: ITEMS,
    selected: 1,
    top: 0,
    status: { text: `Filter "agent:" expects claude, got "${HOSTILE}"`, tone: "error" },
    count: "5 of 1,214 hits",
    preview: previewLines(PAGE, 21, ["nightly", "缓存策略"], 80, 11),
    now: NOW,
    home: "/home/me",
    ...overrides,
  };
}

Deno.test("every line of the screen fits the width, at every size, colour or not", () => {
  const sizes: [number, number][] = [[80, 24], [81, 25], [100, 30], [120, 40], [200, 60], [
    40,
    10,
  ], [20, 6]];
  for (const [cols, rows] of sizes) {
    for (const color of [true, false]) {
      const preview = previewLines(PAGE, 21, ["nightly"], cols, layout(rows).preview);
      for (const selected of [0, 1, 2, 4]) {
        const { lines, cursor } = render(model({ preview, selected }), cols, rows, color);
        assert.equal(lines.length, rows, `${cols}×${rows}: one line per row`);
        for (const line of lines) {
          assert.ok(
            displayWidth(visible(line)) <= cols,
            `${cols}×${rows}: ${JSON.stringify(visible(line))} is ${
              displayWidth(visible(line))
            } columns`,
          );
          assert.deepEqual(controls(line), [], `${cols}×${rows}: ${JSON.stringify(line)}`);
        }
        assert.ok(cursor.column >= 1 && cursor.column <= cols, `cursor in ${cols} columns`);
      }
    }
  }
});

Deno.test("rows line up in columns and fill their width, CJK in title, project and snippet", () => {
  for (const width of [80, 81, 99, 120]) {
    const line = paint(itemLine(ITEMS[1]!, width, NOW, "/home/me"), width, false, true);
    assert.equal(displayWidth(visible(line)), width, `the reverse bar spans ${width} columns`);
    // The agent, age, project and title take the same columns on every row.
    const columns = ITEMS.slice(0, 3).map((it) =>
      itemLine(it, width, NOW, "/home/me").slice(0, 4).reduce((n, s) => n + displayWidth(s.text), 0)
    );
    assert.deepEqual(new Set(columns).size, 1, `${width}: ${columns}`);
  }
});

Deno.test("the selected row is in reverse video; NO_COLOR draws attributes, never colours", () => {
  const { lines } = render(model({ selected: 0 }), 80, 24, false);
  const codes = lines.join("").match(SGR) ?? [];
  for (const code of codes) {
    const params = code.slice(2, -1).split(";").filter(Boolean);
    for (const p of params) assert.ok(["0", "1", "2", "4", "7"].includes(p), `${code} in NO_COLOR`);
  }
  assert.match(lines[2]!, REVERSE_ON, "the first hit is selected");
  assert.doesNotMatch(lines[3]!, REVERSE_ON, "the second is not");
  const colour = render(model({ selected: 0 }), 80, 24, true).lines.join("");
  assert.match(colour, BOLD_YELLOW, "with colour, matches are bold yellow");
});

Deno.test("transcript text is shown visibly: ␛ for ESC, nothing a terminal would act on", () => {
  const { lines } = render(model({ selected: 2 }), 160, 30, true);
  const shown = lines.map(visible).join("\n");
  assert.match(shown, /␛\]0;pwned\\x07␛\[2J\\x9b31m\\u202eevil/);
  for (const line of lines) assert.deepEqual(controls(line), []);
});

Deno.test("the snippet moves along so that its first match shows on one row", () => {
  const line = itemLine(ITEMS[4]!, 80, NOW, "/home/me").map((s) => s.text).join("");
  assert.ok(line.includes("nightly"), line);
  assert.ok(line.includes("…x"), line);
});

Deno.test("the preview opens at the hit's match, marked, folded as show folds", () => {
  const lines = previewLines(PAGE, 21, ["nightly"], 80, 11);
  assert.equal(lines.length, 11);
  const text = lines.map((l) => l.map((s) => s.text).join(""));
  const label = text.findIndex((t) => /assistant ◀$/.test(t));
  assert.ok(label >= 0, text.join("\n"));
  assert.ok(
    text.some((t) => t.startsWith("Found it: the nightly export ␛]0;pwned")),
    text.join("\n"),
  );
  assert.ok(!text.some((t) => t.includes("{}")), "meta records are left out");
  const marks = lines.flat().filter((s) => s.style === "mark").map((s) => s.text);
  assert.ok(marks.includes("nightly"), JSON.stringify(marks));
  for (const line of lines) assert.ok(displayWidth(line.map((s) => s.text).join("")) <= 80);
  // A short pane still holds the hit.
  const short = previewLines(PAGE, 21, ["nightly"], 80, 3).map((l) =>
    l.map((s) => s.text).join("")
  );
  assert.ok(short.some((t) => t.includes("nightly export")), short.join("\n"));
});

Deno.test("fitted() cuts a line of pieces to its width with an ellipsis", () => {
  const cut = fitted(
    [{ text: "日本語のテキスト", style: "plain" }, { text: "abc", style: "mark" }],
    9,
  );
  assert.equal(cut.map((s) => s.text).join(""), "日本語の…");
  assert.equal(displayWidth(cut.map((s) => s.text).join("")), 9);
});

Deno.test("layout() gives the list and the preview their rows at 80×24", () => {
  assert.deepEqual(layout(24), { list: 10, preview: 11 });
  assert.deepEqual(layout(4), { list: 1, preview: 0 });
});

/** What "No model configured" says: four lines, one of them wider than 80 columns. */
const NO_MODEL =
  "No model configured: add these two lines to /home/me/.config/logbook/config.json " +
  '(inside its { }):\n  "baseUrl": "http://127.0.0.1:8080/v1",\n' +
  '  "model": "<the model\'s name at that endpoint>"\n' +
  "with your endpoint's address, or set the variables OPENAI_BASE_URL and LOGBOOK_MODEL";

Deno.test("a problem of several lines is shown whole, its rows taken from the preview", () => {
  const { lines } = render(model({ status: { text: NO_MODEL, tone: "error" } }), 80, 24, false);
  assert.equal(lines.length, 24);
  const shown = lines.map(visible);
  // Its own lines, the ones wider than the screen wrapped at a space: every word, none cut.
  assert.deepEqual(shown.slice(1, 7).map((l) => l.trimEnd()), [
    "No model configured: add these two lines to /home/me/.config/logbook/config.json",
    "(inside its { }):",
    '  "baseUrl": "http://127.0.0.1:8080/v1",',
    '  "model": "<the model\'s name at that endpoint>"',
    "with your endpoint's address, or set the variables OPENAI_BASE_URL and",
    "LOGBOOK_MODEL",
  ]);
  assert.ok(!shown.some((l) => l.includes("…") && /model|LOGBOOK/.test(l)), "nothing cut");
  // The list keeps its ten rows below it; the preview gives up five.
  assert.match(shown[7]!, /^claude /);
  assert.equal(shown.findIndex((l) => l.startsWith("── ")), 17);
  assert.deepEqual(layout(24, 6), { list: 10, preview: 6 });
});

Deno.test("what was found stays on one line; a screen too small for a problem cuts its last row", () => {
  const info = statusLines({ text: `${"word ".repeat(30)}end`, tone: "info" }, "3 hits", 80, 24);
  assert.equal(info.length, 1, "the count's line, as before");
  const fits = statusLines({ text: "Nothing selected: type words", tone: "note" }, "", 80, 24);
  assert.equal(fits.length, 1);
  const small = statusLines({ text: NO_MODEL, tone: "error" }, "", 40, 6);
  assert.equal(small.length, 3, "all but the box, a list row and the rule");
  assert.ok(small.at(-1)!.map((s) => s.text).join("").endsWith("…"), "the cut is shown");
  assert.deepEqual(layout(6, 3), { list: 1, preview: 0 });
});
