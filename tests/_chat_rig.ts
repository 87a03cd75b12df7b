// A session rig for the chat tests: a fresh temp dir, a session store and prompt history under a
// data dir in it, a project directory, and a model client talking to a loopback OpenAI server.

import { join } from "node:path";
import { envFrom } from "../lib/env.ts";
import { createGate, type Gate } from "../lib/gate/gate.ts";
import { dataPaths } from "../lib/paths.ts";
import { createModelClient } from "../lib/sessions/model.ts";
import { Persistence } from "../lib/sessions/persistence.ts";
import { PromptHistory } from "../lib/sessions/prompt_history.ts";
import { SessionStore } from "../lib/sessions/records.ts";
import type { SessionOptions } from "../lib/sessions/turn.ts";
import { removeDir, tempDir } from "./_helpers.ts";
import { type OpenAiServer, startOpenAiServer } from "./_openai_server.ts";

/** What a chat test gets: its directories, the server, and the session's options. */
export interface Rig {
  dir: string;
  root: string;
  cwd: string;
  server: OpenAiServer;
  store: SessionStore;
  persistence: Persistence;
  history: PromptHistory;
  options: SessionOptions;
}

/** Runs `fn` with a fresh rig, closing the server and removing the temp dir afterwards. */
export async function withRig(
  fn: (rig: Rig) => Promise<void>,
  setup: {
    gate?: Gate;
    incognito?: boolean;
    root?: (dir: string) => string;
    server?: Parameters<typeof startOpenAiServer>[0];
  } = {},
): Promise<void> {
  const dir = await tempDir();
  const server = startOpenAiServer(setup.server ?? {});
  try {
    const root = setup.root ? setup.root(dir) : join(dir, "data");
    const cwd = join(dir, "project");
    Deno.mkdirSync(cwd);
    const paths = dataPaths(root, envFrom({}));
    const store = new SessionStore(paths, { incognito: setup.incognito ?? false });
    const gate = setup.gate ?? createGate();
    const history = new PromptHistory({
      path: paths.promptHistory,
      root,
      project: cwd,
      redact: (t) => gate.redactText(t),
      incognito: setup.incognito ?? false,
    });
    const persistence = new Persistence(store, history);
    const model = createModelClient({ baseUrl: server.baseUrl, model: "asked-model" }, {
      maxRetries: 0,
    });
    const options: SessionOptions = { persistence, gate, model, cwd, branch: "main" };
    await fn({ dir, root, cwd, server, store, persistence, history, options });
  } finally {
    await server.close();
    await removeDir(dir);
  }
}
