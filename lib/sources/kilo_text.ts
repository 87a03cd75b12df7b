// Kilo's records read as OpenCode's (Kilo keeps its layout), but for the prompts `kilo run`
// stored wrapped in quotes, which read as typed: what `search` and `show` load for Kilo.

import type { TextReader } from "./adapter.ts";
import { opencodeReaderFor, type OpencodeTextOptions } from "./opencode_text.ts";

/** How Kilo's records read: `kilo run "fix the tests"` stored `"fix the tests"`. */
export const KILO_TEXT: OpencodeTextOptions = { unquoteRunPrompts: true };

/** Kilo's sessions, for reading. */
export const kiloText: TextReader = opencodeReaderFor("kilo", KILO_TEXT);
