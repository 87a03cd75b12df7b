// The text of Factory Droid's session lines (`~/.factory/sessions/<cwd slug>/<uuid>.jsonl`):
// what capture indexes and what reading shows, apart from the capture code so that `search` and
// `show` load only this. A `message` record holds an Anthropic-style message (text, tool_use,
// tool_result and thinking blocks), so its text is read as Claude Code's is.

import type { SourceRef, TextReader } from "./adapter.ts";
import { CLAUDE_SKIP_KEYS, claudeTextPath, textOfRecord } from "./claude_text.ts";
import { obj, str } from "./_text.ts";

/** Field names whose string values are never indexed: payloads and signatures. */
export const DROID_SKIP_KEYS: ReadonlySet<string> = CLAUDE_SKIP_KEYS;

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** One line's record, or null for a line that is not a JSON object. */
export function droidRecord(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    return obj(JSON.parse(utf8.decode(bytes)));
  } catch {
    return null;
  }
}

/** The searchable text of a parsed record: a message's words, tools and results; nothing else. */
export function droidRecordText(record: Record<string, unknown>): string {
  return str(record.type) === "message" ? textOfRecord("user", record) : "";
}

/** The text of one session line's bytes ("" for a line that is not a message). */
export function droidLineText(bytes: Uint8Array, _source?: SourceRef): string {
  const record = droidRecord(bytes);
  return record ? droidRecordText(record) : "";
}

/** Factory Droid sessions, for reading. */
export const droidText: TextReader = {
  agent: "droid",
  textOf: droidLineText,
  skipKeys: DROID_SKIP_KEYS,
  textPath: claudeTextPath,
};

/** A session's settings file: `<uuid>.settings.json` (not its `.bak` copy). */
export const DROID_SETTINGS_FILE =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.settings\.json$/;

/** True for the locator of a session's settings (`droid_settings.ts` reads them). */
export function isDroidSettings(locator: string): boolean {
  return DROID_SETTINGS_FILE.test(locator.slice(locator.lastIndexOf("/") + 1));
}

/** One stored settings row: the session, when it was read, and the settings; null when broken. */
export function droidSettingsRow(
  bytes: Uint8Array,
): { sessionId: string; time: number | null; settings: unknown } | null {
  const row = droidRecord(bytes);
  const sessionId = str(row?.sessionId);
  if (!row || row.droid !== "settings" || !sessionId) return null;
  return {
    sessionId,
    time: typeof row.time === "number" ? row.time : null,
    settings: row.settings,
  };
}

/** Factory Droid's session settings, for reading: they hold no words. */
export const droidSettingsText: TextReader = {
  agent: "droid",
  claims: isDroidSettings,
  textOf: () => "",
};
