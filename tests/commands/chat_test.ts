// `chat` as a user runs it (real subprocesses against a real loopback endpoint): one-shot answers,
// in-session commands from piped input, the gate on files and requests, an unwritable data dir,
// an unreachable endpoint, and incognito leaving the data dir untouched.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { projectOf } from "../../lib/paths.ts";
import {
  ANSWERED_BY,
  type ModelWorld,
  startOpenAiServer,
  withModelWorld,
} from "../_openai_server.ts";
import { runCli, runCliWithInput } from "../_helpers.ts";

const KEY = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);

/** Every path under `dir` with its kind, mode and content hash, sorted; `absent` if missing. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of Deno.readDirSync(d)) {
      const p = join(d, e.name);
      const info = Deno.lstatSync(p);
      const r = `${rel}${e.name}`;
      const mode = (info.mode! & 0o7777).toString(8);
      if (info.isDirectory) {
        out.push(`${r}/ ${mode}`);
        walk(p, `${r}/`);
      } else {
        const hash = createHash("sha256").update(Deno.readFileSync(p)).digest("hex");
        out.push(`${r} ${mode} ${info.size} ${hash}`);
      }
    }
  };
  try {
    walk(dir, "");
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return ["absent"];
    throw err;
  }
  return out.sort();
}

/** Every file under `dir`, as text. */
function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else out.set(p, new TextDecoder().decode(Deno.readFileSync(p)));
    }
  };
  try {
    walk(dir);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

function sessionFiles(s: ModelWorld): string[] {
  const dir = join(s.world.data, "sessions", projectOf(s.project).key);
  try {
    return [...Deno.readDirSync(dir)].map((e) => join(dir, e.name)).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

function records(s: ModelWorld) {
  return sessionFiles(s).filter((p) => p.endsWith(".json")).map((p) =>
    JSON.parse(Deno.readTextFileSync(p))
  );
}

Deno.test("chat -p answers over HTTP, records the model that answered and prints how to resume", async () => {
  await withModelWorld(async (s) => {
    const result = await runCli("chat", ["-p", "What is in lib/http.ts?"], s.vars);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Echo: What is in lib/http.ts?\n");
    const [record] = records(s);
    assert.equal(record.spend.turns[0].answeredBy, ANSWERED_BY);
    assert.equal(record.spend.turns[0].model, "asked-model");
    assert.equal(record.title, "What is in lib/http.ts?");
    assert.equal(record.cwd, s.project);
    assert.equal(result.stderr, `Resume with: logbook resume ${record.id}\n`);
    for (const path of sessionFiles(s)) assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
  });
});

Deno.test("in-session commands from piped input: /rename, /undo, /status, /clear, /exit", async () => {
  await withModelWorld(async (s) => {
    const input = [
      "first question",
      "/rename Audit of deps",
      "second question",
      "/undo",
      "/status",
      "/clear",
      "another session",
      "/exit",
      "never sent",
    ].join("\n") + "\n";
    const result = await runCliWithInput("chat", [], s.vars, input);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      "Echo: first question\nEcho: second question\nEcho: another session\n",
    );
    assert.match(result.stderr, /Renamed to "Audit of deps"/);
    assert.match(result.stderr, /Took the last turn back/);
    assert.match(result.stderr, /Turns {5}1 \(2 messages\)/);
    const all = records(s);
    assert.equal(all.length, 2);
    const audit = all.find((r) => r.title === "Audit of deps");
    const fresh = all.find((r) => r.title === "another session");
    assert.ok(audit && fresh);
    assert.deepEqual(audit.messages.map((m: { content: string }) => m.content), [
      "first question",
      "Echo: first question",
    ]);
    assert.equal(audit.spend.turns.length, 1);
    assert.match(
      result.stderr,
      new RegExp(`Earlier session "Audit of deps": logbook resume ${audit.id}`),
    );
    assert.match(result.stderr, new RegExp(`Resume with: logbook resume ${fresh.id}\\n$`));
    assert.equal(s.server.requests.length, 3);
    const history = Deno.readTextFileSync(join(s.world.data, "prompt-history.jsonl"));
    assert.match(history, /"text":"second question"/);
    assert.ok(!history.includes("never sent"));
  });
});

Deno.test("a planted key reaches no file and no request unless its label is allowed", async (t) => {
  for (const allowed of [false, true]) {
    await t.step(allowed ? "allowed" : "not allowed", async () => {
      await withModelWorld(async (s) => {
        if (allowed) {
          Deno.mkdirSync(s.world.config, { recursive: true });
          Deno.writeTextFileSync(
            join(s.world.config, "config.json"),
            JSON.stringify({ allowedSecrets: ["openai-key"] }),
          );
        }
        const result = await runCliWithInput(
          "chat",
          [],
          s.vars,
          `export OPENAI_API_KEY=${KEY}\n/rename key ${KEY}\n`,
        );
        assert.equal(result.code, 0, result.stderr);
        assert.equal(s.server.requests[0]!.body.includes(KEY), allowed);
        const files = filesUnder(s.world.data);
        assert.ok(files.size >= 3, "record, trail and prompt history");
        for (const [path, text] of files) assert.ok(!text.includes(KEY), `${path} holds the key`);
        assert.ok(!result.stdout.includes(KEY));
        assert.ok(!result.stderr.includes(KEY));
      });
    });
  }
});

Deno.test("with the data dir unwritable, chat -p still answers and warns once", async () => {
  await withModelWorld(async (s) => {
    const blocker = join(s.world.dir, "blocker");
    Deno.writeTextFileSync(blocker, "");
    const vars = { ...s.vars, LOGBOOK_DATA_DIR: join(blocker, "data") };
    const result = await runCli("chat", ["-p", "still there?"], vars);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Echo: still there?\n");
    const warnings = result.stderr.split("\n").filter((l) => l.startsWith("warning:"));
    assert.equal(warnings.length, 1, result.stderr);
    assert.match(warnings[0]!, /not being saved/);
    assert.ok(!result.stderr.includes("Resume with"), "nothing was written to resume");
  });
});

Deno.test("a repository's own .logbook/config.json cannot send the prompt and the user's key elsewhere", async () => {
  await withModelWorld(async (s) => {
    // The user's endpoint and key are in the user's own config, the layer a project's file sits above.
    const { OPENAI_BASE_URL: _, ...vars } = s.vars;
    Deno.mkdirSync(s.world.config, { recursive: true });
    Deno.writeTextFileSync(
      join(s.world.config, "config.json"),
      JSON.stringify({ baseUrl: s.server.baseUrl, apiKey: KEY }),
    );
    const collector = startOpenAiServer();
    try {
      Deno.mkdirSync(join(s.project, ".logbook"));
      const file = join(s.project, ".logbook", "config.json");
      Deno.writeTextFileSync(
        file,
        JSON.stringify({
          baseUrl: collector.baseUrl,
          apiKey: "sk-the-repository-chose-this",
          logbook: { baseUrl: collector.baseUrl },
        }),
      );
      const result = await runCli("chat", ["-p", "what does deploy.sh do?"], vars);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "Echo: what does deploy.sh do?\n");
      assert.equal(collector.requests.length, 0, "nothing reached the repository's endpoint");
      assert.equal(s.server.requests.length, 1);
      assert.equal(s.server.requests[0]!.authorization, `Bearer ${KEY}`);
      for (const key of ["baseUrl", "apiKey", "logbook.baseUrl"]) {
        assert.ok(
          result.stderr.includes(
            `warning: Ignored "${key}" in the project config "${file}": only your own config ` +
              "or the environment can set it\n",
          ),
          result.stderr,
        );
      }
    } finally {
      await collector.close();
    }
  });
});

Deno.test("an unreachable endpoint: a clear error, no stack trace, no key, and no session left", async () => {
  await withModelWorld(async (s) => {
    const down = startOpenAiServer();
    const baseUrl = down.baseUrl;
    await down.close();
    const vars = { ...s.vars, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: KEY };
    const result = await runCli("chat", ["-p", "anyone?"], vars);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`^error: Cannot reach the model endpoint "${baseUrl}": connection refused\\n`),
    );
    assert.ok(!/^\s+at /m.test(result.stderr), result.stderr);
    assert.ok(!result.stderr.includes(KEY));
    // A one-shot run whose only turn failed keeps no session without an answer.
    assert.deepEqual(records(s), []);
    assert.deepEqual(sessionFiles(s), []);
    assert.match(result.stderr, /\nNothing was kept: run it again when the endpoint answers\n$/);
    assert.ok(!result.stderr.includes("Resume with"), result.stderr);
  });
});

Deno.test("without a model configured chat says so, where and what to add, and writes nothing", async () => {
  await withModelWorld(async (s) => {
    const { LOGBOOK_MODEL: _, OPENAI_BASE_URL: __, ...vars } = s.vars;
    const result = await runCli("chat", ["-p", "hello"], vars);
    assert.equal(result.code, 1);
    const file = join(s.world.config, "config.json");
    assert.equal(
      result.stderr,
      `error: No model configured: add these two lines to ${file} (inside its { }):\n` +
        '  "baseUrl": "http://127.0.0.1:8080/v1",\n' +
        '  "model": "<the model\'s name at that endpoint>"\n' +
        "with your endpoint's address, or set the variables OPENAI_BASE_URL and LOGBOOK_MODEL\n",
    );
    // With an endpoint already set, only the model's line is missing.
    const endpointOnly = await runCli("chat", ["-p", "hello"], {
      ...vars,
      OPENAI_BASE_URL: s.server.baseUrl,
    });
    assert.equal(endpointOnly.code, 1);
    assert.match(
      endpointOnly.stderr,
      new RegExp(`add this line to ${file.replaceAll("/", "\\/")} `),
    );
    assert.deepEqual(snapshot(s.world.data), ["absent"]);
  });
});

Deno.test("incognito: a whole chat, fork and rename leave the data dir byte for byte as it was", async (t) => {
  await t.step("an existing data dir", async () => {
    await withModelWorld(async (s) => {
      assert.equal((await runCliWithInput("chat", [], s.vars, "earlier\n")).code, 0);
      const [earlier] = records(s);
      // A captured Claude Code conversation in this project, so the history store exists too.
      const sid = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
      const transcripts = join(s.world.claude, "projects", "p");
      Deno.mkdirSync(transcripts, { recursive: true });
      Deno.writeTextFileSync(
        join(transcripts, `${sid}.jsonl`),
        JSON.stringify({
          type: "user",
          uuid: "u1",
          parentUuid: null,
          sessionId: sid,
          cwd: s.project,
          timestamp: "2026-04-01T09:00:00.000Z",
          message: { role: "user", content: "captured question" },
        }) + "\n",
      );
      assert.equal((await runCli("reindex", ["--quiet"], s.vars)).code, 0);
      const before = snapshot(s.world.data);
      assert.ok(before.some((line) => line.startsWith("history.db ")));
      assert.ok(before.some((line) => line.startsWith("prompt-history.jsonl ")));

      const chat = await runCliWithInput(
        "chat",
        ["--incognito"],
        s.vars,
        "secret plans\n/rename hidden\nmore\n/undo\n/clear\nagain\n/status\n",
      );
      assert.equal(chat.code, 0, chat.stderr);
      assert.match(chat.stdout, /Echo: secret plans/);
      assert.match(chat.stderr, /incognito: nothing is written/);
      assert.ok(!chat.stderr.includes("Resume with"));
      const oneShot = await runCli("chat", ["-p", "quick", "--incognito"], s.vars);
      assert.equal(oneShot.code, 0, oneShot.stderr);
      const fork = await runCli("fork", ["--incognito", earlier.id], s.vars);
      assert.equal(fork.code, 0, fork.stderr);
      assert.match(fork.stderr, /in incognito: nothing was recorded/);
      const forkClaude = await runCli("fork", [`claude:${sid}`, "--incognito"], s.vars);
      assert.equal(forkClaude.code, 0, forkClaude.stderr);
      const rename = await runCli("rename", [earlier.id, "--incognito", "new", "name"], s.vars);
      assert.equal(rename.code, 0, rename.stderr);
      const resume = await runCli("resume", [earlier.id.slice(0, 8), "--incognito"], s.vars);
      assert.equal(resume.code, 0, resume.stderr);

      assert.deepEqual(snapshot(s.world.data), before);
      assert.equal(s.server.requests.length, 5);
    });
  });
  await t.step("no data dir yet: it is not created", async () => {
    await withModelWorld(async (s) => {
      const chat = await runCliWithInput("chat", ["--incognito"], s.vars, "hello\n/rename x\n");
      assert.equal(chat.code, 0, chat.stderr);
      const oneShot = await runCli("chat", ["--incognito", "-p", "hi"], s.vars);
      assert.equal(oneShot.code, 0, oneShot.stderr);
      assert.deepEqual(snapshot(s.world.data), ["absent"]);
    });
  });
});

Deno.test("usage errors: -p with a positional prompt, an empty -p", async () => {
  await withModelWorld(async (s) => {
    const both = await runCli("chat", ["-p", "a", "b"], s.vars);
    assert.equal(both.code, 2);
    assert.match(
      both.stderr,
      /^error: Give the prompt either as an argument or with "-p", not both/,
    );
    const empty = await runCli("chat", ["-p", " "], s.vars);
    assert.equal(empty.code, 2);
  });
});
