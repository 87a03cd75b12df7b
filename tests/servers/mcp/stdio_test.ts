// The MCP server's stdio transport over streams the test feeds: lines split anywhere across
// chunks, CRLF and blank lines, and a line at the limit taken while one byte over is refused.

import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { INVALID_REQUEST, LineTransport } from "../../../servers/mcp/stdio.ts";

/** A transport over `chunks`, run until its input ends: what it passed on and what it wrote. */
async function run(chunks: string[], maxLineBytes?: number) {
  const encoder = new TextEncoder();
  const input = ReadableStream.from(chunks.map((chunk) => encoder.encode(chunk)));
  const written: string[] = [];
  const output = new WritableStream<Uint8Array>({
    write: (bytes) => void written.push(new TextDecoder().decode(bytes)),
  });
  const transport = new LineTransport(input, output, maxLineBytes ? { maxLineBytes } : {});
  const messages: JSONRPCMessage[] = [];
  const closed = Promise.withResolvers<void>();
  transport.onmessage = (message) => void messages.push(message);
  transport.onclose = () => closed.resolve();
  await transport.start();
  await closed.promise;
  return {
    messages,
    replies: written.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l)),
  };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });

Deno.test("LineTransport reads a message however its line is split across chunks", async () => {
  const text = `${ping(1)}\r\n\n  \n${ping(2)}\n${ping(3)}\n`;
  for (let size = 1; size <= text.length; size += 7) {
    const chunks = [];
    for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
    const { messages, replies } = await run(chunks);
    assert.deepEqual(messages.map((m) => (m as { id: number }).id), [1, 2, 3], `chunks of ${size}`);
    assert.deepEqual(replies, [], "a blank line is no message and gets no answer");
  }
});

Deno.test("LineTransport takes a line at its limit and refuses one byte more, then goes on", async () => {
  const line = ping(1);
  const exact = await run([line.slice(0, 5), line.slice(5) + "\n"], line.length);
  assert.equal(exact.messages.length, 1);
  assert.deepEqual(exact.replies, []);
  const over = await run([line.slice(0, 5), line.slice(5) + " \n", ping(2) + "\n"], line.length);
  assert.deepEqual(over.messages.map((m) => (m as { id: number }).id), [2]);
  assert.equal(over.replies.length, 1);
  assert.equal(over.replies[0].id, null);
  assert.equal(over.replies[0].error.code, INVALID_REQUEST);
  // Refused once, however many chunks the line still takes.
  const long = await run([line, ..."x".repeat(50), "\n", ping(2) + "\n"], line.length);
  assert.equal(long.replies.length, 1);
  assert.deepEqual(long.messages.map((m) => (m as { id: number }).id), [2]);
});
