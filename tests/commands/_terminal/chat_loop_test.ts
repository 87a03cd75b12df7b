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

Deno.test("a failed turn says its prompt is kept; a cancelled one is not kept and leaves the prompt history", async () => {
  await withRig(async (rig) => {
    const session = ChatSession.start(rig.options);
    let reading = "";
    const { ui, replies, notes } = scriptedUi(["broken", "stopped", "fine"], (line) => {
      reading = line;
      if (line === "broken") rig.server.options.failWith = { status: 400, message: "Bad prompt" };
      else delete rig.server.options.failWith;
    });
    // Ctrl-C on "stopped": its signal is aborted before the turn starts.
    ui.interruptible = (fn) => {
      const controller = new AbortController();
      if (reading === "stopped") controller.abort();
      return fn(controller.signal);
    };
    const result = await runChatLoop(session, ui, { persistence: rig.persistence });
    const said = notes.join("");
    assert.match(
      said,
      /error: .*Bad prompt.*\nThe prompt is kept in the session: send another, or leave and resume later\.\n/,
    );
    assert.match(said, /\nCancelled: the turn was not kept\n/);
    assert.match(replies.join(""), /Echo: fine\n$/);
    assert.equal(result.failed, false);
    assert.deepEqual(rig.history.texts().slice(-2), ["broken", "fine"]);
  });
});

Deno.test("a one-shot turn that fails says so and nothing more, and the loop reports it failed", async () => {
  await withRig(async (rig) => {
    rig.server.options.failWith = { status: 400, message: "Bad prompt" };
    const session = ChatSession.start(rig.options);
    const { ui, notes } = scriptedUi(["never read"]);
    const result = await runChatLoop(session, ui, {
      persistence: rig.persistence,
      firstPrompt: "once only",
      once: true,
    });
    assert.equal(result.failed, true);
    assert.match(notes.join(""), /^error: .*Bad prompt.*\n$/);
  });
});
