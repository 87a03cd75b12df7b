// Tests for commands/_terminal/prompt.ts: what sits between the terminal and readline (a
// bracketed paste made one line, even split across reads; Ctrl-R's search; Ctrl-L's view).

import assert from "node:assert/strict";
import { fromEditable, KeyFilter, toEditable } from "../../../commands/_terminal/prompt.ts";

/** A stand-in for readline's line: what the filter sets, and what it hands on. */
function fakeLine(history: string[]) {
  const state = { line: "", cursor: 0, prompt: "> ", history, drawn: 0 };
  const rl = {
    get line() {
      return state.line;
    },
    set line(v: string) {
      state.line = v;
    },
    get cursor() {
      return state.cursor;
    },
    set cursor(v: number) {
      state.cursor = v;
    },
    history,
    setPrompt: (p: string) => void (state.prompt = p),
    prompt: () => void state.drawn++,
  };
  const written: string[] = [];
  // What readline would do with plain text: insert it at the cursor.
  const write = (text: string) => {
    for (const c of text) {
      if (c === "\r") written.push(`submit:${state.line}`);
      else {
        state.line = state.line.slice(0, state.cursor) + c + state.line.slice(state.cursor);
        state.cursor++;
      }
    }
  };
  return { state, rl, written, write };
}

Deno.test("a prompt's line breaks and tabs round-trip through the editable line", () => {
  const text = "line one\nline two\r\n\tindented";
  assert.equal(toEditable(text), "line one␤line two␤␉indented");
  assert.equal(fromEditable(toEditable(text)), "line one\nline two\n\tindented");
});

Deno.test("a bracketed paste becomes text on one line, even split across reads", async () => {
  const f = fakeLine([]);
  const filter = new KeyFilter(f.rl, "> ", () => f.rl.history, f.write);
  await filter.feed("see: \x1b[20");
  await filter.feed("0~one\r\ntwo\x1b[31m\n\tthree\x1b[2");
  await filter.feed("01~!");
  assert.equal(f.state.line, "see: one␤two[31m␤␉three!");
  assert.deepEqual(f.written, [], "Enter inside the paste sent nothing");
});

Deno.test("Ctrl-R finds older matches, Enter takes one, Ctrl-G puts the line back", async () => {
  const f = fakeLine(["deploy staging", "run tests", "deploy prod"]);
  const filter = new KeyFilter(f.rl, "> ", () => f.rl.history, f.write);
  await filter.feed("draft\x12dep");
  assert.equal(f.state.line, "deploy staging");
  assert.equal(f.state.prompt, "(reverse-i-search)`dep': ");
  await filter.feed("\x12");
  assert.equal(f.state.line, "deploy prod", "Ctrl-R again: the next older match");
  await filter.feed("\x12");
  assert.equal(f.state.line, "deploy prod", "nothing older: it stays");
  await filter.feed("\x07");
  assert.equal(f.state.line, "draft");
  assert.equal(f.state.prompt, "> ");
  await filter.feed("\x12xyz");
  assert.equal(f.state.prompt, "(failing reverse-i-search)`xyz': ");
  await filter.feed("\x7f\x7f\x7frun\r");
  assert.deepEqual(f.written, ["submit:run tests"]);
  assert.equal(f.state.prompt, "> ");
});

Deno.test("Ctrl-L shows the view; without one it passes to readline", async () => {
  let shown = 0;
  const f = fakeLine([]);
  await new KeyFilter(f.rl, "> ", () => [], f.write, () => void shown++).feed("ab\x0c");
  assert.equal(shown, 1);
  assert.equal(f.state.line, "ab");
  const g = fakeLine([]);
  await new KeyFilter(g.rl, "> ", () => [], g.write).feed("\x0c");
  assert.equal(g.state.line, "\x0c");
});
