// Tests for commands/_terminal/chat_loop.ts: the loop's prompts and in-session commands, driven
// from a scripted UI against a real loopback endpoint.

import assert from "node:assert/strict";
import { type ChatUi, runChatLoop } from "../../../commands/_terminal/chat_loop.ts";
import { ChatSession } from "../../../lib/sessions/turn.ts";
import { withRig } from "../../_chat_rig.ts";

/** A UI fed from a script of lines, collecting what it is told. */
function scriptedUi(lines: string[], onRead?: (line: string) => void) {
  const replies: string[] = [];
  const notes: string[] = [];
  const ui: ChatUi = {
    read: () => {
      const line = lines.shift();
      if (line !== undefined) onRead?.(line);
      return Promise.resolve(line);
    },
    reply: (t) => void replies.push(t),
    note: (t) => void notes.push(t),
    interruptible: (fn) => fn(new AbortController().signal),
  };
  return { ui, replies, notes };
}

Deno.test("the loop runs prompts and in-session commands and records the prompt history", async () => {
  await withRig(async (rig) => {
    const session = ChatSession.start(rig.options);
    const { ui, replies, notes } = scriptedUi([
      "hello",
      "/rename My session",
      "/status",
      "/undo",
      "/undo",
      "/nonsense",
      "/clear",
      "after clearing",
      "/exit",
      "never read",
    ]);
    const result = await runChatLoop(session, ui, { persistence: rig.persistence });
    assert.equal(result.earlier.length, 1);
    assert.equal(result.earlier[0]!.title, "My session");
    assert.equal(result.session.title, "after clearing");
    assert.match(replies.join(""), /Echo: hello\n/);
    const said = notes.join("");
    assert.match(said, /Renamed to "My session"/);
    assert.match(said, /Turns {5}1 \(2 messages\)/);
    assert.match(said, /answered by loopback-answerer-7b/);
    assert.match(said, /Nothing to undo/);
    assert.match(said, /Unknown command "\/nonsense"/);
    assert.match(said, /stays resumable/);
    assert.equal(rig.history.texts().at(-1), "/exit");
    assert.ok(rig.history.texts().includes("after clearing"));
  });
});

Deno.test("/btw answers a side question, /btw alone lists them, and the next turn does not carry it", async () => {
  await withRig(async (rig) => {
    const session = ChatSession.start(rig.options);
    const { ui, replies, notes } = scriptedUi(["hello", "/btw what was that?", "/btw", "next"]);
    const result = await runChatLoop(session, ui, { persistence: rig.persistence });
    assert.match(replies.join(""), /Echo: what was that\?\n/);
    const said = notes.join("");
    assert.match(said, /a side question: kept apart from the conversation/);
    assert.match(
      said,
      /Side questions \(1\):\n {2}1\. what was that\?\n {5}Echo: what was that\?\n/,
    );
    const last = rig.server.requests.at(-1)!.json.messages.map((m) => m.content);
    assert.deepEqual(last, ["hello", "Echo: hello", "next"]);
    assert.equal(result.session.record.btw.length, 1);
  });
});
