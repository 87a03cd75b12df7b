// The stdio transport of `logbook mcp`: one JSON-RPC message per line, in and out. A line that is
// not JSON, or not JSON-RPC, is answered with JSON-RPC's error for it (the SDK's own transport
// drops it without a word); a line longer than any request needs is skipped as it arrives, never
// held, and answered with an error (the SDK's transport holds it up to 10 MiB, then stops
// serving). Either way the server reads on.

import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * The longest line read, in bytes. The largest request a client needs is a search: a query of at
 * most 4,096 characters (24 KiB were each escaped as `\uXXXX`) and a few short filters.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** JSON-RPC's codes for a line that is not JSON, and for JSON that is not a request. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

const NEWLINE = 0x0a;

/** A transport reading newline-delimited JSON-RPC from `input` and writing it to `output`. */
export class LineTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  readonly #input: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #maxLine: number;
  readonly #decoder = new TextDecoder();
  readonly #encoder = new TextEncoder();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /** The start of the line being read (its first `#held` bytes), grown up to the limit. */
  #line = new Uint8Array(0);
  #held = 0;
  /** True from the moment a line is over the limit until its newline. */
  #skipping = false;
  /** The last write, so that closing waits for what was sent. */
  #written: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    input: ReadableStream<Uint8Array>,
    output: WritableStream<Uint8Array>,
    options: { maxLineBytes?: number } = {},
  ) {
    this.#input = input;
    this.#writer = output.getWriter();
    this.#maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** Starts reading; the transport closes itself when `input` ends. */
  start(): Promise<void> {
    if (this.#reader) throw new Error("The transport is already started");
    this.#reader = this.#input.getReader();
    void this.#read(this.#reader);
    return Promise.resolve();
  }

  /** Writes `message` as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  /** Stops reading, waits for what was sent to be written, and calls `onclose` (once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#line = new Uint8Array(0);
    await this.#reader?.cancel().catch(() => {});
    await this.#written.catch(() => {});
    this.onclose?.();
  }

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      while (!this.#closed) {
        const { value, done } = await reader.read();
        if (done) break;
        this.#take(value);
      }
    } catch (err) {
      if (!this.#closed) this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
    await this.close();
  }

  /** Splits `chunk` into lines, holding at most the limit of the line it leaves unfinished. */
  #take(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (!this.#skipping && this.#held + piece.length > this.#maxLine) {
        this.#held = 0;
        this.#skipping = true;
        void this.#refuse(
          null,
          INVALID_REQUEST,
          `Invalid Request: the line is over ${this.#maxLine} bytes, the most a message may ` +
            "take; it is skipped",
        );
      }
      if (end === -1) {
        if (!this.#skipping) this.#hold(piece);
        return;
      }
      if (!this.#skipping) {
        // A line whole in one chunk is read where it is; else its start is completed.
        if (this.#held) this.#hold(piece);
        this.#message(this.#held ? this.#line.subarray(0, this.#held) : piece);
      }
      this.#held = 0;
      this.#skipping = false;
      start = end + 1;
    }
  }

  /** Appends `piece` to the line held, in one buffer however small the chunks come. */
  #hold(piece: Uint8Array): void {
    const held = this.#held + piece.length;
    if (held > this.#line.length) {
      const grown = new Uint8Array(Math.min(this.#maxLine, Math.max(held, 2 * this.#line.length)));
      grown.set(this.#line.subarray(0, this.#held));
      this.#line = grown;
    }
    this.#line.set(piece, this.#held);
    this.#held = held;
  }

  /** One whole line: a message for `onmessage`, or the error it gets back. */
  #message(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes).replace(/\r$/, "");
    if (!text.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      void this.#refuse(null, PARSE_ERROR, "Parse error: the line is not JSON");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      void this.#refuse(
        requestIdOf(value),
        INVALID_REQUEST,
        "Invalid Request: the line is not a JSON-RPC 2.0 message",
      );
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #refuse(id: string | number | null, code: number, message: string): Promise<void> {
    return this.#write({ jsonrpc: "2.0", id, error: { code, message } }).catch((err) =>
      this.onerror?.(err instanceof Error ? err : new Error(String(err)))
    );
  }

  #write(message: unknown): Promise<void> {
    const bytes = this.#encoder.encode(JSON.stringify(message) + "\n");
    this.#written = this.#writer.write(bytes);
    return this.#written;
  }
}

/**
 * The id of a request that is not valid JSON-RPC, when it has one to answer by (an object with
 * a method and a string or whole-number id); else null, as JSON-RPC answers what has no id.
 */
function requestIdOf(value: unknown): string | number | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (method === undefined) return null;
  if (typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id))) return id;
  return null;
}
