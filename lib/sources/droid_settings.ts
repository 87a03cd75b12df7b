// Factory Droid's session settings: `<uuid>.settings.json` beside each session file, which Droid
// rewrites whole after every turn (model, autonomy, tags, and the session's token totals). Its
// messages carry no usage, so these totals are the only record of what a session used.
//
// A row adapter: the document is read whole, and stored again (compactly, as one row with the
// session's id and the time it was last written) when it changed since the last read. Each stored row is
// the session's one model call for `usage`, named by the session (`session:<id>`) and revising
// the one stored before, so the newest totals replace the older ones: one call per session.

import { agentRoots } from "../agents.ts";
import { basename } from "../path.ts";
import { sha256Hex } from "../sha256.ts";
import {
  type Derived,
  type DiscoverContext,
  makeDerived,
  type RowAdapter,
  type RowRead,
  SourceError,
  type SourceRef,
  type Usage,
} from "./adapter.ts";
import { obj, str, tokenCount } from "./_text.ts";
import { walkFiles } from "./_walk.ts";
import { fileSignature } from "./_file_signature.ts";
import {
  DROID_SETTINGS_FILE,
  droidSettingsRow,
  droidSettingsText,
  isDroidSettings,
} from "./droid_text.ts";

/** Nothing to remember between rows: each row says all it needs. */
type SettingsState = Record<string, never>;

const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();

/** Factory Droid's session settings, as capture reads them. */
export const droidSettings: RowAdapter<SettingsState> = {
  agent: "droid",
  mode: "rows",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the first version: a session's token totals, for `usage`.
  derivation: 1,
  claims: isDroidSettings,
  skipKeys: new Set(),
  roots: (ctx: DiscoverContext) => agentRoots("droid", ctx),

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of agentRoots("droid", ctx)) {
      // `<root>/<cwd slug>/<uuid>.settings.json` (not its `.bak` copy).
      for (
        const path of walkFiles(
          root,
          (n) => DROID_SETTINGS_FILE.test(n),
          ctx,
          1,
        )
      ) {
        yield { agent: "droid", locator: path, path, format: "rows" };
      }
    }
  },

  fingerprint(source: SourceRef): string {
    return fileSignature(source.path);
  },

  initialState(): SettingsState {
    return {};
  },

  readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
    // The reads are synchronous; the promise carries their result or their error.
    return new Promise((resolve) => resolve(readSettings(source, cursorKey)));
  },

  parseRow(raw: Uint8Array): Derived {
    return derive(raw);
  },

  textOf: droidSettingsText.textOf,
};

/**
 * The document as one row when it changed since the cursor (a hash of it), else none. A document
 * that does not parse is being written: a SourceError, so it is read again on the next run.
 */
function readSettings(source: SourceRef, cursorKey: string | null): RowRead {
  const bytes = Deno.readFileSync(source.path);
  const hash = sha256Hex(bytes).slice(0, 16);
  if (hash === cursorKey) return { rows: [], cursorKey: hash, more: false };
  let settings: Record<string, unknown> | null;
  try {
    settings = obj(JSON.parse(utf8.decode(bytes)));
  } catch (err) {
    throw new SourceError(
      `Droid settings "${source.path}" were being written when read (not whole JSON: ${
        (err as Error).message
      }): they are read again on the next run`,
    );
  }
  const row = {
    droid: "settings",
    sessionId: basename(source.path, ".settings.json"),
    time: Deno.statSync(source.path).mtime?.getTime() ?? null,
    settings,
  };
  return { rows: [encoder.encode(`${JSON.stringify(row)}\n`)], cursorKey: hash, more: false };
}

/** A settings row: the session's meta record, with its token totals as its one call. */
function derive(raw: Uint8Array): Derived {
  const row = droidSettingsRow(raw);
  if (!row) {
    return makeDerived("meta", null, null, {
      drift: { category: "unparsable", detail: "settings row that is not JSON" },
    });
  }
  const conversation = { key: `droid:${row.sessionId}`, nativeId: row.sessionId };
  const settings = obj(row.settings);
  if (!settings) {
    return makeDerived("meta", null, conversation, {
      ts: row.time,
      drift: { category: "missing_fields", detail: "settings that are not an object" },
    });
  }
  return makeDerived("meta", null, conversation, {
    ts: row.time,
    key: "settings",
    supersedes: true,
    usage: sessionUsage(row.sessionId, settings),
  });
}

/**
 * What a session used, as its settings total it (`tokenUsage`: this session alone; its
 * `inclusiveTokenUsage` adds its child sessions, which have settings of their own), as one call
 * that a newer total revises. `inputTokens` leaves out the cache's reads (sessions with a warm
 * cache show fewer input tokens than cache reads). `thinkingTokens` are not added to the output:
 * nothing seen tells whether `outputTokens` holds them. `factoryCredits` are Factory's own unit,
 * not dollars: the tokens are priced.
 */
function sessionUsage(sessionId: string, settings: Record<string, unknown>): Usage | null {
  const tokens = obj(settings.tokenUsage);
  if (!tokens) return null;
  const usage: Usage = {
    call: `session:${sessionId}`,
    revised: true,
    model: str(settings.model),
    input: tokenCount(tokens.inputTokens),
    output: tokenCount(tokens.outputTokens),
    cacheWrite: tokenCount(tokens.cacheCreationTokens),
    cacheRead: tokenCount(tokens.cacheReadTokens),
    cost: null,
  };
  return usage.input + usage.output + usage.cacheWrite + usage.cacheRead > 0 ? usage : null;
}
