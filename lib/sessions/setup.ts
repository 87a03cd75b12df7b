// What a command that opens sessions (chat, resume, fork, compact) builds first: the gate, the
// session store, the prompt history and the model client of its context.

import { type Context, gateFor } from "../context.ts";
import { join } from "../path.ts";
import { projectOf } from "../paths.ts";
import { createModelClient, type ModelClient, modelSettings } from "./model.ts";
import { Persistence } from "./persistence.ts";
import { PromptHistory } from "./prompt_history.ts";
import { SessionStore } from "./records.ts";
import type { SessionOptions } from "./turn.ts";

/** Everything a command needs to open sessions in a context. */
export interface ChatSetup {
  persistence: Persistence;
  /** Session options without the directory, which each session sets. */
  options: Omit<SessionOptions, "cwd">;
}

/**
 * The gate, the session store, the prompt history and the model client of a command run. Throws
 * ModelError (reason `config`) when no model is configured, before anything is written.
 */
export function chatSetup(
  ctx: Context,
  options: { incognito: boolean; model?: ModelClient },
): ChatSetup {
  const model = options.model ??
    createModelClient(modelSettings(ctx.config), {
      configFile: join(ctx.configDir, "config.json"),
    });
  const gate = gateFor(ctx);
  const sessions = new SessionStore(ctx.paths, { incognito: options.incognito });
  const history = new PromptHistory({
    path: ctx.paths.promptHistory,
    root: ctx.paths.root,
    project: projectOf(ctx.cwd).root,
    redact: (text) => gate.redactText(text),
    incognito: options.incognito,
    now: ctx.now,
  });
  const persistence = new Persistence(sessions, history);
  return {
    persistence,
    options: {
      persistence,
      gate,
      model,
      now: ctx.now,
      paths: ctx.paths,
      ...(ctx.config.tokenBudget !== undefined ? { tokenBudget: ctx.config.tokenBudget } : {}),
    },
  };
}
