// The adapters logbook captures with, in the order their sources are read.

import type { Adapter } from "./adapter.ts";
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import { opencode } from "./opencode.ts";
import { logbookSessions } from "./logbook.ts";
import { claudeToolResults } from "./claude_tool_results.ts";
import { claudeHistory, codexHistory } from "./prompt_history.ts";

/**
 * Every adapter, in capture order: transcripts before what refers to them (persisted tool
 * output, prompt history), so a session's own records come first. An agent's adapters other
 * than its transcripts' `claims` their sources (`adapterOf`).
 */
export const ADAPTERS: readonly Adapter[] = [
  claudeCode as Adapter,
  codex as Adapter,
  opencode as Adapter,
  logbookSessions as Adapter,
  claudeToolResults as Adapter,
  claudeHistory as Adapter,
  codexHistory as Adapter,
];
