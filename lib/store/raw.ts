// How raw chunks are kept: the exact bytes, zstd-compressed when a chunk is large enough for it
// to pay (flag FLAG_ZSTD); reading always gives back the bytes exactly as captured.
//
// Reading decodes with logbook's own zstd decoder (zstd_decode.ts) until native zstd would pay:
// node:zlib costs a command 30 to 40 ms of Node compatibility set-up, more than decoding 256 KiB
// of compressed chunks takes a cold process, and more than `search` or `show` spend on a page
// (a search whose hit is in a compressed chunk answers ~35 ms sooner: docs/design.md). A page
// that needs more than that share (`decodedRows`) loads native zstd at once. Capture (which has
// node:zlib loaded to compress) and bulk readers (rebuild, export) decode natively.

import { nodeZlib, nodeZlibLoaded } from "../node_builtins.ts";
import { FLAG_ZSTD } from "./schema.ts";
import { zstdDecompress } from "./zstd_decode.ts";

/** Chunks from this size up are compressed (smaller ones gain little for the time it takes). */
export const COMPRESS_FROM = 8192;

type Zstd = {
  zstdCompressSync?: (data: Uint8Array, options?: object) => Uint8Array;
  zstdDecompressSync?: (data: Uint8Array) => Uint8Array;
  constants: Record<string, number>;
};
/** node:zlib's zstd, loaded on the first chunk that needs it (most reads never do). */
function zstdOf(): Zstd {
  return nodeZlib() as unknown as Zstd;
}

/**
 * The bytes to store for a chunk and the flag to add: compressed at level 1 when the chunk is
 * large and compression saves at least an eighth, else the chunk as it is.
 */
export function encodeRaw(bytes: Uint8Array): { stored: Uint8Array; flag: number } {
  if (bytes.length < COMPRESS_FROM) return { stored: bytes, flag: 0 };
  const zstd = zstdOf();
  const level = zstd.constants.ZSTD_c_compressionLevel;
  if (!zstd.zstdCompressSync || level === undefined) return { stored: bytes, flag: 0 };
  const packed = zstd.zstdCompressSync(bytes, { params: { [level]: 1 } });
  return packed.length <= bytes.length - (bytes.length >> 3)
    ? {
      stored: new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength),
      flag: FLAG_ZSTD,
    }
    : { stored: bytes, flag: 0 };
}

/** Compressed bytes a process decodes in JavaScript before it loads native zstd instead. */
export const DECODE_IN_JS_UP_TO = 256 * 1024;
let decodedInJs = 0;

/**
 * The captured bytes of a stored chunk. A compressed one that gives other than its captured
 * `length` (where the row holds it) is damage, said as such: native zstd reads a truncated frame
 * as what it could decode of it, often nothing, without a word.
 */
export function decodeRaw(
  row: { raw: Uint8Array; flags: number; length?: number | null },
): Uint8Array {
  if (!(row.flags & FLAG_ZSTD)) return row.raw;
  let bytes: Uint8Array;
  if (!nodeZlibLoaded() && decodedInJs < DECODE_IN_JS_UP_TO) {
    decodedInJs += row.raw.length;
    bytes = decodeOrNative(row.raw, zstdDecompress);
  } else {
    bytes = decodeNatively(row.raw);
  }
  if (typeof row.length === "number" && bytes.length !== row.length) {
    throw new Error(
      `A stored chunk is damaged: it decodes to ${bytes.length} of its ${row.length} bytes`,
    );
  }
  return bytes;
}

/**
 * `frame` as `decode` reads it, or as native zstd does where `decode` fails on it (refuses it, or
 * fails in a way of its own): native zstd has the last word on a frame.
 */
export function decodeOrNative(
  frame: Uint8Array,
  decode: (frame: Uint8Array) => Uint8Array,
): Uint8Array {
  try {
    return decode(frame);
  } catch {
    return decodeNatively(frame);
  }
}

function decodeNatively(frame: Uint8Array): Uint8Array {
  const zstd = zstdOf();
  if (!zstd.zstdDecompressSync) {
    throw new Error(
      "This history store holds zstd-compressed records, and this runtime has no zstd",
    );
  }
  const bytes = zstd.zstdDecompressSync(frame);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The compressed bytes this process has decoded in JavaScript so far. */
export function decodedInJavaScript(): number {
  return decodedInJs;
}

/**
 * `rows` with their raw bytes decoded (`decodedRow`), all natively when together they would pass
 * the share decoded in JavaScript: a page that will load native zstd anyway (a long
 * conversation's) does not pay for the JavaScript decoder first.
 */
export function decodedRows<T extends { raw: Uint8Array; flags: number }>(rows: T[]): T[] {
  let packed = 0;
  for (const row of rows) if (row.flags & FLAG_ZSTD) packed += row.raw.length;
  if (decodedInJs + packed > DECODE_IN_JS_UP_TO) zstdOf();
  return rows.map(decodedRow);
}

/** A row with its raw bytes decoded (and the compression flag cleared). */
export function decodedRow<T extends { raw: Uint8Array; flags: number }>(row: T): T {
  if (!(row.flags & FLAG_ZSTD)) return row;
  return { ...row, raw: decodeRaw(row), flags: row.flags & ~FLAG_ZSTD };
}
