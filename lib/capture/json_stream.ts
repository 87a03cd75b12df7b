// A streaming scanner for JSON lines too long to hold in memory: it walks the bytes once,
// keeps the small scalar fields near the top (type, role, timestamp…), and emits the text of
// string values as it goes (those where the adapter says text is, when it says), leaving out
// base64 payloads. Memory stays bounded by constants.

import type { Scalar, TextPath } from "../sources/adapter.ts";

const enum S {
  Value, // expecting a value
  Key, // expecting a key or '}'
  Colon, // expecting ':'
  After, // after a value: ',' or a closing bracket
  Str, // inside a string
  Esc, // after a backslash in a string
  Uni, // inside \uXXXX
  Lit, // inside a number or literal
  Done,
}

interface Frame {
  array: boolean;
  key: string | null;
  index: number;
}

/** Longest scalar value kept, and the deepest path at which scalars are kept. */
const MAX_SCALAR = 512;
const MAX_DEPTH = 5;
/** A string whose first this-many bytes are all base64 characters is treated as a payload. */
const BASE64_PROBE = 200;
/** Emitted text is handed on in pieces of at most this many bytes. */
const OUT_PIECE = 16384;

const encoder = new TextEncoder();

/** Scans one JSON value fed in pieces; see the file comment. */
export class JsonTextScanner {
  readonly scalars = new Map<string, Scalar>();
  #skipKeys: ReadonlySet<string>;
  #textPath: TextPath | undefined;
  #state: S = S.Value;
  #stack: Frame[] = [];
  // The string being read: whether it is a key, whether its text is emitted.
  #isKey = false;
  #emit = false;
  #probe = true;
  #keyBytes: number[] = [];
  #scalarBytes: number[] | null = null;
  #pending: number[] = []; // bytes of the current string held while probing for base64
  #lit = "";
  #uni = "";
  #highSurrogate = 0;
  #out: Uint8Array[] = [];
  /** True once any text was emitted: the next string's text follows it on a line of its own. */
  #emitted = false;
  // Emitted bytes gather in one reused buffer: per-byte pushes to an array made the heap grow.
  #outPiece = new Uint8Array(OUT_PIECE);
  #outLength = 0;
  #decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  #failed = false;

  /** `textPath`: where text is (every string but those of `skipKeys` when absent). */
  constructor(skipKeys: ReadonlySet<string>, textPath?: TextPath) {
    this.#skipKeys = skipKeys;
    this.#textPath = textPath;
  }

  /** True when the bytes seen so far are not valid JSON (scanning continues leniently). */
  get failed(): boolean {
    return this.#failed;
  }

  /** Feeds the next piece of the line. */
  write(bytes: Uint8Array): void {
    // Where the next quote and backslash are, found once each for the runs of string bytes
    // between them: a long string (a payload, a long text) is passed over or copied, not walked.
    let quote = -1;
    let slash = -1;
    for (let i = 0; i < bytes.length;) {
      if (this.#state === S.Str && !this.#isKey) {
        if (quote < i) quote = endOr(bytes.indexOf(0x22, i), bytes.length);
        if (slash < i) slash = endOr(bytes.indexOf(0x5c, i), bytes.length);
        const end = Math.min(quote, slash);
        if (end > i) {
          this.#stringRun(bytes, i, end);
          i = end;
          continue;
        }
      }
      this.#byte(bytes[i++]!);
    }
    this.#flushPiece();
  }

  /** The text emitted since the last call (complete UTF-8 characters only). */
  takeText(): string {
    this.#flushPiece();
    let text = "";
    for (const piece of this.#out) text += this.#decoder.decode(piece, { stream: true });
    this.#out = [];
    return text;
  }

  #flushPiece(): void {
    if (this.#outLength) {
      this.#out.push(this.#outPiece.slice(0, this.#outLength));
      this.#outLength = 0;
    }
  }

  #emitByte(b: number): void {
    this.#emitted = true;
    this.#outPiece[this.#outLength++] = b;
    if (this.#outLength === OUT_PIECE) this.#flushPiece();
  }

  #byte(b: number): void {
    switch (this.#state) {
      case S.Str:
        if (b === 0x22) return this.#endString();
        if (b === 0x5c) {
          this.#state = S.Esc;
          return;
        }
        return this.#stringByte(b);
      case S.Esc:
        return this.#escape(b);
      case S.Uni:
        this.#uni += String.fromCharCode(b);
        if (this.#uni.length === 4) {
          this.#state = S.Str;
          this.#codeUnit(parseInt(this.#uni, 16));
        }
        return;
      case S.Lit:
        if (b === 0x2c || b === 0x7d || b === 0x5d || isSpace(b)) {
          this.#endLiteral();
          this.#state = S.After;
          return this.#byte(b);
        }
        if (this.#lit.length < 64) this.#lit += String.fromCharCode(b);
        return;
    }
    if (isSpace(b)) return;
    switch (this.#state) {
      case S.Value:
        return this.#value(b);
      case S.Key:
        if (b === 0x22) return this.#startString(true);
        if (b === 0x7d) return this.#close();
        this.#failed = true;
        return;
      case S.Colon:
        if (b === 0x3a) this.#state = S.Value;
        else this.#failed = true;
        return;
      case S.After:
        if (b === 0x2c) {
          const top = this.#stack.at(-1);
          if (!top) {
            this.#failed = true;
            return;
          }
          if (top.array) {
            top.index++;
            this.#state = S.Value;
          } else {
            this.#state = S.Key;
          }
          return;
        }
        if (b === 0x7d || b === 0x5d) return this.#close();
        this.#failed = true;
        return;
      case S.Done:
        this.#failed = true;
        return;
    }
  }

  #escape(b: number): void {
    this.#state = S.Str;
    switch (b) {
      case 0x6e: // n
        return this.#stringByte(0x0a);
      case 0x74: // t
        return this.#stringByte(0x09);
      case 0x72: // r
        return this.#stringByte(0x0d);
      case 0x62: // b
      case 0x66: // f
        return this.#stringByte(0x20);
      case 0x75: // u
        this.#uni = "";
        this.#state = S.Uni;
        return;
      default: // " \ / and anything lenient
        return this.#stringByte(b);
    }
  }

  #value(b: number): void {
    if (b === 0x7b || b === 0x5b) {
      const array = b === 0x5b;
      this.#stack.push({ array, key: null, index: 0 });
      this.#state = array ? S.Value : S.Key;
      return;
    }
    if (b === 0x5d) return this.#close(); // empty array
    if (b === 0x22) return this.#startString(false);
    this.#lit = String.fromCharCode(b);
    this.#state = S.Lit;
  }

  #close(): void {
    this.#stack.pop();
    this.#state = this.#stack.length ? S.After : S.Done;
  }

  #startString(isKey: boolean): void {
    this.#isKey = isKey;
    this.#state = S.Str;
    this.#highSurrogate = 0;
    if (isKey) {
      this.#keyBytes = [];
      this.#emit = false;
      return;
    }
    const key = this.#currentKey();
    this.#emit = !(key !== null && this.#skipKeys.has(key)) &&
      (this.#textPath === undefined || this.#textPath(this.#stack.map(pathPart)));
    this.#probe = this.#emit;
    this.#pending = [];
    this.#scalarBytes = this.#stack.length <= MAX_DEPTH ? [] : null;
  }

  #stringByte(b: number): void {
    if (this.#isKey) {
      if (this.#keyBytes.length < 128) this.#keyBytes.push(b);
      return;
    }
    if (this.#scalarBytes) {
      if (this.#scalarBytes.length < MAX_SCALAR) this.#scalarBytes.push(b);
      else this.#scalarBytes = null;
    }
    this.#textByte(b);
  }

  /** Bytes `from` to `to` of `bytes`, plain bytes of a value's string: as `#stringByte` each. */
  #stringRun(bytes: Uint8Array, from: number, to: number): void {
    if (this.#scalarBytes) {
      if (to - from > MAX_SCALAR - this.#scalarBytes.length) this.#scalarBytes = null;
      else for (let k = from; k < to; k++) this.#scalarBytes.push(bytes[k]!);
    }
    let k = from;
    while (k < to && this.#emit && this.#probe) this.#textByte(bytes[k++]!);
    if (!this.#emit) return;
    while (k < to) {
      const n = Math.min(to - k, OUT_PIECE - this.#outLength);
      this.#outPiece.set(bytes.subarray(k, k + n), this.#outLength);
      this.#outLength += n;
      this.#emitted = true;
      k += n;
      if (this.#outLength === OUT_PIECE) this.#flushPiece();
    }
  }

  /** A byte of a value's string, for its text. */
  #textByte(b: number): void {
    if (!this.#emit) return;
    if (this.#probe) {
      this.#pending.push(b);
      if (!isBase64Byte(b)) {
        this.#probe = false;
        this.#releasePending();
      } else if (this.#pending.length >= BASE64_PROBE) {
        // A long run of base64 characters with no space: a payload, not text.
        this.#emit = false;
        this.#pending = [];
      }
      return;
    }
    this.#emitByte(b);
  }

  #releasePending(): void {
    // Also when the text before was taken already: the texts of two strings never run together.
    if (this.#emitted) this.#emitByte(0x0a);
    for (const p of this.#pending) this.#emitByte(p);
    this.#pending = [];
  }

  #codeUnit(unit: number): void {
    if (Number.isNaN(unit)) return;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      this.#highSurrogate = unit;
      return;
    }
    let codePoint = unit;
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      codePoint = this.#highSurrogate
        ? 0x10000 + ((this.#highSurrogate - 0xd800) << 10) + (unit - 0xdc00)
        : 0xfffd;
    } else if (this.#highSurrogate) {
      for (const byte of encoder.encode("\ufffd")) this.#stringByte(byte);
    }
    this.#highSurrogate = 0;
    for (const byte of encoder.encode(String.fromCodePoint(codePoint))) this.#stringByte(byte);
  }

  #endString(): void {
    if (this.#isKey) {
      const top = this.#stack.at(-1);
      if (top) top.key = new TextDecoder().decode(Uint8Array.from(this.#keyBytes));
      this.#state = S.Colon;
      return;
    }
    if (this.#emit && this.#probe && this.#pending.length) this.#releasePending();
    if (this.#scalarBytes) {
      this.#setScalar(new TextDecoder().decode(Uint8Array.from(this.#scalarBytes)));
    }
    this.#scalarBytes = null;
    this.#state = this.#stack.length ? S.After : S.Done;
  }

  #endLiteral(): void {
    const lit = this.#lit;
    let value: Scalar;
    if (lit === "true") value = true;
    else if (lit === "false") value = false;
    else if (lit === "null") value = null;
    else {
      value = Number(lit);
      if (Number.isNaN(value)) {
        this.#failed = true;
        return;
      }
    }
    if (this.#stack.length <= MAX_DEPTH) this.#setScalar(value);
  }

  #setScalar(value: Scalar): void {
    const path = this.#stack.map((f) => f.array ? String(f.index) : f.key ?? "").join(".");
    if (!this.scalars.has(path)) this.scalars.set(path, value);
  }

  #currentKey(): string | null {
    const top = this.#stack.at(-1);
    return top && !top.array ? top.key : null;
  }

  /** Finishes the line; the scanner is not used after this. */
  end(): void {
    if (this.#state === S.Lit) this.#endLiteral();
    if (this.#state !== S.Done && this.#state !== S.After) this.#failed = true;
    if (this.#stack.length) this.#failed = true;
  }
}

/** `at`, or `end` when it is -1 (not found). */
function endOr(at: number, end: number): number {
  return at < 0 ? end : at;
}

function pathPart(frame: Frame): string | number {
  return frame.array ? frame.index : frame.key ?? "";
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function isBase64Byte(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) ||
    b === 0x2b || b === 0x2f || b === 0x3d || b === 0x2d || b === 0x5f;
}
