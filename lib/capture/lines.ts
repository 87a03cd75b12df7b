// Splits a byte stream into lines with bounded memory: reads at most 64 KiB at a time, hands
// out complete lines (terminator included), and switches to chunked streaming for a line that
// grows past the in-memory limit.

/** Bytes per read. */
export const READ_SIZE = 64 * 1024;
/** The buffer a reader starts with: two reads. */
export const BUFFER_SIZE = READ_SIZE * 2;

/** Something that fills a buffer: an open file, or a decompressor. */
export interface ByteReader {
  read(buffer: Uint8Array): Promise<number | null>;
}

/** A complete line, or the start of one too long to hold (`oversized`). */
export interface LineChunk {
  /** Position of the line's first byte in the stream. */
  offset: number;
  bytes: Uint8Array;
  /** True when the line is longer than the limit: `bytes` is only its beginning. */
  oversized: boolean;
}

/** Reads lines from `reader`, whose first byte sits at stream position `start`. */
export class LineReader {
  #reader: ByteReader;
  #buffer: Uint8Array;
  #start = 0; // first unconsumed byte in #buffer
  #end = 0; // end of valid bytes in #buffer
  #scan = 0; // bytes before this index (from #start) hold no newline
  #position: number; // stream position of #buffer[#start]
  #eof = false;
  #maxLine: number;

  /**
   * `buffer` (at least `BUFFER_SIZE` bytes), when given, is read into until a line outgrows it:
   * a pass reads its sources one after another into one, where a buffer per source (105,609 of
   * them in a 10 GB capture) was garbage the runtime frees only at its next full collection.
   */
  constructor(reader: ByteReader, start: number, maxLine: number, buffer?: Uint8Array) {
    this.#reader = reader;
    this.#position = start;
    this.#maxLine = maxLine;
    this.#buffer = buffer && buffer.length >= BUFFER_SIZE ? buffer : new Uint8Array(BUFFER_SIZE);
  }

  /** Stream position of the first byte not yet handed out. */
  get position(): number {
    return this.#position;
  }

  /** Bytes read past the last complete line (an incomplete last line, at end of stream). */
  get pendingBytes(): number {
    return this.#end - this.#start;
  }

  /**
   * The next complete line, an oversized line's beginning, or null at the end of the stream
   * (an incomplete last line stays unconsumed: it is captured once it is complete).
   */
  async next(): Promise<LineChunk | null> {
    while (true) {
      const newline = this.#buffer.subarray(this.#start + this.#scan, this.#end).indexOf(0x0a);
      if (newline >= 0) {
        const stop = this.#start + this.#scan + newline + 1;
        const bytes = this.#buffer.slice(this.#start, stop);
        const offset = this.#position;
        this.#position += bytes.length;
        this.#start = stop;
        this.#scan = 0;
        return { offset, bytes, oversized: false };
      }
      this.#scan = this.#end - this.#start;
      if (this.#end - this.#start >= this.#maxLine) {
        const bytes = this.#buffer.slice(this.#start, this.#end);
        const offset = this.#position;
        this.#position += bytes.length;
        this.#start = this.#end = this.#scan = 0;
        return { offset, bytes, oversized: true };
      }
      if (this.#eof || !(await this.#fill())) return null;
    }
  }

  /**
   * The incomplete last line, once `next` has returned null at the end of the stream, consumed
   * (for an agent that ends a line with the next one's newline); null when there is none.
   */
  rest(): LineChunk | null {
    const length = this.#end - this.#start;
    if (!this.#eof || length === 0 || length >= this.#maxLine) return null;
    const bytes = this.#buffer.slice(this.#start, this.#end);
    const offset = this.#position;
    this.#position += length;
    this.#start = this.#end = this.#scan = 0;
    return { offset, bytes, oversized: false };
  }

  /**
   * The next piece of an oversized line: up to one read, ending at its newline when the newline
   * is in it. `done` is true when the line is complete; null means the stream ended first.
   */
  async nextPiece(): Promise<{ bytes: Uint8Array; done: boolean } | null> {
    if (this.#end === this.#start) {
      this.#start = this.#end = 0;
      if (this.#eof || !(await this.#fill())) return null;
    }
    const view = this.#buffer.subarray(this.#start, Math.min(this.#end, this.#start + READ_SIZE));
    const newline = view.indexOf(0x0a);
    const length = newline >= 0 ? newline + 1 : view.length;
    const bytes = this.#buffer.slice(this.#start, this.#start + length);
    this.#start += length;
    this.#position += length;
    this.#scan = 0;
    return { bytes, done: newline >= 0 };
  }

  async #fill(): Promise<boolean> {
    if (this.#start > 0) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#buffer.length - this.#end < READ_SIZE) {
      const grown = new Uint8Array(Math.max(this.#buffer.length * 2, this.#end + READ_SIZE));
      grown.set(this.#buffer.subarray(0, this.#end));
      this.#buffer = grown;
    }
    const n = await this.#reader.read(this.#buffer.subarray(this.#end, this.#end + READ_SIZE));
    if (n === null || n === 0) {
      this.#eof = true;
      return false;
    }
    this.#end += n;
    return true;
  }
}
