// The line reader's boundaries: complete lines with their terminators, an incomplete tail held
// back, and a line longer than the limit streamed in pieces.

import assert from "node:assert/strict";
import { type ByteReader, LineReader } from "../../../lib/capture/lines.ts";

function readerOf(bytes: Uint8Array, step: number): ByteReader {
  let at = 0;
  return {
    read(buffer) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(step, buffer.length, bytes.length - at);
      buffer.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

Deno.test("LineReader hands out complete lines with their terminators and holds an incomplete tail", async () => {
  const text = "one\r\ntwo\n\nthree-without-newline";
  for (const step of [1, 2, 3, 7, 100]) {
    const reader = new LineReader(readerOf(new TextEncoder().encode(text), step), 10, 1 << 20);
    const lines: [number, string][] = [];
    for (let line = await reader.next(); line; line = await reader.next()) {
      assert.equal(line.oversized, false);
      lines.push([line.offset, new TextDecoder().decode(line.bytes)]);
    }
    assert.deepEqual(lines, [[10, "one\r\n"], [15, "two\n"], [19, "\n"]], `read step ${step}`);
    assert.equal(reader.position, 20);
    assert.equal(reader.pendingBytes, "three-without-newline".length);
    const rest = reader.rest()!;
    assert.deepEqual([rest.offset, new TextDecoder().decode(rest.bytes)], [
      20,
      "three-without-newline",
    ]);
    assert.equal(reader.position, 20 + "three-without-newline".length);
    assert.equal(reader.rest(), null, "taken once");
  }
});

Deno.test("LineReader streams a line longer than its limit in pieces", async () => {
  const long = "x".repeat(300_000);
  const bytes = new TextEncoder().encode(`short\n${long}\nafter\n`);
  const reader = new LineReader(readerOf(bytes, 65_536), 0, 100_000);
  assert.equal(new TextDecoder().decode((await reader.next())!.bytes), "short\n");
  const head = (await reader.next())!;
  assert.equal(head.oversized, true);
  assert.equal(head.offset, 6);
  let total = head.bytes.length;
  let piece;
  while ((piece = await reader.nextPiece())) {
    total += piece.bytes.length;
    assert.ok(piece.bytes.length <= 65_536);
    if (piece.done) break;
  }
  assert.equal(total, long.length + 1);
  const after = (await reader.next())!;
  assert.equal(new TextDecoder().decode(after.bytes), "after\n");
  assert.equal(after.offset, 6 + long.length + 1);
});
