// Commands on a real terminal, driven under tmux: the chat prompt (Up and Down, a paste, Ctrl-R,
// Tab, /btw and Ctrl-L, resume's recap), forget asking first, and the `resume` picker filtering
// as you type, refusing a manifest run and resuming.
// Skipped, with a message, where tmux is not installed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { loadContext } from "../../lib/context.ts";
import { projectOf } from "../../lib/paths.ts";
import { newRecord, SessionStore } from "../../lib/sessions/records.ts";
import { withModelWorld } from "../_openai_server.ts";
import { captureIo, childBaseEnv, makeWorld, type World } from "../_helpers.ts";
import { exitStatus, terminalScript, Tmux, tmuxAvailable } from "../_tmux.ts";

Deno.test("on a terminal, Up and Down walk the prompt history (tmux)", async (t) => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  await withModelWorld(async (s) => {
    const { script, status } = await terminalScript(s.world.dir, "chat", [], s.vars);
    const tmux = new Tmux(script);
    try {
      await tmux.waitFor(/^>\s*$/m, "the prompt");
      tmux.literal("alpha question");
      tmux.keys("Enter");
      await tmux.waitFor(/Echo: alpha question/, "the first reply");
      tmux.literal("beta question");
      tmux.keys("Enter");
      await tmux.waitFor(/Echo: beta question/, "the second reply");
      await t.step(
        "Up twice reaches the older prompt; Down comes back to the half-written line",
        async () => {
          tmux.literal("draft");
          tmux.keys("Up");
          await tmux.waitFor(/^> beta question\s*$/m, "the newest entry");
          tmux.keys("Up");
          await tmux.waitFor(/^> alpha question\s*$/m, "the older entry");
          tmux.keys("Up");
          tmux.keys("Down", "Down");
          await tmux.waitFor(/^> draft\s*$/m, "the half-written line back");
          tmux.keys("C-u");
          tmux.keys("Up", "Up", "Enter");
          await tmux.waitFor(
            /Echo: alpha question[\s\S]*Echo: alpha question/,
            "the recalled prompt answered",
          );
        },
      );
      tmux.literal("/exit");
      tmux.keys("Enter");
      await tmux.waitFor(/Resume with: logbook resume [0-9a-f-]{36}/, "the resume line");
      assert.equal(await exitStatus(status), "0");
      const sent = s.server.requests.map((r) => r.json.messages.at(-1)!.content);
      assert.deepEqual(sent, ["alpha question", "beta question", "alpha question"]);
      const history = Deno.readTextFileSync(join(s.world.data, "prompt-history.jsonl"))
        .trimEnd().split("\n").map((l) => JSON.parse(l).text);
      assert.deepEqual(history, ["alpha question", "beta question", "alpha question", "/exit"]);
    } finally {
      tmux.kill();
    }
  });
});

Deno.test("the chat prompt: a paste kept whole, Ctrl-R, Tab, word motions, waiting (tmux)", async (t) => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  await withModelWorld(async (s) => {
    const { script, status } = await terminalScript(s.world.dir, "chat", [], s.vars);
    const tmux = new Tmux(script);
    const sent = () => s.server.requests.map((r) => r.json.messages.at(-1)!.content);
    const answered = async (count: number, what: string) => {
      for (let i = 0; i < 600 && s.server.requests.length < count; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(s.server.requests.length, count, what);
    };
    try {
      await tmux.waitFor(/^>\s*$/m, "the prompt");
      await t.step("the model's name shows until the first piece of the reply", async () => {
        s.server.options.delayMs = 1500;
        tmux.literal("first question");
        tmux.keys("Enter");
        await tmux.waitFor(/waiting for asked-model…/, "the waiting line");
        const after = await tmux.waitFor(/Echo: first question/, "the reply");
        assert.ok(!after.includes("waiting for"), after);
        s.server.options.delayMs = 0;
      });
      await t.step("a multi-line paste is one prompt, sent whole", async () => {
        await tmux.waitFor(/^>\s*$/m, "the prompt again");
        tmux.paste("line one\nline two\n\tindented three");
        await tmux.waitFor(/^> line one␤line two␤␉indented three\s*$/m, "the paste on one line");
        tmux.keys("Enter");
        await answered(2, "one request for the paste");
        assert.equal(sent()[1], "line one\nline two\n\tindented three");
      });
      await t.step("Ctrl-R finds an earlier prompt and Enter sends it", async () => {
        await tmux.waitFor(/Echo: line one/, "the paste's reply");
        await tmux.ready("the prompt");
        tmux.keys("C-r");
        tmux.literal("first q");
        await tmux.waitFor(/\(reverse-i-search\)`first q': first question/, "the match");
        tmux.keys("Enter");
        await answered(3, "the found prompt sent");
        assert.equal(sent()[2], "first question");
      });
      await t.step("Alt-b moves back a word; Tab completes a slash command", async () => {
        await tmux.waitFor(/Echo: first question[\s\S]*Echo: first question/, "the reply");
        await tmux.ready("the prompt");
        tmux.literal("alpha beta");
        tmux.keys("M-b");
        tmux.literal("X");
        tmux.keys("Enter");
        await answered(4, "the edited prompt sent");
        assert.equal(sent()[3], "alpha Xbeta");
        await tmux.waitFor(/Echo: alpha Xbeta/, "its reply");
        await tmux.ready("the prompt");
        tmux.literal("/ren");
        tmux.keys("Tab");
        await tmux.waitFor(/^> \/rename\s*$/m, "the completed command");
        tmux.literal("Named by hand");
        tmux.keys("Enter");
        await tmux.waitFor(/Renamed to "Named by hand"/, "the rename");
        await tmux.ready("the prompt");
      });
      await t.step("/undo after /rename takes the last turn back", async () => {
        tmux.literal("/undo");
        tmux.keys("Enter");
        await tmux.waitFor(/Took the last turn back/, "the undo");
        await tmux.ready("the prompt");
      });
      await t.step(
        "/btw answers aside; Ctrl-L shows the side questions above the prompt",
        async () => {
          tmux.literal("/btw a quick aside");
          tmux.keys("Enter");
          await tmux.waitFor(/Echo: a quick aside\n\(a side question/, "the aside's answer");
          await tmux.ready("the prompt");
          const count = s.server.requests.length;
          tmux.literal("half typed");
          tmux.keys("C-l");
          const view = await tmux.waitFor(/Side questions \(1\):/, "the view");
          assert.match(view, / {2}1\. a quick aside\n {5}Echo: a quick aside\n> half typed/);
          tmux.keys("C-u");
          tmux.literal("after the aside");
          tmux.keys("Enter");
          await answered(count + 1, "the next turn");
          const messages = s.server.requests.at(-1)!.json.messages.map((m) => m.content);
          assert.ok(
            !messages.some((m) => m.includes("quick aside")),
            "the aside is not sent again",
          );
          await tmux.waitFor(/Echo: after the aside/, "its reply");
          await tmux.ready("the prompt");
        },
      );
      tmux.keys("C-d");
      const end = await tmux.waitFor(
        /Resume with: logbook resume [0-9a-f-]{36}/,
        "the resume line",
      );
      assert.equal(await exitStatus(status), "0");
      const id = /Resume with: logbook resume ([0-9a-f-]{36})/.exec(end)![1]!;

      await t.step("resume shows the last exchange before the prompt", async () => {
        const resumed = await terminalScript(s.world.dir, "resume", [id], s.vars);
        const again = new Tmux(resumed.script);
        try {
          const screen = await again.waitFor(/^>\s*$/m, "the resumed prompt");
          assert.match(screen, /Resuming "Named by hand"/);
          assert.match(screen, /^> after the aside\nEcho: after the aside\n/m);
          assert.ok(!screen.includes("alpha Xbeta"), "the undone turn is not shown");
          again.keys("C-d");
        } finally {
          again.kill();
        }
      });
    } finally {
      tmux.kill();
    }
  });
});

Deno.test("the resume picker filters as you type, refuses a manifest run and resumes the pick (tmux)", async () => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  await withModelWorld(async (s) => {
    const sessionId = "6e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b";
    writeClaudeSession(s.world, s.project, sessionId, "Deploy the docs site to staging");
    assert.equal(await reindex(["--quiet"], captureIo(), s.world.env), 0);
    const store = new SessionStore(loadContext({ env: s.world.env }).paths);
    const at = Date.parse("2026-05-01T00:00:00Z");
    const own = newRecord({
      cwd: s.project,
      project: projectOf(s.project).root,
      branch: null,
      build: "0.1.0",
      now: at,
      title: "Refactor the retry helper",
    });
    own.messages.push({ role: "user", content: "Refactor the retry helper" });
    store.save(own);
    store.save({
      ...newRecord({
        cwd: s.project,
        project: projectOf(s.project).root,
        branch: null,
        build: "0.1.0",
        now: at + 1000,
        kind: "manifest",
        title: "Upgrade the linter",
      }),
      plan: { goal: "Upgrade the linter", plan: ["bump"], steps: [] },
    });
    const bin = join(s.world.dir, "bin");
    const calls = join(s.world.dir, "calls.txt");
    Deno.mkdirSync(bin);
    Deno.writeTextFileSync(
      join(bin, "claude"),
      `#!/bin/sh\nprintf '%s|%s\\n' "$PWD" "$*" > '${calls}'\n`,
    );
    Deno.chmodSync(join(bin, "claude"), 0o755);
    const vars = { ...s.vars, PATH: `${bin}:${childBaseEnv().PATH}` };

    const { script, status } = await terminalScript(s.world.dir, "resume", [], vars);
    const tmux = new Tmux(script);
    try {
      const first = await tmux.waitFor(/Upgrade the linter/, "the picker");
      assert.match(first, /logbook +\[manifest\] Upgrade the linter/);
      assert.match(first, /claude +Deploy the docs site to staging/);
      assert.match(first, /logbook +Refactor the retry helper/);
      tmux.literal("linter");
      // The list follows the filter a moment after the typed text shows: wait for the settled list.
      const filtered = await tmux.waitUntil(
        (screen) =>
          /\(type to filter\) linter\s*\n.*\[manifest\]/.test(screen) &&
          !screen.includes("Deploy the docs"),
        "the filtered list",
      );
      assert.match(filtered, /\[manifest\] Upgrade the linter.*cannot be continued/);
      // Enter on a manifest run picks nothing: the picker stays and goes on filtering.
      tmux.keys("Enter");
      for (let i = 0; i < "linter".length; i++) tmux.keys("BSpace");
      tmux.literal("docs");
      const docs = await tmux.waitUntil(
        (screen) =>
          /\(type to filter\) docs\s*\n.*Deploy the docs/.test(screen) &&
          !screen.includes("Refactor the retry helper") && !screen.includes("Upgrade the linter"),
        "the docs row alone",
      );
      assert.match(docs, /claude +Deploy the docs site to staging/);
      tmux.keys("Enter");
      assert.equal(await exitStatus(status), "0");
      assert.equal(Deno.readTextFileSync(calls), `${s.project}|--resume ${sessionId}\n`);
    } finally {
      tmux.kill();
    }
  });
});

Deno.test("the resume picker shows a hostile title visibly and without its key (tmux)", async () => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  await withModelWorld(async (s) => {
    const aws = "AKIA" + "Z3MQW7Q2JX4HB7ND";
    const planted = "\x1b]0;pwned\x07\u009b7m";
    writeClaudeSession(
      s.world,
      s.project,
      "8f1e2d3c-4b5a-4968-8776-655443322110",
      `${planted} set AWS_ACCESS_KEY_ID=${aws} and deploy the docs`,
    );
    assert.equal(await reindex(["--quiet"], captureIo(), s.world.env), 0);
    const { script } = await terminalScript(s.world.dir, "resume", [], s.vars);
    const tmux = new Tmux(script);
    try {
      // Shown, not obeyed: the sequences are on the screen as text, and nothing cleared it.
      const screen = await tmux.waitFor(/]0;pwned\\x07/, "the hostile row");
      assert.match(screen, /\(type to filter\)/);
      assert.match(screen, /]0;pwned\\x07\\x9b7m set AWS_ACCESS_KEY_ID=\[REDACTED:/);
      // The label is cut at 60 characters, inside the key's place: it was redacted before.
      assert.ok(!screen.includes("AKIA"), screen);
      tmux.keys("Escape");
    } finally {
      tmux.kill();
    }
  });
});

/** A Claude Code transcript in its real format: one question and answer, run in `cwd`. */
function writeClaudeSession(world: World, cwd: string, sessionId: string, question: string) {
  const dir = join(world.claude, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  Deno.mkdirSync(dir, { recursive: true });
  const base = { isSidechain: false, cwd, sessionId, version: "2.1.40", gitBranch: "main" };
  const u = crypto.randomUUID();
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: "user",
      uuid: u,
      timestamp: "2026-06-01T09:00:00.000Z",
      message: { role: "user", content: question },
    },
    {
      ...base,
      parentUuid: u,
      type: "assistant",
      uuid: crypto.randomUUID(),
      timestamp: "2026-06-01T09:00:05.000Z",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-x",
        content: [{ type: "text", text: "Sure." }],
      },
    },
  ];
  Deno.writeTextFileSync(
    join(dir, `${sessionId}.jsonl`),
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
}

Deno.test("forget on a terminal lists what goes, asks, and forgets on y (tmux)", async () => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  await withModelWorld(async (s) => {
    const sessionId = "7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
    writeClaudeSession(s.world, s.project, sessionId, "Rotate the staging credentials");
    assert.equal(await reindex(["--quiet"], captureIo(), s.world.env), 0);
    const { script, status } = await terminalScript(
      s.world.dir,
      "forget",
      [`claude:${sessionId}`],
      s.vars,
    );
    const tmux = new Tmux(script);
    try {
      const asked = await tmux.waitFor(/for good\? \[y\/N\]/, "the question");
      assert.match(asked, new RegExp(`would forget  claude:${sessionId}  Rotate the staging`));
      assert.match(asked, /Forget 1 conversation \(2 records, [^)]*\) for good\? \[y\/N\]/);
      tmux.literal("y");
      tmux.keys("Enter");
      await tmux.waitFor(/Forgot 1 conversation \(2 records/, "the result");
      assert.equal(await exitStatus(status), "0");
    } finally {
      tmux.kill();
    }
  });
});

Deno.test("on a terminal, show pages through less, wrapped to the terminal, and q quits (tmux)", async () => {
  if (!tmuxAvailable()) {
    console.log("skipped: tmux is not installed, so the terminal test cannot run");
    return;
  }
  try {
    new Deno.Command("less", { args: ["--version"], stdout: "null" }).outputSync();
  } catch {
    console.log("skipped: less is not installed, so the pager test cannot run");
    return;
  }
  const world = await makeWorld({ fixtures: ["claude"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const vars: Record<string, string> = { ...world.vars };
    delete vars.NO_COLOR;
    const { script, status } = await terminalScript(
      world.dir,
      "show",
      ["claude:f332cca8"],
      { ...vars, INIT_CWD: world.dir },
    );
    const tmux = new Tmux(script);
    try {
      // less shows the first screen and waits at its prompt: the whole conversation is paged.
      const screen = await tmux.waitFor(/^:\s*$/m, "the pager's prompt");
      assert.match(screen, /tundra-mosaic: nightly export batching/);
      assert.match(screen, /^\d{4}-\d\d-\d\d \d\d:\d\d user\s*$/m);
      for (const line of screen.split("\n")) assert.ok([...line].length <= 160, line);
      tmux.keys("q");
      assert.equal(await exitStatus(status), "0");
    } finally {
      tmux.kill();
    }
  } finally {
    await world.cleanup();
  }
});
