// Tests for lib/sessions/model.ts: the openai client over real loopback HTTP, streamed and not,
// the model that answered, usage, and clear errors (never the key) when the endpoint is down or
// refuses.

import assert from "node:assert/strict";
import { createModelClient, ModelError, publicEndpoint } from "../../../lib/sessions/model.ts";
import { ANSWERED_BY, startOpenAiServer } from "../../_openai_server.ts";

const KEY = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);

Deno.test("a streamed completion over loopback HTTP: text, usage and the model that answered", async () => {
  const server = startOpenAiServer({
    reply: () => "Three words here, and more pieces after them.",
  });
  try {
    const model = createModelClient({ baseUrl: server.baseUrl, model: "asked-for-model" });
    const pieces: string[] = [];
    const done = await model.complete([{ role: "user", content: "hello there" }], {
      onText: (d) => pieces.push(d),
    });
    assert.equal(done.text, "Three words here, and more pieces after them.");
    assert.ok(pieces.length > 1, "the reply arrived in pieces");
    assert.equal(pieces.join(""), done.text);
    assert.equal(done.requested, "asked-for-model");
    assert.equal(done.answeredBy, ANSWERED_BY);
    assert.notEqual(done.answeredBy, done.requested);
    assert.equal(done.finishReason, "stop");
    assert.equal(done.tokensIn, 2);
    assert.equal(done.tokensOut, 8);
    const sent = server.requests[0]!.json;
    assert.equal(sent.stream, true);
    assert.equal(sent.model, "asked-for-model");
    assert.deepEqual(sent.messages, [{ role: "user", content: "hello there" }]);
  } finally {
    await server.close();
  }
});

Deno.test("a non-streamed completion over loopback HTTP", async () => {
  const server = startOpenAiServer({ answeredBy: "served-by-another-name" });
  try {
    const model = createModelClient({ baseUrl: server.baseUrl, model: "asked", apiKey: KEY });
    const done = await model.complete([{ role: "user", content: "ping" }], { stream: false });
    assert.equal(done.text, "Echo: ping");
    assert.equal(done.answeredBy, "served-by-another-name");
    assert.equal(done.tokensIn, 1);
    assert.equal(done.finishReason, "stop");
    assert.equal(server.requests[0]!.json.stream, false);
    assert.equal(server.requests[0]!.authorization, `Bearer ${KEY}`);
  } finally {
    await server.close();
  }
});

Deno.test("without a key no Authorization header is sent", async () => {
  const server = startOpenAiServer();
  try {
    const model = createModelClient({ baseUrl: server.baseUrl, model: "m" });
    await model.complete([{ role: "user", content: "x" }]);
    assert.equal(server.requests[0]!.authorization, null);
  } finally {
    await server.close();
  }
});

Deno.test("an unreachable endpoint is a clear ModelError without the key or a stack", async () => {
  const server = startOpenAiServer();
  const baseUrl = server.baseUrl;
  await server.close();
  const model = createModelClient({ baseUrl, model: "m", apiKey: KEY }, { maxRetries: 0 });
  const err = await model.complete([{ role: "user", content: "x" }]).catch((e) => e);
  assert.ok(err instanceof ModelError);
  assert.equal(err.reason, "unreachable");
  assert.equal(
    err.message,
    `Cannot reach the model endpoint "${baseUrl}": connection refused`,
  );
  assert.ok(!err.message.includes(KEY));
});

Deno.test("a refusal names the status and the endpoint's reason, with the key redacted", async () => {
  const server = startOpenAiServer({
    failWith: { status: 401, message: `Incorrect API key provided: ${KEY}` },
  });
  try {
    const model = createModelClient({ baseUrl: server.baseUrl, model: "m", apiKey: KEY }, {
      maxRetries: 0,
    });
    const err = await model.complete([{ role: "user", content: "x" }]).catch((e) => e);
    assert.ok(err instanceof ModelError);
    assert.equal(err.reason, "refused");
    assert.equal(err.status, 401);
    assert.match(err.message, /^The model endpoint "http:\/\/127\.0\.0\.1:\d+\/v1" refused/);
    assert.match(err.message, /\(HTTP 401\): Incorrect API key provided: \[REDACTED:/);
    assert.ok(!err.message.includes(KEY));
  } finally {
    await server.close();
  }
});

Deno.test("a request cancelled through its signal is a ModelError of reason cancelled", async () => {
  const server = startOpenAiServer({ reply: () => "x".repeat(400), pieceDelayMs: 20 });
  try {
    const model = createModelClient({ baseUrl: server.baseUrl, model: "m" }, { maxRetries: 0 });
    const controller = new AbortController();
    const err = await model.complete([{ role: "user", content: "x" }], {
      signal: controller.signal,
      onText: () => controller.abort(),
    }).catch((e) => e);
    assert.ok(err instanceof ModelError);
    assert.equal(err.reason, "cancelled");
  } finally {
    await server.close();
  }
});

Deno.test("missing settings are config errors before any request", () => {
  assert.throws(
    () => createModelClient({ baseUrl: "http://127.0.0.1:9/v1" }),
    (e) =>
      e instanceof ModelError && e.reason === "config" && /No model configured/.test(e.message),
  );
  assert.throws(
    () => createModelClient({ model: "m" }),
    (e) => e instanceof ModelError && /No model endpoint configured/.test(e.message),
  );
  assert.equal(publicEndpoint("http://user:pw@host:8080/v1/?key=1"), "http://host:8080/v1");
});
