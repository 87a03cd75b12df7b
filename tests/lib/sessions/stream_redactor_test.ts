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

Deno.test("plain words are shown as they arrive, not held until the line ends", () => {
  const redactor = new StreamRedactor(createGate());
  assert.equal(redactor.push("Hello th"), "Hello ");
  assert.equal(redactor.push("ere, fri"), "there, ");
  assert.equal(redactor.push("end"), "");
  assert.equal(redactor.push("\nNext"), "friend\n");
  assert.equal(redactor.flush(), "Next");
});

Deno.test("a line that may hold a secret is still held whole until it ends", () => {
  const redactor = new StreamRedactor(createGate());
  const key = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);
  const pieces = ["Set the ", "password = ", `'${key.slice(0, 20)}`, `${key.slice(20)} now' `];
  const shown = pieces.map((p) => redactor.push(p));
  assert.equal(shown[0], "Set the ");
  assert.deepEqual(shown.slice(1), ["", "", ""], "held from the key word on");
  const rest = redactor.push(" ok\n") + redactor.flush();
  assert.ok(!rest.includes(key.slice(3, 15)), rest);
  assert.match(rest, /REDACTED/);
});

Deno.test("with labelled values every line is held until it ends", () => {
  const redactor = new StreamRedactor(createGate({ labelled: { "code-name": "Blue Falcon" } }));
  assert.equal(redactor.push("The project Blue "), "");
  assert.equal(redactor.push("Falcon ships\n"), "The project [REDACTED:code-name] ships\n");
});
