// logbook's own sessions as a source of the history store (`logbook:<id>`), so they are searched
// with every other agent's conversations. Each session record is read as rows: its messages in
// order (the archive of compacted ones first), and the session itself when its title changes.
// A fork's copied messages are rows marked `copy`: shown in the fork, indexed in the original.

import {
  type Derived,
  type DiscoverContext,
  makeDerived,
  type RowAdapter,
  type RowRead,
  type SourceRef,
} from "./adapter.ts";
import { dataDir, dataPaths } from "../paths.ts";
import { obj, str, titleFrom, toEpochMs } from "./_text.ts";
import { walkFiles } from "./_walk.ts";

/** Where a session record was read up to: messages stored, and the session fields last stored. */
interface Cursor {
  messages: number;
  session: string | null;
}

const RECORD_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json$/i;
const encoder = new TextEncoder();

/** logbook's own session records. */
export const logbookSessions: RowAdapter<Record<string, never>> = {
  agent: "logbook",
  mode: "rows",
  // What it derives, versioned (`LineAdapter.derivation`); one line per raise, saying why:
  // 1: the version of the build that began recording versions.
  derivation: 1,
  skipKeys: new Set(),

  roots(ctx: DiscoverContext): string[] {
    try {
      return [dataPaths(dataDir(ctx.env), ctx.env).sessions];
    } catch {
      return []; // no home and no LOGBOOK_DATA_DIR: no sessions either
    }
  },

  async *discover(ctx: DiscoverContext): AsyncIterable<SourceRef> {
    for (const root of this.roots(ctx)) {
      for (const path of walkFiles(root, (name) => RECORD_FILE.test(name), ctx, 1)) {
        yield { agent: "logbook", locator: path, path, format: "rows" };
      }
    }
  },

  fingerprint(source: SourceRef): string {
    try {
      const stat = Deno.statSync(source.path);
      return `${stat.size}:${stat.mtime?.getTime() ?? 0}:${stat.ino ?? 0}`;
    } catch {
      return "gone";
    }
  },

  initialState(): Record<string, never> {
    return {};
  },

  readRows(source: SourceRef, cursorKey: string | null): Promise<RowRead> {
    const cursor: Cursor = cursorKey ? JSON.parse(cursorKey) : { messages: 0, session: null };
    let record: Record<string, unknown> | null;
    try {
      record = obj(JSON.parse(Deno.readTextFileSync(source.path)));
    } catch {
      // A record being replaced, or a corrupt one (status names it): nothing to read now.
      return Promise.resolve({ rows: [], cursorKey: JSON.stringify(cursor), more: false });
    }
    const id = str(record?.id);
    if (!record || !id) {
      return Promise.resolve({ rows: [], cursorKey: JSON.stringify(cursor), more: false });
    }
    const rows: Uint8Array[] = [];
    const session = JSON.stringify({
      type: "session",
      id,
      title: str(record.title),
      cwd: str(record.cwd),
      project: str(record.project),
      branch: str(record.branch),
      kind: str(record.kind),
      forkedFrom: str(record.forkedFrom),
      updatedAt: str(record.updatedAt),
    });
    const fields = session.replace(/,"updatedAt":[^}]*/, "");
    if (fields !== cursor.session) {
      rows.push(encoder.encode(session + "\n"));
      cursor.session = fields;
    }
    const copied = typeof record.forkedMessages === "number" && record.forkedFrom
      ? record.forkedMessages
      : 0;
    // Every message ever held: a compaction moves the oldest to the archive, keeping the order.
    const all = [
      ...(Array.isArray(record.archive) ? record.archive : []),
      ...(Array.isArray(record.messages) ? record.messages : []),
    ];
    for (let index = cursor.messages; index < all.length; index++) {
      const message = obj(all[index]);
      rows.push(encoder.encode(
        JSON.stringify({
          type: "message",
          session: id,
          index,
          role: str(message?.role),
          at: str(message?.at),
          turn: typeof message?.turn === "number" ? message.turn : null,
          content: typeof message?.content === "string" ? message.content : "",
          ...(index < copied ? { copy: true } : {}),
        }) + "\n",
      ));
    }
    cursor.messages = Math.max(cursor.messages, all.length);
    return Promise.resolve({ rows, cursorKey: JSON.stringify(cursor), more: false });
  },

  parseRow(raw: Uint8Array): Derived {
    const row = obj(JSON.parse(new TextDecoder().decode(raw)));
    const type = str(row?.type);
    if (!row || (type !== "session" && type !== "message")) {
      return makeDerived("meta", null, null, {
        drift: { category: "unknown_type", detail: type ?? "row without a type" },
      });
    }
    if (type === "session") {
      const id = str(row.id)!;
      const forkedFrom = str(row.forkedFrom);
      const title = str(row.title);
      return makeDerived("meta", null, {
        key: `logbook:${id}`,
        nativeId: id,
        cwd: str(row.cwd),
        branch: str(row.branch),
        parentKey: forkedFrom,
      }, {
        ts: toEpochMs(row.updatedAt),
        title: title ? { text: titleFrom(title), rank: 3 } : null,
      });
    }
    const id = str(row.session)!;
    const role = str(row.role);
    // A fork's copy of a message the original holds: kept and shown, not indexed again.
    const copy = row.copy === true;
    const text = typeof row.content === "string" && !copy ? row.content : "";
    const known = role === "user" || role === "assistant" || role === "system" ? role : null;
    return makeDerived("message", known, { key: `logbook:${id}`, nativeId: id }, {
      ts: toEpochMs(row.at),
      messageId: `${id}:${row.index}`,
      text,
      newMessage: true,
      title: role === "user" && text.trim() ? { text: titleFrom(text), rank: 1 } : null,
      ...(copy ? { copied: true } : {}),
    });
  },

  textOf(bytes: Uint8Array): string {
    try {
      const row = obj(JSON.parse(new TextDecoder().decode(bytes)));
      return row?.type === "message" && typeof row.content === "string" ? row.content : "";
    } catch {
      return "";
    }
  },
};
