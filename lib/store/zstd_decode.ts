// A zstd decoder (RFC 8878) in TypeScript, for reading stored chunks in a process that has not
// loaded node:zlib: loading it costs a command ~15 ms of Node set-up, more than decoding the
// chunks of a page takes here. Frames with a dictionary are refused (logbook never writes one);
// the content checksum is not verified (SQLite's pages hold the bytes, not a network).

/** A frame this decoder cannot read: damaged, truncated, or using a dictionary. */
export class ZstdFormatError extends Error {
  override name = "ZstdFormatError";
}

function fail(what: string): never {
  throw new ZstdFormatError(`Invalid zstd data: ${what}`);
}

const FRAME_MAGIC = 0xfd2fb528;
const MAX_BLOCK = 128 * 1024;

// ---- bit readers ----

/**
 * The bits of a backward bitstream `[start, end)`: up to its last byte's padding marker,
 * counted from the stream's start (bit 0 of byte `start`).
 */
function streamBits(data: Uint8Array, start: number, end: number): number {
  if (end <= start) fail("empty bitstream");
  const last = data[end - 1]!;
  if (last === 0) fail("bitstream without its end marker");
  return (end - 1 - start) * 8 + (31 - Math.clz32(last));
}

/**
 * The next `n` bits (n ≤ 24) of a backward stream starting at byte `start` with `left` bits
 * unread, the first read the highest; bits before the start read as zeros. The caller takes
 * `n` from `left`: the hot loops keep the count in a local rather than behind a method, which
 * a cold decode (run by the interpreter, before V8 optimizes it) pays for on every field.
 */
function peekBits(d: Uint8Array, start: number, left: number, n: number): number {
  const from = left - n;
  if (from < 0) return left > 0 ? peekBits(d, start, left, left) << -from : 0;
  const i = start + (from >> 3);
  const shift = from & 7;
  // Bytes past the data read as undefined, which bitwise operators take for 0, and bytes past
  // the stream only fill bits the mask drops. Three bytes hold every read but a long offset's:
  // the values stay small integers, which V8 does not allocate (a page's cold decode is GC-bound
  // otherwise).
  if (n + shift <= 24) {
    return ((d[i]! | d[i + 1]! << 8 | d[i + 2]! << 16) >> shift) & ((1 << n) - 1);
  }
  return ((d[i]! | d[i + 1]! << 8 | d[i + 2]! << 16 | d[i + 3]! << 24) >>> shift) & ((1 << n) - 1);
}

/** Reads a bitstream backwards, from its last byte's padding marker towards `start`. */
class BackwardBits {
  #data: Uint8Array;
  #start: number;
  /** Bits not yet read, counted from the stream's start (bit 0 of byte `start`). */
  #left: number;

  constructor(data: Uint8Array, start: number, end: number) {
    this.#data = data;
    this.#start = start;
    this.#left = streamBits(data, start, end);
  }

  /** The next `n` bits (n ≤ 24), the first read the highest; bits past the start read as zeros. */
  read(n: number): number {
    const value = peekBits(this.#data, this.#start, this.#left, n);
    this.#left -= n;
    return value;
  }

  /** Bits left to read; negative once more were read than the stream held. */
  get left(): number {
    return this.#left;
  }
}

// ---- FSE ----

interface FseTable {
  log: number;
  symbol: Uint8Array;
  bits: Uint8Array;
  base: Uint16Array;
}

/** Reads an FSE table description at `at`; returns the normalized counts and the bytes read. */
function readCounts(
  data: Uint8Array,
  at: number,
  end: number,
  maxLog: number,
  maxSymbol: number,
): { counts: Int16Array; log: number; size: number } {
  const offset = at;
  let bitPos = 0;
  // Counts are read forwards, low bits first; a read is at most 10 bits past a 7-bit shift.
  const bitsAt = (n: number): number => {
    if (offset + ((bitPos + n - 1) >> 3) >= end) fail("truncated FSE table description");
    const i = offset + (bitPos >> 3);
    return ((data[i]! | data[i + 1]! << 8 | data[i + 2]! << 16) >> (bitPos & 7)) & ((1 << n) - 1);
  };
  const log = bitsAt(4) + 5;
  bitPos += 4;
  if (log > maxLog) fail("FSE accuracy too high");
  const counts = new Int16Array(maxSymbol + 1);
  let remaining = (1 << log) + 1;
  let symbol = 0;
  while (remaining > 1) {
    if (symbol > maxSymbol) fail("too many FSE symbols");
    const bits = 32 - Math.clz32(remaining);
    const max = (1 << bits) - 1 - remaining;
    let value = bitsAt(bits - 1);
    if (value < max) {
      bitPos += bits - 1;
    } else {
      value = bitsAt(bits);
      if (value >= 1 << (bits - 1)) value -= max;
      bitPos += bits;
    }
    const count = value - 1;
    counts[symbol++] = count;
    remaining -= count < 0 ? 1 : count;
    if (count === 0) {
      for (;;) {
        const repeat = bitsAt(2);
        bitPos += 2;
        for (let i = 0; i < repeat; i++) {
          if (symbol > maxSymbol) fail("too many FSE symbols");
          counts[symbol++] = 0;
        }
        if (repeat !== 3) break;
      }
    }
  }
  if (remaining !== 1) fail("FSE counts do not add up");
  return { counts: counts.subarray(0, symbol), log, size: (bitPos + 7) >> 3 };
}

/** The decoding table of normalized counts (RFC 8878, 4.1.1). */
function buildFse(counts: Int16Array | readonly number[], log: number): FseTable {
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const bits = new Uint8Array(size);
  const base = new Uint16Array(size);
  const next = new Uint16Array(counts.length);
  let high = size - 1;
  for (let s = 0; s < counts.length; s++) {
    if (counts[s] === -1) {
      symbol[high--] = s;
      next[s] = 1;
    } else {
      next[s] = counts[s]!;
    }
  }
  const step = (size >> 1) + (size >> 3) + 3;
  const mask = size - 1;
  let position = 0;
  for (let s = 0; s < counts.length; s++) {
    for (let i = 0; i < counts[s]!; i++) {
      symbol[position] = s;
      do position = (position + step) & mask; while (position > high);
    }
  }
  if (position !== 0) fail("FSE table not spread whole");
  for (let i = 0; i < size; i++) {
    const s = symbol[i]!;
    const state = next[s]!;
    next[s] = state + 1;
    const n = log - (31 - Math.clz32(state));
    bits[i] = n;
    base[i] = (state << n) - size;
  }
  return { log, symbol, bits, base };
}

/** A table of one symbol (RLE mode). */
function rleFse(symbol: number): FseTable {
  return {
    log: 0,
    symbol: Uint8Array.of(symbol),
    bits: Uint8Array.of(0),
    base: Uint16Array.of(0),
  };
}

/** `n` copies of `value`, for the tables below. */
function times(n: number, value: number): number[] {
  return new Array<number>(n).fill(value);
}

/** The whole numbers from `from` to `to`, both included. */
function span(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The baselines of codes whose extra bits are `bits`, the first code's being `first`. */
function baselines(first: number, bits: readonly number[]): number[] {
  const out = [first];
  for (let i = 1; i < bits.length; i++) out.push(out[i - 1]! + 2 ** bits[i - 1]!);
  return out;
}

// Predefined distributions (RFC 8878, 3.1.1.3.2.2).
const LL_DEFAULT = buildFse(
  [4, 3, ...times(11, 2), 1, 1, 1, ...times(9, 2), 3, 2, ...times(5, 1), ...times(4, -1)],
  6,
);
const ML_DEFAULT = buildFse([1, 4, 3, ...times(6, 2), ...times(37, 1), ...times(7, -1)], 6);
const OF_DEFAULT = buildFse([...times(6, 1), 2, 2, 2, ...times(15, 1), ...times(5, -1)], 5);

// Literal and match length codes: extra bits, and the baseline each adds them to (3.1.1.3.2.1.1).
const LL_BITS = [...times(16, 0), 1, 1, 1, 1, 2, 2, 3, 3, 4, ...span(6, 16)];
const LL_BASE = baselines(0, LL_BITS);
const ML_BITS = [...times(32, 0), 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, ...span(7, 16)];
const ML_BASE = baselines(3, ML_BITS);

// ---- Huffman ----

interface HuffmanTable {
  maxBits: number;
  symbol: Uint8Array;
  bits: Uint8Array;
}

/** Reads a Huffman tree description at `at`; returns the table and the bytes read. */
function readHuffman(
  data: Uint8Array,
  at: number,
  end: number,
): { table: HuffmanTable; size: number } {
  if (at >= end) fail("truncated Huffman tree");
  const header = data[at]!;
  const weights = new Uint8Array(256);
  let count = 0;
  let size: number;
  if (header >= 128) {
    count = header - 127;
    size = 1 + ((count + 1) >> 1);
    if (at + size > end) fail("truncated Huffman weights");
    for (let i = 0; i < count; i++) {
      const byte = data[at + 1 + (i >> 1)]!;
      weights[i] = i & 1 ? byte & 15 : byte >> 4;
    }
  } else {
    size = 1 + header;
    if (at + size > end) fail("truncated Huffman weights");
    const { counts, log, size: described } = readCounts(data, at + 1, at + size, 6, 255);
    const fse = buildFse(counts, log);
    const bits = new BackwardBits(data, at + 1 + described, at + size);
    let one = bits.read(log);
    let two = bits.read(log);
    // Two states take turns; the stream ends when a state's update would read past its start.
    for (;;) {
      if (count >= 255) fail("too many Huffman weights");
      weights[count++] = fse.symbol[one]!;
      one = fse.base[one]! + bits.read(fse.bits[one]!);
      if (bits.left < 0) {
        weights[count++] = fse.symbol[two]!;
        break;
      }
      if (count >= 255) fail("too many Huffman weights");
      weights[count++] = fse.symbol[two]!;
      two = fse.base[two]! + bits.read(fse.bits[two]!);
      if (bits.left < 0) {
        weights[count++] = fse.symbol[one]!;
        break;
      }
    }
  }
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (weights[i]! > 11) fail("Huffman weight too large");
    if (weights[i]) total += 1 << (weights[i]! - 1);
  }
  if (total === 0) fail("Huffman tree without weights");
  const maxBits = 32 - Math.clz32(total);
  const rest = (1 << maxBits) - total;
  if (rest & (rest - 1)) fail("Huffman weights do not complete a tree");
  weights[count++] = 32 - Math.clz32(rest);
  if (maxBits > 11) fail("Huffman codes too long");
  const tableSize = 1 << maxBits;
  const symbol = new Uint8Array(tableSize);
  const bits = new Uint8Array(tableSize);
  const start = new Uint32Array(13);
  for (let i = 0; i < count; i++) if (weights[i]) start[weights[i]! + 1]! += 1 << (weights[i]! - 1);
  for (let w = 1; w <= 12; w++) start[w]! += start[w - 1]!;
  for (let s = 0; s < count; s++) {
    const w = weights[s]!;
    if (!w) continue;
    const length = 1 << (w - 1);
    const from = start[w]!;
    symbol.fill(s, from, from + length);
    bits.fill(maxBits + 1 - w, from, from + length);
    start[w] = from + length;
  }
  return { table: { maxBits, symbol, bits }, size };
}

/**
 * Decodes one Huffman stream `[start, end)` into `out[at, at + length)`. The hot loop of a page's
 * decode, so it reads its bits in place rather than through BackwardBits (same reading: each
 * code is the next `maxBits` bits from the stream's end, bits before its start read as zeros).
 */
function huffmanStream(
  table: HuffmanTable,
  data: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
  length: number,
): void {
  if (end <= start || data[end - 1] === 0) fail("Huffman stream without its end marker");
  const { maxBits, symbol, bits } = table;
  const mask = (1 << maxBits) - 1;
  let left = (end - 1 - start) * 8 + (31 - Math.clz32(data[end - 1]!));
  for (let i = 0; i < length; i++) {
    const from = left - maxBits;
    let code: number;
    if (from >= 0) {
      const b = start + (from >> 3);
      code = ((data[b]! | data[b + 1]! << 8 | data[b + 2]! << 16) >> (from & 7)) & mask;
    } else {
      const rest = left > 0 ? (data[start]! | data[start + 1]! << 8) & ((1 << left) - 1) : 0;
      code = (rest << -from) & mask;
    }
    out[at + i] = symbol[code]!;
    left -= bits[code]!;
  }
  if (left !== 0) fail("Huffman stream not read whole");
}

// ---- frames and blocks ----

interface BlockState {
  huffman: HuffmanTable | null;
  ll: FseTable | null;
  of: FseTable | null;
  ml: FseTable | null;
  rep: [number, number, number];
}

/** The bytes a zstd frame (or several, back to back) decompress to. */
export function zstdDecompress(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < data.length) {
    if (at + 4 > data.length) fail("truncated frame");
    const magic = (data[at]! | data[at + 1]! << 8 | data[at + 2]! << 16 | data[at + 3]! << 24) >>>
      0;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // A skippable frame: its 4-byte size, then that many bytes.
      if (at + 8 > data.length) fail("truncated skippable frame");
      const size = (data[at + 4]! | data[at + 5]! << 8 | data[at + 6]! << 16 |
        data[at + 7]! << 24) >>> 0;
      at += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) fail("not a zstd frame");
    const frame = decodeFrame(data, at + 4);
    parts.push(frame.bytes);
    at = frame.end;
  }
  if (at !== data.length) fail("truncated frame");
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

interface FrameHeader {
  /** The content size the frame declares, or -1 where it leaves it out. */
  contentSize: number;
  window: number;
  checksum: boolean;
  /** Where the frame's first block starts. */
  blocks: number;
}

/** The header of the frame whose descriptor is at `at` (after its magic number). */
function frameHeader(data: Uint8Array, at: number): FrameHeader {
  if (at >= data.length) fail("truncated frame header");
  const descriptor = data[at++]!;
  const fcsFlag = descriptor >> 6;
  const single = (descriptor >> 5) & 1;
  const checksum = (descriptor >> 2) & 1;
  const dictFlag = descriptor & 3;
  if (descriptor & 8) fail("reserved bit set");
  let window = 0;
  if (!single) {
    const w = data[at++]!;
    const log = 10 + (w >> 3);
    const base = 2 ** log;
    window = base + (base / 8) * (w & 7);
  }
  if (dictFlag) {
    const n = [0, 1, 2, 4][dictFlag]!;
    let id = 0;
    for (let i = 0; i < n; i++) id += data[at + i]! * 2 ** (8 * i);
    at += n;
    if (id !== 0) fail("frames with a dictionary are not supported");
  }
  const fcsBytes = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  let contentSize = -1;
  if (fcsBytes) {
    if (at + fcsBytes > data.length) fail("truncated frame header");
    contentSize = 0;
    for (let i = 0; i < fcsBytes; i++) contentSize += data[at + i]! * 2 ** (8 * i);
    if (fcsBytes === 2) contentSize += 256;
    at += fcsBytes;
  }
  return {
    contentSize,
    window: single ? contentSize : window,
    checksum: checksum === 1,
    blocks: at,
  };
}

function decodeFrame(data: Uint8Array, start: number): { bytes: Uint8Array; end: number } {
  const { contentSize, window, checksum, blocks } = frameHeader(data, start);
  let at = blocks;
  // A block of at least 4 bytes gives at most 128 KiB: a larger size is damage, not a frame.
  if (contentSize > (data.length - at) * (MAX_BLOCK / 4)) {
    fail("content size past what blocks hold");
  }
  let out = new Uint8Array(contentSize >= 0 ? contentSize : Math.min(window || MAX_BLOCK, 1 << 20));
  let size = 0;
  const state: BlockState = { huffman: null, ll: null, of: null, ml: null, rep: [1, 4, 8] };
  // Room in `out` for `more` bytes after the first `used`, which a larger buffer keeps.
  const room = (used: number, more: number): Uint8Array => {
    if (used + more <= out.length) return out;
    if (contentSize >= 0) fail("content larger than the frame says");
    const grown = new Uint8Array(Math.max(out.length * 2, used + more));
    grown.set(out.subarray(0, used));
    out = grown;
    return out;
  };
  for (;;) {
    if (at + 3 > data.length) fail("truncated block header");
    const header = data[at]! | data[at + 1]! << 8 | data[at + 2]! << 16;
    at += 3;
    const last = header & 1;
    const type = (header >> 1) & 3;
    const blockSize = header >> 3;
    if (type === 0) {
      if (at + blockSize > data.length) fail("truncated raw block");
      room(size, blockSize);
      out.set(data.subarray(at, at + blockSize), size);
      size += blockSize;
      at += blockSize;
    } else if (type === 1) {
      if (at >= data.length) fail("truncated RLE block");
      room(size, blockSize);
      out.fill(data[at]!, size, size + blockSize);
      size += blockSize;
      at += 1;
    } else if (type === 2) {
      if (blockSize > MAX_BLOCK || at + blockSize > data.length) fail("block size");
      size = decodeBlock(data, at, at + blockSize, out, size, state, room);
      at += blockSize;
    } else {
      fail("reserved block type");
    }
    if (last) break;
  }
  if (checksum) at += 4;
  if (at > data.length) fail("truncated checksum");
  if (contentSize >= 0 && size !== contentSize) fail("content smaller than the frame says");
  return { bytes: size === out.length ? out : out.slice(0, size), end: at };
}

/** Decodes one compressed block into `out` from `size`; returns the new size. */
function decodeBlock(
  data: Uint8Array,
  at: number,
  end: number,
  out: Uint8Array,
  size: number,
  state: BlockState,
  room: (used: number, more: number) => Uint8Array,
): number {
  const literals = readLiterals(data, at, end, state);
  const sequences = readSequencesHeader(data, literals.end, end, state);
  if (sequences.count === 0) {
    if (sequences.at !== end) fail("block longer than its sections");
    const buffer = room(size, literals.size);
    buffer.set(literals.bytes.subarray(literals.start, literals.start + literals.size), size);
    return size + literals.size;
  }
  return executeSequences(
    data,
    sequences.at,
    end,
    sequences.count,
    literals,
    out,
    size,
    state,
    room,
  );
}

/** A block's literals: `size` bytes of `bytes` from `start`; `end` is where their section ends. */
interface Literals {
  bytes: Uint8Array;
  start: number;
  size: number;
  end: number;
}

/** Reads the literals section of the block `[at, end)` (a Huffman tree read is kept in `state`). */
function readLiterals(data: Uint8Array, at: number, end: number, state: BlockState): Literals {
  if (at >= end) fail("empty compressed block");
  const litType = data[at]! & 3;
  return litType <= 1 ? plainLiterals(data, at, end) : huffmanLiterals(data, at, end, state);
}

/** Literals stored as they are (read in place) or as one byte repeated. */
function plainLiterals(data: Uint8Array, at: number, end: number): Literals {
  const h0 = data[at]!;
  const sizeFormat = (h0 >> 2) & 3;
  let litSize: number;
  let headerSize: number;
  if (sizeFormat === 0 || sizeFormat === 2) {
    litSize = h0 >> 3;
    headerSize = 1;
  } else if (sizeFormat === 1) {
    litSize = (h0 >> 4) + (data[at + 1]! << 4);
    headerSize = 2;
  } else {
    litSize = (h0 >> 4) + (data[at + 1]! << 4) + (data[at + 2]! << 12);
    headerSize = 3;
  }
  at += headerSize;
  if ((h0 & 3) === 0) {
    if (at + litSize > end) fail("truncated literals");
    return { bytes: data, start: at, size: litSize, end: at + litSize };
  }
  if (at >= end) fail("truncated literals");
  return { bytes: new Uint8Array(litSize).fill(data[at]!), start: 0, size: litSize, end: at + 1 };
}

/** Literals Huffman-coded in one stream or four, with their tree or the previous block's. */
function huffmanLiterals(data: Uint8Array, at: number, end: number, state: BlockState): Literals {
  const h0 = data[at]!;
  const sizeFormat = (h0 >> 2) & 3;
  let litSize: number;
  let headerSize: number;
  let compressed: number;
  let streams = 4;
  if (sizeFormat <= 1) {
    if (sizeFormat === 0) streams = 1;
    const v = h0 | data[at + 1]! << 8 | data[at + 2]! << 16;
    litSize = (v >> 4) & 0x3ff;
    compressed = (v >> 14) & 0x3ff;
    headerSize = 3;
  } else if (sizeFormat === 2) {
    const v = (h0 | data[at + 1]! << 8 | data[at + 2]! << 16 | data[at + 3]! << 24) >>> 0;
    litSize = (v >>> 4) & 0x3fff;
    compressed = (v >>> 18) & 0x3fff;
    headerSize = 4;
  } else {
    const v = (h0 | data[at + 1]! << 8 | data[at + 2]! << 16 | data[at + 3]! << 24) >>> 0;
    litSize = (v >>> 4) & 0x3ffff;
    compressed = ((v >>> 22) | (data[at + 4]! << 10)) & 0x3ffff;
    headerSize = 5;
  }
  at += headerSize;
  const litEnd = at + compressed;
  if (litEnd > end) fail("truncated literals");
  if ((h0 & 3) === 2) {
    const tree = readHuffman(data, at, litEnd);
    state.huffman = tree.table;
    at += tree.size;
  } else if (!state.huffman) {
    fail("treeless literals without a previous tree");
  }
  const literals = new Uint8Array(litSize);
  if (streams === 1) {
    huffmanStream(state.huffman!, data, at, litEnd, literals, 0, litSize);
  } else {
    if (at + 6 > litEnd) fail("truncated jump table");
    const s1 = data[at]! | data[at + 1]! << 8;
    const s2 = data[at + 2]! | data[at + 3]! << 8;
    const s3 = data[at + 4]! | data[at + 5]! << 8;
    const first = at + 6;
    const per = (litSize + 3) >> 2;
    const starts = [first, first + s1, first + s1 + s2, first + s1 + s2 + s3, litEnd];
    if (starts[3]! > litEnd) fail("jump table past the literals");
    for (let i = 0; i < 4; i++) {
      const length = i < 3 ? per : litSize - 3 * per;
      if (length < 0) fail("literal streams");
      huffmanStream(state.huffman!, data, starts[i]!, starts[i + 1]!, literals, i * per, length);
    }
  }
  return { bytes: literals, start: 0, size: litSize, end: litEnd };
}

/**
 * Reads the header of the sequences section at `at`: how many sequences, and their decoding
 * tables (kept in `state`); `at` is then where their bitstream starts.
 */
function readSequencesHeader(
  data: Uint8Array,
  at: number,
  end: number,
  state: BlockState,
): { count: number; at: number } {
  if (at >= end) fail("truncated sequences");
  let count = data[at++]!;
  if (count === 0) return { count, at };
  if (count >= 128) {
    if (count < 255) {
      count = ((count - 128) << 8) + data[at++]!;
    } else {
      count = data[at]! + (data[at + 1]! << 8) + 0x7f00;
      at += 2;
    }
  }
  const modes = data[at++]!;
  if (modes & 3) fail("reserved sequence mode bits");
  const table = (
    mode: number,
    fallback: FseTable,
    maxLog: number,
    maxSymbol: number,
    previous: FseTable | null,
  ): FseTable => {
    switch (mode) {
      case 0:
        return fallback;
      case 1:
        if (data[at]! > maxSymbol) fail("RLE symbol out of range");
        return rleFse(data[at++]!);
      case 2: {
        const { counts, log, size: read } = readCounts(data, at, end, maxLog, maxSymbol);
        at += read;
        return buildFse(counts, log);
      }
      default:
        if (!previous) fail("repeated table without a previous one");
        return previous;
    }
  };
  state.ll = table(modes >> 6, LL_DEFAULT, 9, 35, state.ll);
  state.of = table((modes >> 4) & 3, OF_DEFAULT, 8, 31, state.of);
  state.ml = table((modes >> 2) & 3, ML_DEFAULT, 9, 52, state.ml);
  return { count, at };
}

/**
 * Executes the block's `count` sequences, their bitstream `[at, end)`: copies its literals and
 * matches into `out` from `size`, then the literals left; returns the new size.
 */
function executeSequences(
  data: Uint8Array,
  at: number,
  end: number,
  count: number,
  literals: Literals,
  out: Uint8Array,
  size: number,
  state: BlockState,
  room: (used: number, more: number) => Uint8Array,
): number {
  const blockStart = size;
  const ll = state.ll!;
  const of = state.of!;
  const ml = state.ml!;
  // The sequences' bitstream, read in place (see peekBits).
  const from0 = at;
  let left = streamBits(data, at, end);
  let llState = peekBits(data, from0, left, ll.log);
  left -= ll.log;
  let ofState = peekBits(data, from0, left, of.log);
  left -= of.log;
  let mlState = peekBits(data, from0, left, ml.log);
  left -= ml.log;
  const rep = state.rep;
  let buffer = out;
  let litAt = literals.start;
  const litEnd = literals.start + literals.size;
  const bytes = literals.bytes;
  for (let i = 0; i < count; i++) {
    const ofCode = of.symbol[ofState]!;
    const mlCode = ml.symbol[mlState]!;
    const llCode = ll.symbol[llState]!;
    if (ofCode > 31) fail("offset code");
    let ofValue: number;
    if (ofCode <= 24) {
      ofValue = 2 ** ofCode + peekBits(data, from0, left, ofCode);
      left -= ofCode;
    } else {
      // A long offset, read 24 bits at a time at most.
      const high = peekBits(data, from0, left, ofCode - 24);
      left -= ofCode - 24;
      ofValue = 2 ** ofCode + high * 2 ** 24 + peekBits(data, from0, left, 24);
      left -= 24;
    }
    const mlBits = ML_BITS[mlCode]!;
    const matchLength = ML_BASE[mlCode]! + peekBits(data, from0, left, mlBits);
    left -= mlBits;
    const llBits = LL_BITS[llCode]!;
    const litLength = LL_BASE[llCode]! + peekBits(data, from0, left, llBits);
    left -= llBits;
    let offset: number;
    if (ofValue > 3) {
      offset = ofValue - 3;
      rep[2] = rep[1];
      rep[1] = rep[0];
      rep[0] = offset;
    } else {
      const index = ofValue - 1 + (litLength === 0 ? 1 : 0);
      if (index === 0) {
        offset = rep[0];
      } else if (index === 3) {
        offset = rep[0] - 1;
        if (offset === 0) fail("offset of zero");
        rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = offset;
      } else {
        offset = rep[index]!;
        if (index === 2) rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = offset;
      }
    }
    if (i < count - 1) {
      const llNext = ll.bits[llState]!;
      llState = ll.base[llState]! + peekBits(data, from0, left, llNext);
      left -= llNext;
      const mlNext = ml.bits[mlState]!;
      mlState = ml.base[mlState]! + peekBits(data, from0, left, mlNext);
      left -= mlNext;
      const ofNext = of.bits[ofState]!;
      ofState = of.base[ofState]! + peekBits(data, from0, left, ofNext);
      left -= ofNext;
    }
    if (litAt + litLength > litEnd) fail("literals overrun");
    if (size - blockStart + litLength + matchLength > MAX_BLOCK) fail("block past 128 KiB");
    if (size + litLength + matchLength > buffer.length) {
      buffer = room(size, litLength + matchLength);
    }
    // Short copies byte by byte: a call to set or copyWithin costs more than a few bytes do.
    if (litLength > 8) {
      buffer.set(bytes.subarray(litAt, litAt + litLength), size);
      size += litLength;
      litAt += litLength;
    } else {
      for (let k = 0; k < litLength; k++) buffer[size++] = bytes[litAt++]!;
    }
    if (offset > size) fail("match distance too far back");
    let from = size - offset;
    if (matchLength > 8 && offset >= matchLength) {
      buffer.copyWithin(size, from, from + matchLength);
      size += matchLength;
    } else {
      // An offset shorter than the match repeats what it copies (as zstd means it to).
      for (let k = 0; k < matchLength; k++) buffer[size++] = buffer[from++]!;
    }
  }
  if (left !== 0) fail("sequences not read whole");
  const rest = litEnd - litAt;
  buffer = room(size, rest);
  buffer.set(bytes.subarray(litAt, litEnd), size);
  return size + rest;
}
