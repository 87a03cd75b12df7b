// Opens a source's bytes for reading from a position: a plain file (seek), or a
// zstd-compressed file (decompress from the start and skip; offsets count decompressed bytes).
// Sources are only ever opened read-only.

import { SourceError, type SourceRef } from "../sources/adapter.ts";
import { zstdDecompressor } from "../sources/zstd.ts";
import type { ByteReader } from "./lines.ts";

/** An open source: its bytes from the requested position, and how to close it. */
export interface OpenedSource {
  reader: ByteReader;
  close(): void;
}

/** Opens `ref` read-only, positioned at `position`. */
export function openSourceReader(ref: SourceRef, position: number): Promise<OpenedSource> {
  if (ref.format === "jsonl.zst") return zstdReader(ref.path, position);
  // Synchronous reads: a local transcript file answers in microseconds, and thousands of small
  // files read through the async thread pool left the capture waiting more than working.
  const file = Deno.openSync(ref.path, { read: true });
  try {
    if (position > 0) file.seekSync(position, Deno.SeekMode.Start);
  } catch (err) {
    file.close();
    throw err;
  }
  return Promise.resolve({
    reader: { read: (buffer) => Promise.resolve(file.readSync(buffer)) },
    close: () => file.close(),
  });
}

async function zstdReader(path: string, skip: number): Promise<OpenedSource> {
  const create = zstdDecompressor();
  const { createReadStream } = await import("node:fs");
  if (!create) throw new SourceError("No zstd decoder in this runtime");
  const input = createReadStream(path);
  const decompress = create();
  const output = input.pipe(decompress) as unknown as AsyncIterable<Uint8Array>;
  const iterator = output[Symbol.asyncIterator]();
  let carry: Uint8Array | null = null;
  let toSkip = skip;
  let closed = false;
  const reader: ByteReader = {
    async read(buffer) {
      while (true) {
        if (!carry || carry.length === 0) {
          const next = await iterator.next().catch((err: Error) => {
            throw new SourceError(`Cannot decompress "${path}": ${err.message}`, { cause: err });
          });
          if (next.done) return null;
          carry = next.value;
        }
        if (toSkip > 0) {
          const drop = Math.min(toSkip, carry.length);
          carry = carry.subarray(drop);
          toSkip -= drop;
          continue;
        }
        const n = Math.min(buffer.length, carry.length);
        buffer.set(carry.subarray(0, n));
        carry = carry.subarray(n);
        return n;
      }
    },
  };
  return {
    reader,
    close() {
      if (closed) return;
      closed = true;
      input.destroy();
      (decompress as unknown as { destroy(): void }).destroy();
    },
  };
}
