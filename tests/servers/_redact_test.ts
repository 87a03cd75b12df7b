// `redactBytes`: raw bytes through the gate, untouched unless a secret is in them, and every
// other byte kept even when they are not UTF-8.

import assert from "node:assert/strict";
import { redactSecrets } from "../../lib/gate/secrets.ts";
import { redactBytes } from "../../servers/_redact.ts";
import { SECRET } from "./_dashboard.ts";

const encoder = new TextEncoder();

Deno.test("redactBytes() returns clean bytes as they are", () => {
  const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x0d, 0x0a]);
  const result = redactBytes(bytes, redactSecrets);
  assert.equal(result.changed, false);
  assert.equal(result.bytes, bytes);
});

Deno.test("redactBytes() redacts a secret in UTF-8 and in bytes that are not UTF-8", () => {
  const utf8 = redactBytes(encoder.encode(`Zürich ${SECRET}\r\n`), redactSecrets);
  assert.equal(utf8.changed, true);
  assert.equal(new TextDecoder().decode(utf8.bytes), "Zürich [REDACTED:openai-key]\r\n");

  const invalid = new Uint8Array([0xff, 0x20, ...encoder.encode(SECRET), 0x20, 0xc3]);
  const latin1 = redactBytes(invalid, redactSecrets);
  assert.equal(latin1.changed, true);
  assert.deepEqual(
    [...latin1.bytes],
    [0xff, 0x20, ...encoder.encode("[REDACTED:openai-key]"), 0x20, 0xc3],
  );
});
