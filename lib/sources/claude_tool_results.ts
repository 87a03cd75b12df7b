// Claude Code's persisted tool output: when a tool result is too large for the transcript, Claude
// Code keeps a 2 KB `<persisted-output>` preview in the `tool_result` and writes the whole output
// to `projects/<encoded cwd>/<sessionId>/tool-results/<id>.txt` (`.json` for structured output).
// Each such file is a source of its own: its bytes are one record, kept exactly, whose text is
// indexed as a tool result of the session, so the full output is found and outlives the folder.

import { basename, dirname, join } from "node:path";
import {
  type Derived,
  type DiscoverContext,
  makeDerived,
  type RowAdapter,
  type RowRead,
  type SourceRef,
} from "./adapter.ts";
import { claudeCode } from "./claude_code.ts";
import { stringLeaves } from "./_text.ts";
import { walkFiles } from "./_walk.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A file directly inside a `tool-results` folder (either separator: locators of other systems). */
const SIDECAR = /[\\/]tool-results[\\/][^\\/]+$/;
/** Output files; `hook-*` files in the same folder are hook output, not a tool's. */
const OUTPUT_FILE = /^(?!hook-).+\.(txt|json)$/;
const SKIP_KEYS: ReadonlySet<string> = new Set(["data", "signature", "type"]);

/** Nothing is carried between sources: a file is one record. */
type NoState = Record<string, never>;

/** Claude Code's `tool-results/` files, read whole, one record each. */
export const claudeToolResults: RowAdapter<NoState> = {
  agent: "claude",
  mode: "rows",
  skipKeys: SKIP_KEYS,

  claims(locator: string): boolean {
    return SIDECAR.test(locator);
  },

  roots(ctx: DiscoverContext): string[] {
    return claudeCode.roots(ctx);
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      for (const project of subfolders(root, () => true, ctx.skipped)) {
        for (const session of subfolders(project, (name) => UUID.test(name), ctx.skipped)) {
          const folder = join(session, "tool-results");
          const accept = (name: string) => OUTPUT_FILE.test(name);
          for await (const path of walkFiles(folder, accept, ctx.skipped, 0)) {
            yield { agent: "claude", locator: path, path, format: "rows" };
          }
        }
      }
    }
  },

  fingerprint(source: SourceRef): string {
    try {
      const stat = Deno.lstatSync(source.path);
      return `${stat.size}:${stat.mtime?.getTime() ?? 0}:${stat.ino ?? 0}`;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "gone";
      throw err;
    }
  },

  initialState(): NoState {
    return {};
  },

  /**
   * The file's bytes as one row, unless they are the bytes read last time (`cursorKey` is their
   * length and digest): a file rewritten with other bytes becomes a newer record that supersedes
   * the older one in the index.
   */
  async readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
    const bytes = await Deno.readFile(source.path);
    const key = `${bytes.length}:${await digest(bytes)}`;
    if (key === cursorKey || bytes.length === 0) return { rows: [], cursorKey: key, more: false };
    return { rows: [bytes], cursorKey: key, more: false };
  },

  parseRow(raw: Uint8Array, _state: NoState, source: SourceRef): Derived {
    const sessionId = basename(dirname(dirname(source.path)));
    const id = basename(source.path).replace(/\.(txt|json)$/, "");
    return makeDerived("tool_result", null, { key: `claude:${sessionId}`, nativeId: sessionId }, {
      messageId: id,
      text: outputText(raw, source),
      key: "output",
      supersedes: true,
    });
  },

  textOf(bytes: Uint8Array, source: SourceRef): string {
    return outputText(bytes, source);
  },
};

/** The text of an output file: as written, or the strings of a structured (`.json`) one. */
function outputText(bytes: Uint8Array, source: SourceRef): string {
  const text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes);
  if (!source.path.endsWith(".json")) return text;
  try {
    return stringLeaves(JSON.parse(text), SKIP_KEYS).join("\n");
  } catch {
    return text;
  }
}

/** The folders directly in `dir` whose names pass `accept`; symlinks are counted, not followed. */
function subfolders(
  dir: string,
  accept: (name: string) => boolean,
  skipped: Map<string, number>,
): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    if (err instanceof Deno.errors.PermissionDenied) {
      skipped.set("unreadable folder", (skipped.get("unreadable folder") ?? 0) + 1);
      return [];
    }
    throw err;
  }
  return entries.filter((e) => e.isDirectory && !e.isSymlink && accept(e.name))
    .map((e) => e.name).sort().map((name) => join(dir, name));
}

/** A short digest of `bytes` (SHA-256, first 16 hex digits). */
async function digest(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash.subarray(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
