// The Kilo Code CLI adapter: Kilo is an OpenCode fork that keeps OpenCode's `session`, `message`
// and `part` tables in its own database (`kilo.db` in `$XDG_DATA_HOME/kilo`), read by the OpenCode
// adapter's code (docs/agents/kilo.md says what else is there and why it is not read).

import { createOpencodeAdapter, type OpencodeState } from "./opencode.ts";
import type { RowAdapter } from "./adapter.ts";
import { KILO_TEXT } from "./kilo_text.ts";

/**
 * `kilo.db`; `kilo-<channel>.db` for other release channels, or `opencode-<channel>.db`, which
 * Kilo keeps using for a channel when it finds one and no `kilo-<channel>.db`.
 */
const DATABASE_NAME = /^(?:kilo(?:-[^/\\]+)?|opencode-[^/\\]+)\.db$/;

/** Kilo's sessions, as capture reads them. */
export const kilo: RowAdapter<OpencodeState> = createOpencodeAdapter({
  flavor: {
    agent: "kilo",
    display: "Kilo",
    databaseName: DATABASE_NAME,
    text: KILO_TEXT,
    // A newer message store Kilo 7.7.7 creates and leaves empty: rows there are drift.
    watched: ["session_message"],
  },
});
