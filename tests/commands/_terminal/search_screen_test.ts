// The search screen's state and keys over a real store (the fixtures, captured), without a
// terminal: typing searches once the keys typed together are handled, inline filters narrow or
// are refused on the status line with the last hits kept, editing keys edit, arrows move and
// scroll, a filters-only box lists recent conversations, Esc ends with 0.

import { oneOf } from "../../../lib/format.ts";
import { AGENTS } from "../../../lib/agents.ts";
import { loadStemmer } from "../../../lib/store/vocab.ts";
import assert from "node:assert/strict";
import { main as reindex } from "../../../commands/reindex.ts";
import type { Key } from "../../../commands/_terminal/screen.ts";
import { SearchScreen } from "../../../commands/_terminal/search_screen.ts";
import { loadContext, openStore } from "../../../lib/context.ts";
import { captureIo, makeWorld, type World } from "../../_helpers.ts";

function char(text: string): Key {
  return { name: "char", text, ctrl: false, meta: false, shift: false };
}

function named(name: string, ctrl = false): Key {
  return { name, text: "", ctrl, meta: false, shift: false };
}

async function withScreen(
  fn: (screen: SearchScreen, ended: { code?: number }, world: World) => void | Promise<void>,
  now?: () => number,
): Promise<void> {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  // As interactiveSearch() does before the screen opens: every keystroke's search finds forms.
  await loadStemmer();
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const ctx = loadContext({ env: world.env, ...(now ? { now } : {}) });
    const store = openStore(ctx, { mustExist: true, readOnly: true });
    try {
      const ended: { code?: number } = {};
      const screen = new SearchScreen(ctx, store, { env: world.env, io: captureIo(), box: "" }, {
        resolve: (code) => (ended.code = code),
        reject: (err) => {
          throw err;
        },
      });
      try {
        await fn(screen, ended, world);
      } finally {
        screen.close();
      }
    } finally {
      store.close();
    }
  } finally {
    await world.cleanup();
  }
}

/** The screen's rows as text (NO_COLOR: only reverse video and attributes to take off). */
function rows(screen: SearchScreen): string[] {
  // deno-lint-ignore no-control-regex -- the screen's own styling is what is taken off
  return screen.render(80, 24).lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
}

Deno.test("typing searches once per burst of keys, for the box as it ends", async () => {
  await withScreen(async (screen) => {
    for (const c of "nightly export") screen.handle(char(c));
    // Nothing is searched while keys are still being handled.
    assert.equal(rows(screen)[0]!.trimEnd(), "> nightly export");
    assert.equal(rows(screen)[2]!.trim(), "");
    await screen.settled();
    const shown = rows(screen);
    assert.match(shown[1]!, /\d+ hits$/);
    assert.match(shown[2]!, /^claude .*tundra-mosaic/);
    assert.ok(shown.some((l) => /nightly/.test(l) && !l.startsWith(">")), shown.join("\n"));
  });
});

Deno.test("an inline filter narrows; a bad one is named on the status line, hits kept", async () => {
  await withScreen(async (screen) => {
    for (const c of "retry") screen.handle(char(c));
    await screen.settled();
    const both = rows(screen).slice(2, 12);
    assert.ok(
      both.some((l) => l.startsWith("claude ")) && both.some((l) => l.startsWith("codex ")),
    );
    screen.handle(named("home"));
    for (const c of "agent:cod ") screen.handle(char(c));
    await screen.settled();
    const refused = rows(screen);
    assert.match(refused[0]!, /^> agent:cod retry/);
    // The status line wraps the list of agents over as many rows as it takes.
    const first = refused.findIndex((line, i) => i > 0 && line === both[0]);
    assert.ok(first > 1, refused.join("\n"));
    const status = refused.slice(1, first).join(" ").replace(/\s+/g, " ");
    assert.equal(status, `Filter "agent:" expects ${oneOf(AGENTS)}, got "cod"`);
    const kept = refused.slice(first, 12);
    assert.deepEqual(kept, both.slice(0, kept.length), "the last hits stay");
    screen.handle(named("left"));
    screen.handle(char("e"));
    screen.handle(char("x"));
    await screen.settled();
    assert.match(rows(screen)[0]!, /^> agent:codex retry/);
    const codex = rows(screen).slice(2, 12).filter((l) => l.trim());
    assert.ok(codex.length > 0 && codex.every((l) => l.startsWith("codex ")), codex.join("\n"));
  });
});

Deno.test("the editing keys edit the box; Ctrl-U and Ctrl-W take back what they say", async () => {
  await withScreen((screen) => {
    for (const c of "alpha beta gamma") screen.handle(char(c));
    screen.handle(named("w", true));
    assert.match(rows(screen)[0]!, /^> alpha beta $/);
    screen.handle(named("backspace"));
    screen.handle(named("a", true));
    screen.handle(char("["));
    screen.handle(named("e", true));
    screen.handle(char("]"));
    assert.match(rows(screen)[0]!, /^> \[alpha beta\]$/);
    assert.equal(screen.render(80, 24).cursor.column, 3 + "[alpha beta]".length);
    screen.handle({
      name: "paste",
      text: "one\ntwo\x1b[2J",
      ctrl: false,
      meta: false,
      shift: false,
    });
    assert.match(rows(screen)[0]!, /^> \[alpha beta\]one two\[2J$/, "a paste is one line, no ESC");
    screen.handle(named("u", true));
    assert.match(rows(screen)[0]!, /^>\s*$/);
  });
});

Deno.test("arrows move the selection and the list scrolls to keep it in view", async () => {
  await withScreen(async (screen) => {
    for (const c of "the") screen.handle(char(c));
    await screen.settled();
    const selected = () => screen.render(80, 24).lines.findIndex((l) => l.includes("\x1b[0;7m"));
    assert.equal(selected(), 2, "the first hit");
    screen.handle(named("down"));
    await screen.settled();
    assert.equal(selected(), 3);
    const first = rows(screen)[2];
    for (let i = 0; i < 12; i++) screen.handle(named("down"));
    await screen.settled();
    assert.equal(selected(), 11, "the last row of the list");
    assert.notEqual(rows(screen)[2], first, "the list scrolled");
    assert.match(rows(screen)[1]!, /\d+ of \d+ hits|\d+\+? hits/);
    screen.handle(named("pageup"));
    screen.handle(named("up"));
    await screen.settled();
    assert.equal(selected(), 2, "back at the top");
  });
});

Deno.test("a box of filters alone lists that agent's recent conversations; Esc ends with 0", async () => {
  await withScreen(async (screen, ended) => {
    await screen.settled();
    assert.match(rows(screen)[1]!, /^Recent conversations: type to search/);
    for (const c of "agent:codex") screen.handle(char(c));
    await screen.settled();
    const recent = rows(screen).slice(2, 12).filter((l) => l.trim());
    assert.ok(recent.length > 0 && recent.every((l) => l.startsWith("codex ")), recent.join("\n"));
    assert.match(recent[0]!, /\d+ messages?\s*$/);
    screen.handle(named("escape"));
    await screen.settled();
    assert.equal(ended.code, 0);
  });
});

Deno.test('a search out of time says so on the status line, never "No matches"', async () => {
  // A clock that moves a second at every reading: each search's budget is spent at once.
  let clock = Date.parse("2026-11-01T00:00:00Z");
  await withScreen(async (screen) => {
    for (const c of "nightly export") screen.handle(char(c));
    await screen.settled();
    const shown = rows(screen);
    assert.ok(!shown.some((l) => /No matches/.test(l)), shown.join("\n"));
    assert.ok(shown.some((l) => /The search was stopped/.test(l)), shown.join("\n"));
  }, () => (clock += 1000));
});
