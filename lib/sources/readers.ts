// What reading a stored record takes of each adapter, in ADAPTERS' order: the sources it owns
// and the text of their bytes, without the capture code. `search` and `show` derive snippets and
// pages with these and so load a fifth of the adapters' code (tests/lib/sources/readers_test.ts
// holds every reader to its adapter).

import type { TextReader } from "./adapter.ts";
import { claudeToolResultText, claudeTranscriptText } from "./claude_text.ts";
import { codexTranscriptText } from "./codex_text.ts";
import { opencodeText } from "./opencode_text.ts";
import { logbookSessions } from "./logbook.ts";
import { claudeHistory, codexHistory } from "./prompt_history.ts";

/** Every adapter's reader, in the order of `ADAPTERS` (lib/sources/mod.ts). */
export const READERS: readonly TextReader[] = [
  claudeTranscriptText,
  codexTranscriptText,
  opencodeText,
  logbookSessions,
  claudeToolResultText,
  claudeHistory,
  codexHistory,
];
