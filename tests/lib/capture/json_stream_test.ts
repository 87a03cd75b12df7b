// The streaming JSON scanner of lines too long to hold in memory: the scalars it keeps, the text
// it takes out (escapes decoded, base64 left out, only where the adapter says text is), however
// the line is cut, and invalid JSON.

import assert from "node:assert/strict";
import { JsonTextScanner } from "../../../lib/capture/json_stream.ts";

Deno.test("JsonTextScanner keeps top scalars, decodes escapes and leaves out base64", () => {
  const payload = "A".repeat(5000);
  const json = JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "text", text: 'caf\u00e9 "quoted"\nline two \ud83d\ude00' },
        { type: "image", source: { type: "base64", data: payload } },
        { type: "tool_result", content: "plain words " + payload },
      ],
    },
    timestamp: "2026-10-01T00:00:00Z",
    n: 42,
    ok: true,
  });
  const scanner = new JsonTextScanner(new Set(["data"]));
  const bytes = new TextEncoder().encode(json);
  let text = "";
  for (let i = 0; i < bytes.length; i += 37) {
    scanner.write(bytes.subarray(i, i + 37));
    text += scanner.takeText();
  }
  scanner.end();
  assert.equal(scanner.failed, false);
  assert.equal(scanner.scalars.get("type"), "user");
  assert.equal(scanner.scalars.get("message.role"), "user");
  assert.equal(scanner.scalars.get("message.content.0.type"), "text");
  assert.equal(scanner.scalars.get("timestamp"), "2026-10-01T00:00:00Z");
  assert.equal(scanner.scalars.get("n"), 42);
  assert.equal(scanner.scalars.get("ok"), true);
  assert.match(text, /café "quoted"\nline two 😀/);
  assert.match(text, /plain words A/);
  assert.ok(!text.includes("A".repeat(300)) || text.includes("plain words " + "A".repeat(300)));
  assert.equal(text.split(payload).length, 2, "only the text that starts with words is kept");
});

Deno.test("JsonTextScanner reports invalid JSON", () => {
  const scanner = new JsonTextScanner(new Set());
  scanner.write(new TextEncoder().encode('{"a": [1, 2}'));
  scanner.end();
  assert.equal(scanner.failed, true);
});

/** The text and scalars of `json` fed in pieces of `size` bytes, the text taken after each. */
function scan(
  json: string,
  size: number,
  textPath?: (path: readonly (string | number)[]) => boolean,
) {
  const scanner = new JsonTextScanner(new Set(["data"]), textPath);
  const bytes = new TextEncoder().encode(json);
  let text = "";
  for (let i = 0; i < bytes.length; i += size) {
    scanner.write(bytes.subarray(i, i + size));
    text += scanner.takeText();
  }
  scanner.end();
  return { text, scalars: [...scanner.scalars], failed: scanner.failed };
}

Deno.test("JsonTextScanner gives the same text and scalars however the line is cut", () => {
  const json = JSON.stringify({
    type: "user",
    cwd: "/home/dev/src/kestrel",
    message: {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", data: "QUJD".repeat(3000) } },
        { type: "text", text: 'first\ttab "quoted" caf\u00e9 \ud83d\ude00 ' + "word ".repeat(900) },
        { type: "text", text: "second" },
        { type: "tool_result", content: "QUJD".repeat(100) + " not a payload" },
      ],
    },
    long: "x".repeat(2000),
  });
  const whole = scan(json, json.length * 4);
  assert.equal(whole.failed, false);
  for (const size of [1, 2, 3, 7, 64, 1000]) {
    assert.deepEqual(scan(json, size), whole, `pieces of ${size} bytes`);
  }
  // Two strings never run together, also when the first was taken before the second began.
  assert.match(whole.text, / \ntext\nsecond\n/);
  assert.ok(!whole.text.includes("QUJDQUJD"), "the payloads are left out");
});

Deno.test("JsonTextScanner takes text only where the text path says", () => {
  const json = JSON.stringify({
    type: "user",
    uuid: "11111111-2222-4333-8444-555555555555",
    message: {
      role: "user",
      content: [{ type: "text", text: "the question" }, { type: "text", text: "and more" }],
    },
    toolUseResult: { stdout: "a copy" },
  });
  const inContent = (path: readonly (string | number)[]) =>
    path[0] === "message" && path[1] === "content" && path[3] === "text";
  const { text, scalars } = scan(json, 5, inContent);
  assert.equal(text, "the question\nand more");
  assert.ok(scalars.some(([key, value]) => key === "uuid" && typeof value === "string"));
});
