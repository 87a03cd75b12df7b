// Reading a few top-level fields of JSON lines without parsing the rest: a transcript's bytes, fed
// in chunks cut anywhere, walked once for the structure (nested values passed over, their strings
// by jumps to the next quote or backslash), with only the wanted fields' values decoded. It reads
// what JSON.parse would read (spaces, escapes, any key order), where a pattern over the bytes
// reads only the spelling one writer uses.

/** What a `JsonLineFields` reports; a callback that returns true stops the reading. */
export interface FieldVisitor {
  /** A wanted top-level field whose value is a string, as its line is read. */
  field(key: string, value: string): boolean | void;
  /** The end of a line (a newline, or a new record); `blank` when it held only spaces. */
  line?(blank: boolean): boolean | void;
}

/** Wanted keys and values longer than this are not a field's: passed over. */
const MAX_TOKEN = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/** Reads the top-level string fields `keys` of the JSON lines fed to it. */
export class JsonLineFields {
  #keys: ReadonlySet<string>;
  /** The wanted keys' bytes, to tell a key without decoding it. */
  #keyBytes: readonly (readonly [string, Uint8Array])[];
  #visitor: FieldVisitor;
  /** Nesting: 0 before the line's object, 1 in it (its fields), more inside their values. */
  #depth = 0;
  #inString = false;
  /** Backslashes that ended the last bytes read, inside a string (an odd count escapes). */
  #slashes = 0;
  /** True where a top-level key is due (after `{` or `,`), false where its value is. */
  #keyDue = false;
  /** The wanted key whose value is due. */
  #key: string | null = null;
  /** The bytes of the top-level string being read (a key, or a wanted value), or null. */
  #token: number[] | null = null;
  #tokenIsKey = false;
  /** True once the line has more than spaces. */
  #open = false;
  #stopped = false;

  constructor(keys: readonly string[], visitor: FieldVisitor) {
    this.#keys = new Set(keys);
    this.#keyBytes = keys.map((key) => [key, new TextEncoder().encode(key)] as const);
    this.#visitor = visitor;
  }

  /** Feeds the next bytes; false once a callback stopped the reading (the rest is ignored). */
  write(bytes: Uint8Array): boolean {
    if (this.#stopped) return false;
    let newline = -1;
    let i = 0;
    while (i < bytes.length) {
      if (newline < i) newline = endOr(bytes.indexOf(NEWLINE, i), bytes.length);
      if (this.#inString) {
        // Straight to the quote that ends the string: its escapes are not walked one by one.
        const end = this.#stringEnd(bytes, i, newline);
        if (this.#token) this.#take(bytes, i, end < 0 ? newline : end);
        if (end >= 0) {
          this.#inString = false;
          i = end + 1;
          if (this.#endString()) continue;
        } else if (newline < bytes.length) {
          // A line ends inside a string (not JSON): the next line is read afresh.
          i = newline + 1;
          if (this.#endLine()) continue;
        } else {
          this.#slashes = trailingSlashes(bytes, i, this.#slashes);
          break;
        }
        this.#stopped = true;
        return false;
      }
      if (!this.#byte(bytes[i++]!)) {
        this.#stopped = true;
        return false;
      }
    }
    return true;
  }

  /** A new line starts here (a stored record's first chunk), whatever came before. */
  newLine(): boolean {
    if (this.#stopped) return false;
    return this.#open ? this.#endLine() : true;
  }

  /** The bytes have ended: the last line ends too. */
  end(): boolean {
    return this.newLine();
  }

  /** One byte of the structure (outside strings); false when a callback stopped the reading. */
  #byte(b: number): boolean {
    if (b === NEWLINE) return this.#endLine();
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) this.#open = true;
    switch (b) {
      case QUOTE:
        this.#inString = true;
        this.#slashes = 0;
        if (this.#depth === 1 && (this.#keyDue || this.#key !== null)) {
          this.#token = [];
          this.#tokenIsKey = this.#keyDue;
        }
        return true;
      case 0x7b: // {
      case 0x5b: // [
        this.#depth++;
        if (this.#depth === 1) this.#keyDue = b === 0x7b;
        return true;
      case 0x7d: // }
      case 0x5d: // ]
        this.#depth = Math.max(0, this.#depth - 1);
        return true;
      case 0x3a: // :
        if (this.#depth === 1) this.#keyDue = false;
        return true;
      case 0x2c: // ,
        if (this.#depth === 1) {
          this.#keyDue = true;
          this.#key = null;
        }
        return true;
      default:
        return true;
    }
  }

  /**
   * Where the string read from `from` ends (its closing quote, before `limit`), or -1 when it goes
   * on past `limit`.
   */
  #stringEnd(bytes: Uint8Array, from: number, limit: number): number {
    for (let at = from;;) {
      const quote = bytes.indexOf(QUOTE, at);
      if (quote < 0 || quote >= limit) return -1;
      let k = quote - 1;
      while (k >= from && bytes[k] === BACKSLASH) k--;
      const slashes = quote - 1 - k + (k < from ? this.#slashes : 0);
      if (slashes % 2 === 0) return quote;
      at = quote + 1;
    }
  }

  /** Bytes `from` to `to` of a string being read. */
  #take(bytes: Uint8Array, from: number, to: number): void {
    const token = this.#token!;
    if (token.length + (to - from) > MAX_TOKEN) {
      this.#token = null;
      if (!this.#tokenIsKey) this.#key = null;
      return;
    }
    for (let k = from; k < to; k++) token.push(bytes[k]!);
  }

  /** A string ended: a top-level key read, or a wanted field's value. */
  #endString(): boolean {
    const token = this.#token;
    this.#token = null;
    if (this.#depth !== 1) return true;
    if (this.#tokenIsKey) {
      this.#key = token ? this.#wanted(token) : null;
      return true;
    }
    const key = this.#key;
    this.#key = null;
    const value = token ? decodeString(token) : null;
    if (key === null || value === null) return true;
    return this.#visitor.field(key, value) !== true;
  }

  /** The wanted key that `token`, a key's bytes, spells, or null. */
  #wanted(token: number[]): string | null {
    if (token.includes(BACKSLASH)) {
      const key = decodeString(token);
      return key !== null && this.#keys.has(key) ? key : null;
    }
    for (const [key, bytes] of this.#keyBytes) {
      if (bytes.length === token.length && bytes.every((b, i) => b === token[i])) return key;
    }
    return null;
  }

  #endLine(): boolean {
    const blank = !this.#open;
    this.#open = false;
    this.#depth = 0;
    this.#inString = false;
    this.#slashes = 0;
    this.#keyDue = false;
    this.#key = null;
    this.#token = null;
    return this.#visitor.line?.(blank) !== true;
  }
}

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** The string a JSON string's bytes (between its quotes) spell, or null when they spell none. */
function decodeString(bytes: number[]): string | null {
  const text = decoder.decode(Uint8Array.from(bytes));
  if (!bytes.includes(BACKSLASH)) return text;
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return null;
  }
}

/** The backslashes `bytes` ends with after `from` (and `before` more when they all are). */
function trailingSlashes(bytes: Uint8Array, from: number, before: number): number {
  let k = bytes.length - 1;
  while (k >= from && bytes[k] === BACKSLASH) k--;
  return bytes.length - 1 - k + (k < from ? before : 0);
}

/** `at`, or `end` when it is -1 (not found). */
function endOr(at: number, end: number): number {
  return at < 0 ? end : at;
}
