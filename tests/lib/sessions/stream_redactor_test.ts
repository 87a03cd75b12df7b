// Tests for lib/sessions/stream_redactor.ts: a streamed reply shown through the gate.

import assert from "node:assert/strict";
import { createGate } from "../../../lib/gate.ts";
import { StreamRedactor } from "../../../lib/sessions/stream_redactor.ts";

Deno.test("the display gate never shows a key split across streamed pieces", () => {
  const redactor = new StreamRedactor(createGate());
  const pieces = [
    "Your key is sk-",
    "Fa4Ke7Xy2Qz9",
    "Lm3Np8Rt5Vw6Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6",
    " ok\nnext",
    " line",
  ];
  const shown = pieces.map((p) => redactor.push(p)).join("") + redactor.flush();
  assert.equal(shown, "Your key is [REDACTED:openai-key] ok\nnext line");
  const pem = new StreamRedactor(createGate());
  const key =
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
  const out = [...key].map((c) => pem.push(c)).join("") + pem.flush();
  assert.ok(!out.includes("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"));
});
