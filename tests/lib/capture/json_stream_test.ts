// The streaming JSON scanner of lines too long to hold in memory: the scalars it keeps, the text
// it takes out (escapes decoded, base64 left out), and invalid JSON.

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
