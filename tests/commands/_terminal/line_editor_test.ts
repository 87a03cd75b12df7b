// Tests for commands/_terminal/line_editor.ts: keys decoded from a raw-mode terminal, the line
// editor walking the prompt history, and readLine restoring the terminal mode.

import assert from "node:assert/strict";
import {
  type Key,
  LineEditor,
  parseKeys,
  type RawTerminal,
  readLine,
} from "../../../commands/_terminal/line_editor.ts";
import { HistoryWalker } from "../../../lib/sessions/prompt_history.ts";

Deno.test("parseKeys decodes arrows, controls and text, and keeps a cut-off escape for later", () => {
  const { keys, rest } = parseKeys("ab\x1b[A\x1b[B\x7f\x1bOH\r\x03\x1b[");
  assert.deepEqual(
    keys,
    [
      { kind: "text", text: "ab" },
      { kind: "up" },
      { kind: "down" },
      { kind: "backspace" },
      { kind: "home" },
      { kind: "enter" },
      { kind: "interrupt" },
    ] satisfies Key[],
  );
  assert.equal(rest, "\x1b[");
  assert.deepEqual(parseKeys(rest + "D").keys, [{ kind: "left" }]);
  assert.deepEqual(parseKeys("é🙂\r\n").keys, [{ kind: "text", text: "é🙂" }, { kind: "enter" }]);
});

Deno.test("the line editor edits in code points and walks the history", () => {
  const editor = new LineEditor(new HistoryWalker(["older", "newer"]));
  const type = (...keys: Key[]) => keys.map((k) => editor.apply(k)).at(-1);
  type({ kind: "text", text: "draft🙂" }, { kind: "backspace" });
  assert.equal(editor.text, "draft");
  type({ kind: "left" }, { kind: "left" }, { kind: "text", text: "X" });
  assert.equal(editor.text, "draXft");
  type({ kind: "up" });
  assert.equal(editor.text, "newer");
  type({ kind: "up" }, { kind: "up" });
  assert.equal(editor.text, "older");
  type({ kind: "down" }, { kind: "down" });
  assert.equal(editor.text, "draXft");
  assert.deepEqual(type({ kind: "enter" }), { done: true, line: "draXft" });
  type({ kind: "interrupt" });
  assert.equal(editor.text, "");
  assert.deepEqual(type({ kind: "interrupt" }), { done: true, exit: true });
});

Deno.test("readLine on a raw terminal: keys in, the line out, raw mode always restored", async () => {
  const input = ["hel", "lo\x1b[A", "\x1b[B!", "\r"];
  const modes: boolean[] = [];
  let written = "";
  const term: RawTerminal = {
    setRaw: (raw) => void modes.push(raw),
    read: (buffer) => {
      const next = input.shift();
      if (next === undefined) return Promise.resolve(null);
      const bytes = new TextEncoder().encode(next);
      buffer.set(bytes);
      return Promise.resolve(bytes.length);
    },
    write: (text) => void (written += text),
    columns: () => 80,
  };
  const result = await readLine(term, "> ", new HistoryWalker(["earlier prompt"]));
  assert.deepEqual(result, { line: "hello!" });
  assert.deepEqual(modes, [true, false]);
  assert.match(written, /earlier prompt/);
  assert.deepEqual(await readLine(term, "> ", new HistoryWalker([])), { exit: true });
  assert.deepEqual(modes, [true, false, true, false]);
});
