// The full-screen search (`search -i`, `logbook` alone on a terminal) on a real terminal under
// tmux at 80×24: typing finds a fixture's hit, an inline filter narrows, Enter pages the
// conversation and q comes back to the screen as it was, a resize redraws, Ctrl-Y copies the
// resume command (OSC 52), Ctrl-O runs the agent's own resume in the session's directory, Ctrl-F
// forks into a logbook session, Esc gives the screen back; NO_COLOR draws no colour and a hostile
// transcript shows ␛ rather than acting. Skipped, with a message, where tmux is not installed.

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { displayWidth } from "../../commands/_terminal/wrap.ts";
import { claudeTranscript, placeClaudeTranscript } from "../_claude_transcript.ts";
import { captureIo, FIXTURES, makeWorld, runCli, type World } from "../_helpers.ts";
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
    const { script, status } = await terminalScript(world.dir, "search", ["-i"], vars, {
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

Deno.test("the search screen finds as you type: a prefix, another form, a typo, each said on the status line (tmux)", async (t) => {
  if (!tmuxAvailable()) return skip();
  const world = await makeWorld();
  try {
    cpSync(join(FIXTURES, "forgiving", "claude", "projects"), join(world.claude, "projects"), {
      recursive: true,
    });
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const vars: Record<string, string> = { ...world.vars, LANG: "C.UTF-8" };
    const { script, status } = await terminalScript(world.dir, "search", ["-i"], vars);
    const tmux = new Tmux(script, { width: 100, height: 24 });
    try {
      await tmux.waitFor(/Recent conversations: type to search/, "the screen");
      await t.step("the first letters of a word show its hit", async () => {
        tmux.literal("lantern");
        // The whole word first, then the words it begins.
        const found = await tmux.waitFor(
          /^> lantern\s*\n.*\n.*lantern config.*\n(.*\n)*.*lanternfish service/m,
          "the hits of lantern and lantern*",
        );
        assert.doesNotMatch(found, /Indexed words begin with it/);
        tmux.literal("f");
        const prefix = await tmux.waitFor(
          /No hits for "lanternf"; showing "lanternf\*"/,
          "the status line",
        );
        assert.match(listRows(prefix)[0]!, /lanternfish service/);
      });
      await t.step("the whole word: no note", async () => {
        tmux.literal("ish");
        await tmux.waitFor(/^> lanternfish\s*\n\s+\d+ hits\n/m, "the count alone");
      });
      await t.step("another form of a word", async () => {
        tmux.keys("C-u");
        tmux.literal("rotation ");
        const forms = await tmux.waitFor(/rotated the signing keys/, "a form's hit");
        assert.match(forms, /No hits for "rotation"; showing/);
      });
      await t.step("a typo", async () => {
        tmux.keys("C-u");
        tmux.literal("signing lanternfsh");
        const typo = await tmux.waitFor(
          /No hits for "signing lanternfsh"; showing "signing lanternfish"/,
          "the corrected query",
        );
        assert.match(listRows(typo)[0]!, /signing keys/);
      });
      tmux.keys("Escape");
      assert.equal(await exitStatus(status), "0");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("Enter on an answer below a long question opens the pager at the hit, marked, the question's end above it (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const world = await makeWorld();
  try {
    // A question of 70 lines (a pasted brief): its answer is screens below the question's start.
    const id = "2b7e4c1a-9d3f-4e5a-8c6b-1f2e3d4c5b6a";
    const app = join(world.dir, "brief");
    const brief = Array.from({ length: 70 }, (_, i) => `brief line ${i + 1} of the plan`);
    await placeClaudeTranscript(
      world,
      app,
      id,
      claudeTranscript(id, app, [[brief.join("\n"), "The verdigris-cascade holds: ship it."]]),
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const vars: Record<string, string> = { ...world.vars, LANG: "C.UTF-8" };
    const { script } = await terminalScript(world.dir, "search", ["-i", "verdigris-cascade"], vars);
    const tmux = new Tmux(script, { width: 80, height: 24 });
    try {
      await tmux.waitFor(/The verdigris-cascade holds/, "the hit");
      tmux.keys("Enter");
      // less draws its prompt once the screen is drawn.
      const paged = await tmux.waitFor(/^:\s*$/m, "the pager");
      const lines = paged.split("\n");
      const marked = lines.findIndex((l) => /assistant ◀ #\d+$/.test(l));
      assert.ok(marked !== -1, `the hit is on the screen, marked:\n${paged}`);
      assert.match(lines[marked + 1]!, /^The verdigris-cascade holds: ship it\.$/);
      // Above it, the question's end, as much of it as the screen holds with the hit.
      assert.equal(lines[marked - 1]!.trim(), "");
      assert.equal(lines[marked - 2], "brief line 70 of the plan");
      assert.ok(marked >= 12, `the question fills the screen above the hit:\n${paged}`);
      assert.doesNotMatch(paged, /brief line 1 of the plan/, "not opened at the question's start");
      tmux.keys("g");
      await tmux.waitFor(/^claude:2b7e4c1a-/m, "the conversation's start, a key away");
      tmux.keys("q");
      await tmux.waitFor(/^> verdigris-cascade/m, "the screen again");
      tmux.keys("Escape");
      // show --around pages the same way.
      const record = /◀ #(\d+)/.exec(lines[marked]!)![1]!;
      const show = await terminalScript(
        world.dir,
        "show",
        [`claude:${id}`, "--around", record],
        vars,
      );
      const shown = new Tmux(show.script, { width: 80, height: 24 });
      try {
        const page = await shown.waitFor(/^:\s*$/m, "show's pager");
        assert.match(
          page,
          new RegExp(`^brief line 70 of the plan\n\n.*assistant ◀ #${record}$`, "m"),
        );
      } finally {
        shown.kill();
      }
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
    const { script } = await terminalScript(world.dir, "search", ["-i", "quokka"], world.vars);
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
    const { script, status } = await terminalScript(
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

Deno.test("a session's directory gone: Ctrl-Y copies the command that runs in its nearest, and says so whole (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  const world = await makeWorld();
  try {
    const gone = join(world.dir, "gone", "app dir");
    await placeClaudeTranscript(
      world,
      gone,
      SESSION,
      claudeTranscript(SESSION, gone, [[
        QUESTION,
        ANSWER,
      ]]),
    );
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    Deno.removeSync(join(world.dir, "gone"), { recursive: true });
    const { path, calls } = fakeAgents(world);
    const { script, status } = await terminalScript(
      world.dir,
      "search",
      ["-i", "saffron-lattice"],
      { ...world.vars, PATH: path },
    );
    const tmux = new Tmux(script, { width: 80, height: 24, clipboard: true });
    try {
      await tmux.waitFor(/Split it in three batches/, "the hit");
      tmux.keys("C-y");
      // One rule with resume --print: the nearest directory that is there, never the gone one.
      const copied = await tmux.waitFor(/the nearest that\s+does/, "the copy and its note");
      assert.equal(tmux.buffer(), `cd ${world.dir} && claude --resume ${SESSION}`);
      const said = copied.replace(/\s+/g, " ");
      assert.ok(said.includes(`Copied: cd ${world.dir} && claude --resume ${SESSION}`), copied);
      assert.ok(
        said.includes(
          `Note: the session's directory "${gone}" no longer exists; using "${world.dir}", the ` +
            "nearest that does",
        ),
        copied,
      );
      tmux.keys("C-o");
      assert.equal(await exitStatus(status), "3");
      assert.equal(Deno.readTextFileSync(calls), `claude|${world.dir}|--resume ${SESSION}\n`);
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("Ctrl-F with no model forks in the agent's own fork; with neither, the whole reason (tmux)", async (t) => {
  if (!tmuxAvailable()) return skip();
  const { world, app } = await screenWorld();
  try {
    await t.step("claude --resume <id> --fork-session, in the session's directory", async () => {
      const { path, calls } = fakeAgents(world);
      const { script, status } = await terminalScript(
        world.dir,
        "search",
        ["-i", "saffron-lattice"],
        { ...world.vars, PATH: path },
      );
      const tmux = new Tmux(script, { width: 200, height: 24 });
      try {
        await tmux.waitFor(/Split it in three batches/, "the hit");
        tmux.keys("C-f");
        assert.equal(await exitStatus(status), "3", "the agent's exit status passes through");
        Deno.removeSync(status);
        assert.equal(
          Deno.readTextFileSync(calls),
          `claude|${app}|--resume ${SESSION} --fork-session\n`,
        );
        const after = tmux.screen();
        assert.match(after, /note: no model is configured, so this forks in Claude Code; /);
        assert.match(after, new RegExp(`Forking claude:${SESSION} with: cd '`));
      } finally {
        tmux.kill();
      }
    });
    await t.step("no claude on PATH either: every line of why, on the status line", async () => {
      const none = join(world.dir, "no-agents");
      Deno.mkdirSync(none);
      const { script } = await terminalScript(
        world.dir,
        "search",
        ["-i", "saffron-lattice"],
        { ...world.vars, PATH: none },
      );
      const tmux = new Tmux(script, { width: 80, height: 24 });
      try {
        await tmux.waitFor(/Split it in three batches/, "the hit");
        tmux.keys("C-f");
        const screen = await tmux.waitFor(/LOGBOOK_MODEL/, "the whole reason");
        const lines = screen.split("\n");
        assert.match(
          lines[1]!,
          /^Cannot fork in Claude Code: "claude" is not on PATH; a fork into/,
        );
        const said = screen.replace(/\s+/g, " ");
        for (
          const part of [
            "a fork into a logbook session needs a model: No model configured: add these two " +
            "lines to",
            `"baseUrl": "http://127.0.0.1:8080/v1",`,
            `"model": "<the model's name at that endpoint>"`,
            "with your endpoint's address, or set the variables OPENAI_BASE_URL and LOGBOOK_MODEL",
          ]
        ) assert.ok(said.includes(part), `${part}\n${screen}`);
        // The list is still there below it, the hit still selected.
        assert.match(screen, /^claude .*Plan the saffron/m);
        tmux.keys("Escape");
      } finally {
        tmux.kill();
      }
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("Ctrl-F forks the hit into a logbook session and opens it in chat (tmux)", async () => {
  if (!tmuxAvailable()) return skip();
  await withModelWorld(async (s) => {
    await writeSession(s.world);
    assert.equal(await reindex(["--quiet"], captureIo(), s.world.env), 0);
    const { script, status } = await terminalScript(
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
    const { script, status } = await terminalScript(
      world.dir,
      "search",
      ["-i", "saffron"],
      world.vars,
      {
        banner: BANNER,
        // The terminal's line discipline after the screen: cooked (icanon, echo) as it was.
        after: "stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo",
      },
    );
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
    const { script, status } = await terminalScript(world.dir, "logbook", [], world.vars);
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
    const { script, status } = await terminalScript(world.dir, "search", ["-i"], world.vars);
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
