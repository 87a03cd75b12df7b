// What the show tests read a conversation back with (show_test.ts, show_export_test.ts).

import assert from "node:assert/strict";
import { main as show } from "../../commands/show.ts";
import { captureIo, type World } from "../_helpers.ts";

/** One record as `show --json` gives it (the fields the tests read). */
export interface ShownRecord {
  id: number;
  kind: string;
  role: string | null;
  text: string;
}

/** Every record of a conversation, through `show --json` page by page (`limit` to a page). */
export async function allRecords(world: World, id: string, limit?: number): Promise<ShownRecord[]> {
  const records: ShownRecord[] = [];
  let after: number | null = null;
  do {
    const io = captureIo();
    const args: string[] = [
      id,
      "--json",
      ...(limit === undefined ? [] : ["--limit", String(limit)]),
      ...(after === null ? [] : ["--after", String(after)]),
    ];
    assert.equal(await show(args, io, world.env), 0, io.stderr());
    const page = JSON.parse(io.stdout());
    records.push(...page.records);
    after = page.next;
  } while (after !== null);
  return records;
}

/** HTML text with its character references and the four escaped characters read back. */
export function unescapeHtml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_m, code) => String.fromCodePoint(Number(code)))
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
}

/**
 * Markdown as `show --format md` writes a message, its escapes read back: `&lt;`, `!\[` and the
 * broken runs of fences.
 */
export function unescapeMarkdown(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/!\\\[/g, "![").replace(/\\(`{3,}|~{3,})/g, "$1");
}
