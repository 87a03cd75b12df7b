// How the conformance suite drives qwen (lib/agents.ts pins its version).

import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { DELEGATE, PROMPTS, START } from "../_script.ts";
import { type Rig, runAgent } from "../_rig.ts";
import { capture, show } from "../_checks.ts";
import { logbook, parseCommandLine } from "../_rig.ts";
import {
  checkCapture,
  contains,
  files,
  ok,
  type ReportLine,
  resumeCommand,
  stepOf,
} from "../_harness.ts";

/**
 * A rewind, which Qwen Code's terminal UI offers in a picker that does not open under tmux: the
 * same over ACP (`qwen --acp`, its `rewindSession` method), a chat of its own.
 */
const REWIND = {
  first: { id: "mossgarnet", steps: [], answer: "First of three: ochrelily." },
  rewound: { id: "pebblequire", steps: [], answer: "Rewound away: dunefinch." },
  after: { id: "tallowmere", steps: [], answer: "After the rewind: cinderwisp." },
};

/** What the test checks, for its name. */
export const title = (version: string): string =>
  `Qwen Code ${version}: a chat, its resume and fork by the commands logbook gives, a subagent and a rewind are captured exactly`;

export async function drive(t: Deno.TestContext, rig: Rig, line: ReportLine): Promise<void> {
  const step = stepOf(t);
  const projects = join(rig.home, ".qwen", "projects");
  // Qwen Code offers no shell tool unless an approval mode allows one: the model reads the
  // notes with its file tool instead.
  const plans = rig.server.script.plans;
  const start = plans.findIndex((plan) => plan.id === START.id);
  plans[start] = { ...START, steps: [{ kind: "read", path: join(rig.project, "notes.txt") }] };
  let session = "";
  const chat = () => files(projects, (n) => n === `${session}.jsonl`)[0]!;
  const chats = () => files(projects, (n) => n.endsWith(".jsonl") && !n.startsWith("agent-"));
  const subagents = () => files(projects, (n) => n.startsWith("agent-") && n.endsWith(".jsonl"));
  await step("qwen <prompt> starts a chat that runs a tool", async () => {
    ok(await runAgent(rig, ["--auth-type", "openai", PROMPTS.start]), "qwen");
    const [path] = chats();
    assert.ok(path, "a chat was recorded");
    session = basename(path, ".jsonl");
    assert.equal(basename(dirname(path)), "chats");
    assert.ok(contains(chat(), "copperwhistle"), "the tool's output is in the chat");
  });
  // The argv `logbook resume <id> --print` gives, the prompt after it (a one-shot run).
  let resume: string[] = [];
  await step("the command resume --print gives continues the same chat", async () => {
    await capture(rig);
    const command = await resumeCommand(rig, `qwen:${session}`);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    resume = command.argv.slice(1);
    const before = Deno.statSync(chat()).size;
    ok(await runAgent(rig, [...resume, PROMPTS.resume]), `qwen ${resume.join(" ")}`);
    assert.ok(Deno.statSync(chat()).size > before, "the chat grew");
    assert.equal(chats().length, 1, "no other chat");
    assert.ok(contains(chat(), "plumquartz"));
  });
  await step("the agent tool runs a subagent with a transcript of its own", async () => {
    ok(await runAgent(rig, [...resume, PROMPTS.delegate]), "qwen (subagent)");
    assert.equal(subagents().length, 1, "one subagent transcript");
    assert.ok(contains(subagents()[0]!, "tessellark"), "the subagent answered");
    assert.ok(contains(chat(), DELEGATE.answer), "the parent answered after it");
  });
  let fork = "";
  await step("the command fork --print gives copies the chat into a new one", async () => {
    await capture(rig);
    const printed = await logbook(rig, "fork", [`qwen:${session}`, "--print"], rig.home);
    ok(printed, "fork --print");
    const command = parseCommandLine(printed.stdout.trim(), rig.home);
    assert.equal(command.cwd, rig.project);
    assert.equal(command.argv[0], rig.installed.pin.bin);
    ok(await runAgent(rig, [...command.argv.slice(1), PROMPTS.fork]), "qwen (fork)");
    const forks = chats().filter((f) => basename(f, ".jsonl") !== session);
    assert.equal(forks.length, 1, "one new chat");
    fork = basename(forks[0]!, ".jsonl");
    assert.ok(contains(forks[0]!, '"forkedFrom"'), "its copies name the original");
    assert.ok(contains(forks[0]!, "amberloch"), "the fork's own turn");
  });
  let rewound = "";
  await step("a rewind over ACP appends to the chat and keeps the rewound turn", async () => {
    rig.server.script.plans.push(REWIND.first, REWIND.rewound, REWIND.after);
    const acp = acpClient(rig);
    try {
      await acp.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const made = await acp.request("session/new", { cwd: rig.project, mcpServers: [] });
      rewound = (made as { sessionId: string }).sessionId;
      const prompt = (text: string) =>
        acp.request("session/prompt", { sessionId: rewound, prompt: [{ type: "text", text }] });
      await prompt(`Begin here, ${REWIND.first.id}.`);
      await prompt(`Then this, ${REWIND.rewound.id}.`);
      const rewind = await acp.request("rewindSession", { sessionId: rewound, targetTurnIndex: 1 });
      assert.equal((rewind as { success?: boolean }).success, true, JSON.stringify(rewind));
      await prompt(`Instead this, ${REWIND.after.id}.`);
    } finally {
      await acp.close();
    }
    const path = chats().find((f) => basename(f, ".jsonl") === rewound)!;
    assert.ok(contains(path, '"subtype":"rewind"'), "a rewind record");
    assert.ok(contains(path, "dunefinch"), "the rewound turn is still in the file");
  });
  const child = () => {
    const agent = /^agent-(.+)\.jsonl$/.exec(basename(subagents()[0]!))![1];
    return `qwen:${session}/agent-${agent}`;
  };
  await checkCapture(t, rig, line, {
    main: `qwen:${session}`,
    sources: () => [...chats(), ...subagents()],
    conversations: () => [
      ...chats().map((f) => `qwen:${basename(f, ".jsonl")}`),
      ...subagents().map((f) => `qwen:${session}/${basename(f, ".jsonl")}`),
    ],
    words: (sub) => ({
      quasarbeet: `qwen:${session}`,
      lanternfig: `qwen:${session}`,
      marmalith: `qwen:${session}`,
      cobaltwren: `qwen:${session}`,
      plumquartz: `qwen:${session}`,
      zephyrkiln: `qwen:${session}`,
      orchidvault: `qwen:${session}`,
      copperwhistle: `qwen:${session}`,
      glimmerfane: sub,
      driftmallow: sub,
      tessellark: sub,
      velvetcrag: `qwen:${fork}`,
      amberloch: `qwen:${fork}`,
      ochrelily: `qwen:${rewound}`,
      dunefinch: `qwen:${rewound}`,
      cinderwisp: `qwen:${rewound}`,
    }),
    subagent: child,
    titles: (sub) => ({
      [`qwen:${session}`]: PROMPTS.start,
      // A subagent is titled from its `.meta.json`: its type and the task's description.
      [sub]: "general-purpose: Inspect the notes",
    }),
    // A fork names the chat it was copied from.
    parents: (sub) => ({
      [`qwen:${session}`]: null,
      [sub]: `qwen:${session}`,
      [`qwen:${fork}`]: `qwen:${session}`,
    }),
  });
  await step("after a rewind, show gives each turn once, in the order it was said", async () => {
    const shown = await show(rig, `qwen:${rewound}`);
    // `show --json` gives each record's text beside its raw bytes.
    const records = shown.records as unknown as { kind: string; text: string }[];
    const said = records.filter((r) => r.kind !== "meta" && r.text).map((r) => r.text);
    assert.deepEqual(said, [
      `Begin here, ${REWIND.first.id}.`,
      REWIND.first.answer,
      `Then this, ${REWIND.rewound.id}.`,
      REWIND.rewound.answer,
      `Instead this, ${REWIND.after.id}.`,
      REWIND.after.answer,
    ]);
  });
  await step("the fork's copies and a rewound turn are found once", async () => {
    const once = {
      quasarbeet: session,
      marmalith: session,
      orchidvault: session,
      dunefinch: rewound,
    };
    for (const [word, id] of Object.entries(once)) {
      const out = await logbook(rig, "search", [word, "--agent", "qwen", "--json"]);
      ok(out, `search ${word}`);
      const hits = out.stdout.trim().split("\n").map((l) => JSON.parse(l).conversation);
      assert.deepEqual(hits, [`qwen:${id}`], word);
    }
  });
}

/**
 * A client of `qwen --acp` (JSON-RPC, a message a line, over its stdin and stdout), for the
 * methods its terminal UI has no scriptable way to reach. It grants what the agent asks
 * permission for and refuses its other requests.
 */
function acpClient(rig: Rig) {
  const child = new Deno.Command(rig.installed.bin, {
    args: ["--acp"],
    cwd: rig.project,
    env: rig.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: Record<string, unknown>) =>
    writer.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"));
  const waiting = new Map<number, (result: unknown) => void>();
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const message = JSON.parse(line);
        if (message.method === "session/request_permission") {
          const options = message.params.options as { optionId: string; kind: string }[];
          const allow = options.find((o) => o.kind.startsWith("allow")) ?? options[0]!;
          await send({
            id: message.id,
            result: { outcome: { outcome: "selected", optionId: allow.optionId } },
          });
        } else if (message.method !== undefined && message.id !== undefined) {
          await send({ id: message.id, error: { code: -32601, message: "Not offered" } });
        } else if (message.id !== undefined) {
          waiting.get(message.id)?.(message.result ?? message.error);
          waiting.delete(message.id);
        }
      }
    }
  })();
  let next = 1;
  return {
    request(method: string, params: unknown): Promise<unknown> {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        void send({ id, method, params });
      });
    },
    async close(): Promise<void> {
      await writer.close();
      await child.status;
      await reading;
    },
  };
}
