// The adapters logbook captures with, in the order their sources are read.

import type { Adapter } from "./adapter.ts";
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import { opencode } from "./opencode.ts";
import { logbookSessions } from "./logbook.ts";

/** Every adapter, in capture order. */
export const ADAPTERS: readonly Adapter[] = [
  claudeCode as Adapter,
  codex as Adapter,
  opencode as Adapter,
  logbookSessions as Adapter,
];
