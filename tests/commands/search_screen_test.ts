// The full-screen search (`search -i`, `logbook` alone on a terminal) on a real terminal under
// tmux at 80×24: typing finds a fixture's hit, an inline filter narrows, Enter pages the
// conversation and q comes back to the screen as it was, a resize redraws, Ctrl-Y copies the
// resume command (OSC 52), Ctrl-O runs the agent's own resume in the session's directory, Ctrl-F
// forks into a logbook session, Esc gives the screen back; NO_COLOR draws no colour and a hostile
// transcript shows ␛ rather than acting. Skipped, with a message, where tmux is not installed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { displayWidth } from "../../commands/_terminal/wrap.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { captureIo, makeWorld, runCli, type World } from "../_helpers.ts";
import { withModelWorld } from "../_openai_server.ts";
import { exitStatus, fakeAgents, terminalScript, Tmux, tmuxAvailable } from "../_tmux.ts";

const SESSION = "5d2c7f0e-3a1b-4c2d-9e8f-0a1b2c3d4e5f";
const QUESTION = "Plan the saffron-lattice ingestion for the ledger";
const ANSWER = "Split it in three batches, saffron-lattice first, then the ledger rows.";
const BANNER = "the shell before logbook";

// The escape sequences looked for on the screen tmux keeps (`capture-pane -e`).
// deno-lint-ignore no-control-regex -- a colour's escape sequence is what is looked for
const COLOURED = /\x1b\[[0-9;]*3[1-6]m/;
// deno-lint-ignore no-control-regex -- reverse video's escape sequence is what is looked for
const REVERSE = /\x1b\[[0-9;]*7m/;
// deno-lint-ignore no-control-regex -- every style's escape sequence, for its parameters
const SGR = /\x1b\[([0-9;]*)m/g;

/** A Claude Code session about the saffron-lattice, run in `<world>/app dir` (which exists). */
async function writeSession(world: World): Promise<string> {
  const app = join(world.dir, "app dir");
  await placeClaudeTranscript(
    world,
    app,
    SESSION,
    claudeTranscript(SESSION, app, [[QUESTION, ANSWER]]),
  );
  return app;
}

/** A world with the claude and codex fixtures and the saffron-lattice session, captured. */
async function screenWorld(): Promise<{ world: World; app: string }> {
  const world = await makeWorld({ fixtures: ["claude", "codex"] });
  const app = await writeSession(world);
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  return { world, app };
}

/** The list's rows (below the box and the status line, above the rule). */
function listRows(screen: string): string[] {
  const lines = screen.split("\n");
  const rule = lines.findIndex((l) => l.startsWith("── "));
  return lines.slice(2, rule === -1 ? undefined : rule).filter((l) => l.trim() !== "");
}

const skip = () => console.log("skipped: tmux is not installed, so the terminal test cannot run");

Deno.test("the search screen at 80×24: find, narrow, page and come back, resize, Esc (tmux)", async (t) => {
  if (!tmuxAvailable()) return skip();
  const { world } = await screenWorld();
  try {
    // The pager shows the conversation's ◀ as a UTF-8 terminal does.
    const vars: Record<string, string> = { ...world.vars, LANG: "C.UTF-8" };
    delete vars.NO_COLOR;
    const { script, status } = terminalScript(world.dir, "search", ["-i"], vars, {
      banner: BANNER,
    });
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      await t.step("an empty box lists the recent conversations", async () => {
        const first = await tmux.waitFor(/Recent conversations: type to search/, "the screen");
        assert.ok(!first.includes(BANNER), "the screen has the terminal to itself");
        assert.ok(listRows(first).length >= 5, first);
      });
      await t.step("a fixture phrase finds its hit, with the answer in the preview", async () => {
        tmux.literal("saffron-lattice");
        const found = await tmux.waitFor(/Split it in three batches/, "the hit and its preview");
        const rows = listRows(found);
        assert.match(
          rows[0]!,
          /^claude +(just now|\d+ \w+ ago|\d{4}-\d\d-\d\d) +.*app dir +Plan the/,
        );
        assert.match(
          found,
          /^── claude:5d2c7f0e-3a1b-4c2d-/m,
          "the rule names the hit's conversation",
        );
        for (const line of found.split("\n")) assert.ok(displayWidth(line) <= 80, line);
        const styled = tmux.styledScreen();
        assert.match(styled, COLOURED, "with colour, the screen is coloured");
        assert.match(styled, REVERSE, "the selected row is in reverse video");
      });
      await t.step("agent:codex narrows the hits to Codex's", async () => {
        tmux.keys("C-u");
        tmux.literal("retry");
        const both = await tmux.waitFor(
          /^claude .*\n(.*\n)*codex |^codex .*\n(.*\n)*claude /m,
          "both",
        );
        assert.ok(listRows(both).length > 2, both);
        tmux.keys("Home");
        tmux.literal("agent:codex ");
        await tmux.waitFor(/^> agent:codex retry/m, "the filtered box");
        // Every row down to the rule is Codex's (waited for: a frame may be half drawn).
        const codex = await tmux.waitFor(/hits\n(codex [^\n]*\n)+(\s*\n)*── /, "only codex rows");
        assert.ok(listRows(codex).length > 0, codex);
      });
      await t.step("Enter pages the conversation at the hit; q comes back as it was", async () => {
        tmux.keys("Down");
        const styled = await tmux.waitForStyled(
          (screen) => REVERSE.test(screen.split("\n")[3] ?? ""),
          "the second hit selected",
        );
        const selected = styled.split("\n")[3]!;
        const before = tmux.screen();
        tmux.keys("Enter");
        const paged = await tmux.waitFor(/\(END\)|^:\s*$/m, "the pager");
        assert.match(paged, /^codex:[0-9a-f-]{36} {2}codex /m, "the conversation's heading");
        assert.match(paged, /◀ #\d+/, "the hit is marked");
        tmux.keys("q");
        // The same hits, the same row selected (waited for: tmux may show a frame half drawn).
        await tmux.waitForStyled((screen) => screen.includes(selected), "the row selected again");
        const back = await tmux.waitFor(/^> agent:codex retry/m, "the screen again");
        assert.deepEqual(listRows(back), listRows(before), "the same hits");
      });
      await t.step("a resize redraws at the new size", async () => {
        tmux.resize(100, 30);
        const wide = await tmux.waitFor(/^── .{90,}$/m, "the rule across 100 columns");
        for (const line of wide.split("\n")) assert.ok(displayWidth(line) <= 100, line);
        assert.match(wide, /^> agent:codex retry/m);
      });
      await t.step("Esc gives the screen back as it was and exits 0", async () => {
        tmux.keys("Escape");
        const after = await tmux.waitFor(new RegExp(BANNER), "the shell's screen");
        assert.doesNotMatch(after, /^> /m);
        assert.equal(await exitStatus(status), "0");
      });
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("with NO_COLOR the screen has no colour; a hostile transcript shows ␛ (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const { world } = await screenWorld();
  try {
    const planted = "\x1b]0;pwned\x07\x1b[2J\u009b31m";
    const id = "8f1e2d3c-4b5a-4968-8776-655443322110";
    const cwd = join(world.dir, "hostile");
    await placeClaudeTranscript(
      world,
      cwd,
      id,
      claudeTranscript(id, cwd, [[
        `deploy the quokka ${planted} now`,
        `Deployed quokka ${planted}`,
      ]]),
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { script } = terminalScript(world.dir, "search", ["-i", "quokka"], world.vars);
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      const screen = await tmux.waitFor(/Deployed quokka/, "the hostile hit's preview");
      assert.match(screen, /␛\]0;pwned\\x07␛\[2J\\x9b31m/, "shown as text");
      assert.match(screen, /^> quokka/m, "nothing cleared the screen");
      assert.notEqual(tmux.display("#{pane_title}"), "pwned", "nothing set the title");
      const styled = tmux.styledScreen();
      const colours = [...styled.matchAll(SGR)]
        .flatMap((m) => m[1]!.split(";"))
        .filter((p) => /^(3[0-8]|4[0-8]|9[0-7]|10[0-7])$/.test(p));
      assert.deepEqual(colours, [], "no colour code with NO_COLOR");
      assert.match(styled, REVERSE, "the selected row is in reverse video");
      tmux.keys("C-c");
      await tmux.waitFor(/^\s*$/, "the screen given back");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("Ctrl-Y copies the resume command; Ctrl-O runs the agent in the session's directory (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const { world, app } = await screenWorld();
  try {
    const { path, calls } = fakeAgents(world);
    const { script, status } = terminalScript(
      world.dir,
      "search",
      ["-i"],
      { ...world.vars, PATH: path },
    );
    const tmux = new Tmux(script, { width: 80, height: 24, clipboard: true });
    try {
      await tmux.waitFor(/Recent conversations/, "the screen");
      tmux.literal("saffron-lattice");
      await tmux.waitFor(/Split it in three batches/, "the hit");
      tmux.keys("C-y");
      await tmux.waitFor(/Copied: cd /, "the copy");
      assert.equal(tmux.buffer(), `cd '${app}' && claude --resume ${SESSION}`);
      tmux.keys("C-o");
      assert.equal(await exitStatus(status), "3", "the agent's exit status passes through");
      assert.equal(Deno.readTextFileSync(calls), `claude|${app}|--resume ${SESSION}\n`);
      const after = tmux.screen();
      assert.match(after, new RegExp(`Resuming claude:${SESSION} with: cd '`));
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("Ctrl-F forks the hit into a logbook session and opens it in chat (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  await withModelWorld(async (s) => {
    await writeSession(s.world);
    assert.equal(await reindex(["--quiet"], captureIo(), s.world.env), 0);
    const { script, status } = terminalScript(
      s.world.dir,
      "search",
      ["-i", "saffron-lattice"],
      s.vars,
    );
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      await tmux.waitFor(/Split it in three batches/, "the hit");
      tmux.keys("C-f");
      await tmux.waitFor(
        /Forked as "Plan the saffron-lattice [^"]*\(fork\)" \(/,
        "the fork",
      );
      await tmux.waitFor(/^>\s*$/m, "the chat prompt");
      tmux.keys("C-d");
      await tmux.waitFor(/Resume with: cd '/, "the resume line, with the fork's directory");
      assert.equal(await exitStatus(status), "0");
      const records: { forkedFrom?: string; messages: { content: string }[] }[] = [];
      for (const project of Deno.readDirSync(join(s.world.data, "sessions"))) {
        const dir = join(s.world.data, "sessions", project.name);
        for (const file of Deno.readDirSync(dir)) {
          if (file.name.endsWith(".json")) {
            records.push(JSON.parse(Deno.readTextFileSync(join(dir, file.name))));
          }
        }
      }
      assert.equal(records.length, 1);
      assert.equal(records[0]!.forkedFrom, `claude:${SESSION}`);
      assert.deepEqual(records[0]!.messages.map((m) => m.content), [QUESTION, ANSWER]);
    } finally {
      tmux.kill();
    }
  });
});

Deno.test("SIGTERM gives the terminal back: the shell's screen, its mode, exit 143 (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const { world } = await screenWorld();
  try {
    const { script, status } = terminalScript(world.dir, "search", ["-i", "saffron"], world.vars, {
      banner: BANNER,
      // The terminal's line discipline after the screen: cooked (icanon, echo) as it was.
      after: "stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo",
    });
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      await tmux.waitFor(/Split it in three batches/, "the screen");
      Deno.kill(tmux.childPid(), "SIGTERM");
      const after = await tmux.waitFor(/icanon echo/, "the mode shown after");
      assert.match(after, new RegExp(`^${BANNER}$`, "m"), "the shell's screen is back");
      assert.doesNotMatch(after, /^> /m);
      assert.equal(await exitStatus(status), "143");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("logbook alone on a terminal opens the search screen; without one it prints usage (tmux)", async () => {
  const { world } = await screenWorld();
  try {
    const piped = await runCli("logbook", [], world.vars);
    assert.equal(piped.code, 2, "no terminal: usage, as before");
    assert.match(piped.stdout, /^Usage: logbook <command> \[options\]$/m);
    const interactive = await runCli("search", ["-i", "saffron"], world.vars);
    assert.equal(interactive.code, 2);
    assert.match(interactive.stderr, /^error: Option "-i, --interactive" needs a terminal/);
    if (!tmuxAvailable()) return skip();
    const { script, status } = terminalScript(world.dir, "logbook", [], world.vars);
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      await tmux.waitFor(/Recent conversations: type to search/, "the screen");
      tmux.keys("Escape");
      assert.equal(await exitStatus(status), "0");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a search that finds nothing says which filter kept every match out (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const { world } = await screenWorld();
  try {
    const { script, status } = terminalScript(world.dir, "search", ["-i"], world.vars);
    const tmux = new Tmux(script, { width: 100, height: 24 });
    try {
      await tmux.waitFor(/Recent conversations: type to search/, "the screen");
      // The fixture's session is older than a week.
      tmux.literal("saffron-lattice since:7d");
      await tmux.waitFor(
        /No matches for "saffron-lattice" in the last 7 days; 2 older matches: drop since:7d/,
        "why nothing matched",
      );
      tmux.keys("Escape");
      assert.equal(await exitStatus(status), "0");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});
