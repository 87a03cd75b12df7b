// Everything the dashboard shows passes the gate: every string of a response (titles, paths,
// messages), walked as the gate walks a value, and a record's raw bytes, which are re-encoded
// only when the gate changed something in them (a chunk of a long line with its neighbours'
// bytes in view). Search hits need none of this: `search()` returns them through the gate.

import { Buffer } from "node:buffer";
import { mapStrings, type Redactor } from "../lib/gate/secrets.ts";
import type { Page, RecordJson } from "../lib/store/conversations.ts";

/** A record as the dashboard serves it: `rawRedacted` is set when the gate changed its bytes. */
export type ShownRecord = RecordJson & { rawRedacted?: true };

/** A conversation page as the dashboard serves it. */
export type ShownPage = Omit<Page, "records"> & { records: ShownRecord[] };

/**
 * A deep copy of `value` with every string passed through `redact` (object keys are kept), by
 * the gate's own walk (`mapStrings`).
 */
export function redactDeep<T>(value: T, redact: (text: string) => string): T {
  return mapStrings(value, (text) => redact(text));
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();

/** The bytes on either side of a record's bytes in its line, for a secret cut by the cut. */
export interface Around {
  before: Uint8Array;
  after: Uint8Array;
}

/**
 * `bytes` through the gate. Valid UTF-8 is redacted as text; anything else as Latin-1, so every
 * byte that is not part of a secret stays exactly as it was. Unchanged bytes are returned as is.
 * With `around` (a chunk of a longer line), a secret running into the bytes before or after is
 * redacted in the part inside `bytes`.
 */
export function redactBytes(
  bytes: Uint8Array,
  redact: Redactor,
  around?: Around,
): { bytes: Uint8Array; changed: boolean } {
  let text: string;
  let latin1 = false;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = latin1Of(bytes);
    latin1 = true;
  }
  const decode = (b: Uint8Array) => (latin1 ? latin1Of(b) : lenientUtf8.decode(b));
  const out = around && (around.before.length > 0 || around.after.length > 0)
    ? redact.between(decode(around.before), text, decode(around.after))
    : redact(text);
  if (out === text) return { bytes, changed: false };
  return {
    bytes: latin1 ? new Uint8Array(Buffer.from(out, "latin1")) : encoder.encode(out),
    changed: true,
  };
}

function latin1Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/**
 * A page of `show --json` with its strings and each record's raw bytes passed through the gate;
 * `around` gives a record's neighbouring bytes when it is a chunk of a longer line.
 */
export function redactPage(
  page: Page,
  redact: Redactor,
  around?: (record: RecordJson) => Around,
): ShownPage {
  return {
    conversation: redactDeep(page.conversation, redact),
    next: page.next,
    records: page.records.map((record) => {
      const { raw, ...rest } = record;
      const shown = redactDeep(rest, redact);
      const passed = redactBytes(Buffer.from(raw, "base64"), redact, around?.(record));
      return passed.changed
        ? {
          ...record,
          ...shown,
          raw: Buffer.from(passed.bytes).toString("base64"),
          rawRedacted: true,
        }
        : { ...record, ...shown };
    }),
  };
}
