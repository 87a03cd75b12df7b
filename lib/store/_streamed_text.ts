// The text of a row of a streamed line (one too long to parse whole, `lib/capture/giant_lines.ts`),
// read back from the line's rows as capture indexed it: the line's text is in pieces, each indexed
// under the row it starts at, and a row no piece starts at has none.

import type { TextReader } from "../sources/adapter.ts";
import { REDACTION_OVERLAP, type Redactor } from "../gate/secrets.ts";
import { JsonTextScanner } from "../capture/json_stream.ts";
import { startsPiece } from "../capture/pieces.ts";
import { FLAG_INDEXED } from "./schema.ts";

/** A row of a streamed line, its bytes decoded. */
export interface LineRow {
  id: number;
  raw: Uint8Array;
  flags: number;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * The text of row `target` of a streamed line whose rows are `rows` (in order, from the line's
 * first): for a row flagged indexed, the piece from it to the next row so flagged, redacted with
 * the text around it in view as capture redacted it; for another, nothing. A line none of whose
 * rows is indexed (a copy kept out of the index) has at its first row the piece capture would
 * have indexed there, cut at `pieceSize`. Rows are read only as far as needed.
 */
export function streamedText(
  rows: Iterable<LineRow>,
  target: { id: number; seq: number; flags: number },
  reader: TextReader,
  redact: Redactor,
  pieceSize: number,
): string {
  const indexed = (target.flags & FLAG_INDEXED) !== 0;
  if (!indexed && target.seq > 0) return "";
  const scanner = new JsonTextScanner(reader.skipKeys ?? NO_KEYS, reader.textPath);
  let before = "";
  let piece: string | null = null;
  let after: string | null = null;
  for (const row of rows) {
    scanner.write(row.raw);
    const text = scanner.takeText();
    const starts = (row.flags & FLAG_INDEXED) !== 0;
    // The first row of a line whose pieces are indexed at other rows has none.
    if (!indexed && starts) return "";
    if (piece === null) {
      if (row.id === target.id) piece = text;
      else before = (before + text).slice(-REDACTION_OVERLAP);
    } else if (after !== null) after += text;
    else if (indexed ? starts : startsPiece(piece.length, text, pieceSize)) after = text;
    else piece += text;
    if (after !== null && after.length >= REDACTION_OVERLAP) break;
  }
  if (piece === null) return "";
  return redact.between(before, piece, (after ?? "").slice(0, REDACTION_OVERLAP)).trim();
}
