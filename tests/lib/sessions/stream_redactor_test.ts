// Tests for lib/sessions/stream_redactor.ts: a streamed reply shown through the gate.

import assert from "node:assert/strict";
import { createGate } from "../../../lib/gate/gate.ts";
import { StreamRedactor } from "../../../lib/sessions/stream_redactor.ts";
import { fake, SECRET_SHAPES } from "../_secret_shapes.ts";

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

Deno.test("prose with quotes, colons, dashes, slashes and long words is shown word by word", () => {
  const redactor = new StreamRedactor(createGate());
  const words = [
    "Don't ",
    "worry: ",
    "it's ",
    "a ",
    "well-known ",
    '"quirk" ',
    "of ",
    "/usr/local/bin ",
    "and ",
    "internationalization ",
    "(see ",
    "`fmt`) ",
    "— ",
    "<b>fine</b> ",
  ];
  // Each word comes out, through the gate, as soon as the space that ends it arrives.
  let shown = "";
  for (const word of words) {
    assert.equal(redactor.push(word.slice(0, -1)), "", `"${word}" waits for its end`);
    const out = redactor.push(" ");
    assert.equal(out, word, `"${word}" shown once it ends`);
    shown += out;
  }
  shown += redactor.push("\n") + redactor.flush();
  assert.equal(shown, words.join("").trimEnd() + " \n");
});

Deno.test("from a word that may begin a secret's context, the rest of the line is held", () => {
  const redactor = new StreamRedactor(createGate());
  assert.equal(redactor.push("Run it with --password "), "Run it with ");
  assert.equal(redactor.push("hunter2hunter2 "), "");
  assert.equal(redactor.push("then go on "), "");
  const end = redactor.push("\nNext ") + redactor.flush();
  assert.equal(end, "--password [REDACTED:password] then go on \nNext ");
});

Deno.test("lines that may be a key's body are held until a line that is not", () => {
  const redactor = new StreamRedactor(createGate());
  const body = fake(64);
  assert.equal(redactor.push(`${body}\n`), "");
  assert.equal(redactor.push(`${fake(40)}\n`), "");
  assert.equal(
    redactor.push("-----END PRIVATE KEY-----\nmore "),
    "[REDACTED:private-key]\nmore ",
  );
  // Base64 followed by prose was no key: it is shown with the prose.
  const blob = new StreamRedactor(createGate());
  assert.equal(blob.push(`${body}\n`), "");
  assert.equal(blob.push("that was the digest\n"), `${body}\nthat was the digest\n`);
});

Deno.test("no secret shape is shown unredacted, whatever the pieces it is streamed in", async (t) => {
  for (const shape of SECRET_SHAPES) {
    await t.step(shape.name, () => {
      const text = `${shape.before}${shape.secret}${shape.after}`;
      const whole = createGate().redact(text, { destination: "display" }).text;
      assert.ok(!whole.includes(shape.secret), "the gate redacts it whole");
      const streamed = (pieces: string[]) => {
        const redactor = new StreamRedactor(createGate());
        return pieces.map((p) => redactor.push(p)).join("") + redactor.flush();
      };
      // One piece per character: every boundary at once.
      assert.equal(streamed([...text]), whole, "streamed a character at a time");
      for (let i = 1; i < text.length; i++) {
        const shown = streamed([text.slice(0, i), text.slice(i)]);
        assert.equal(shown, whole, `split at ${i}: ${JSON.stringify(text.slice(0, i))}`);
      }
    });
  }
});
