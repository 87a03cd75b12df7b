// Tests for lib/gate/gate.ts: labelled and allowed values, destinations, JSON-like values, what
// the gate shows of itself, and trail entries. Every secret is fake and assembled at run time.

import assert from "node:assert/strict";
import { createGate, type GateName, trailEntry } from "../../../lib/gate/gate.ts";
import { fake, fakeUpper } from "../_secret_shapes.ts";

Deno.test("labelled values and quarantined content cut in two are withheld in both pieces", () => {
  const value = "Fake-Labelled-Value-9";
  const page = "untrusted page text that is long";
  const gate = createGate({ labelled: { mine: value } });
  const ref = gate.quarantine.put(page);
  assert.equal(gate.redactBetween("", "a Fake-Lab", "elled-Value-9 b"), "a [REDACTED:mine]");
  assert.equal(gate.redactBetween("a Fake-Lab", "elled-Value-9 b", ""), "[REDACTED:mine] b");
  assert.equal(gate.redactBetween("", "see untrusted page", " text that is long."), `see ${ref}`);
  assert.equal(gate.redactBetween("see untrusted page", " text that is long.", ""), `${ref}.`);
});

Deno.test("labelled values are redacted under their label, regex characters and all", () => {
  const value = "p4ss.w(rd)*+?[x]$^|\\";
  const gate = createGate({ labelled: { "db-password": value, "host": "internal.example" } });
  const r = gate.redact(`connect to internal.example with ${value} now`);
  assert.equal(r.text, "connect to [REDACTED:host] with [REDACTED:db-password] now");
  assert.deepEqual(r.gates, ["secrets", "labelled", "quarantine"]);
  // Near versions of the value are left alone.
  assert.equal(gate.redactText("p4ss.w(rd)*+?[x]$^|"), "p4ss.w(rd)*+?[x]$^|");
  // Its JSON-escaped form, as in a tool call's arguments, is redacted too.
  const json = JSON.stringify({ arg: value });
  assert.equal(gate.redactText(json), '{"arg":"[REDACTED:db-password]"}');
});

Deno.test("a labelled value wins over a built-in label for the same text", () => {
  const key = "sk-" + "proj-" + fake(70);
  const gate = createGate({ labelled: { "work-openai": key } });
  assert.equal(gate.redactText(`OPENAI_API_KEY=${key}`), "OPENAI_API_KEY=[REDACTED:work-openai]");
});

Deno.test("allowed labels pass to a model only; disk and display always redact", () => {
  const db = "Fake-Db-Pass-42";
  const other = "Fake-Other-Value-7";
  const key = "sk-" + "proj-" + fake(70);
  const gate = createGate({
    labelled: { "db": db, "other": other, "work-openai": key },
    allowed: ["db", "work-openai"],
  });
  const text = `db ${db}, other ${other}, key ${key}`;

  const toModel = gate.redact(text, { destination: "model" });
  assert.equal(toModel.text, `db ${db}, other [REDACTED:other], key ${key}`);
  assert.deepEqual(toModel.counts, { other: 1 });
  assert.deepEqual(toModel.passed, { db: 1, "work-openai": 1 });
  assert.deepEqual(toModel.gates, ["secrets", "labelled"]);

  for (const destination of ["disk", "display"] as const) {
    const r = gate.redact(text, { destination });
    assert.equal(
      r.text,
      "db [REDACTED:db], other [REDACTED:other], key [REDACTED:work-openai]",
      destination,
    );
    assert.deepEqual(r.passed, {});
  }
  assert.equal(gate.redactText(text), gate.redact(text).text);
});

Deno.test("an allowed built-in label passes to a model, and only that label", () => {
  const gate = createGate({ allowed: ["aws-access-key-id"] });
  const id = "AKIA" + fakeUpper(16);
  const gh = "ghp" + "_" + fake(36);
  const r = gate.redact(`${id} ${gh}`, { destination: "model" });
  assert.equal(r.text, `${id} [REDACTED:github-token]`);
  assert.equal(gate.redact(`${id}`).text, "[REDACTED:aws-access-key-id]");
});

Deno.test("createGate() refuses bad labels, short values and unknown destinations", () => {
  assert.throws(() => createGate({ labelled: { "bad label": "long enough" } }), RangeError);
  assert.throws(() => createGate({ labelled: { ok: "abc" } }), {
    name: "RangeError",
    message: 'Invalid value for secret label "ok": expected at least 4 characters',
  });
  assert.throws(() => createGate({ allowed: ["a/b"] }), RangeError);
  const gate = createGate();
  assert.throws(
    () => gate.redact("x", { destination: "cloud" as unknown as "disk" }),
    RangeError,
  );
  assert.throws(() => gate.redactText(42 as unknown as string), TypeError);
});

Deno.test("redactValue() redacts every string of a message and values under secret keys", () => {
  const gate = createGate({ labelled: { work: "Fake-Work-Value-1" } });
  const message = {
    role: "assistant",
    content: [{ type: "text", text: "use Fake-Work-Value-1" }],
    tool: { name: "login", arguments: { user: "me", password: "hunter", apiKey: "" } },
    count: 3,
  };
  const r = gate.redactValue(message);
  assert.deepEqual(r.value, {
    role: "assistant",
    content: [{ type: "text", text: "use [REDACTED:work]" }],
    tool: { name: "login", arguments: { user: "me", password: "[REDACTED:password]", apiKey: "" } },
    count: 3,
  });
  assert.deepEqual(r.counts, { work: 1, password: 1 });
  assert.equal(message.tool.arguments.password, "hunter", "the input is not modified");
});

Deno.test("JSON.stringify of the gate or its quarantine holds no quarantined or labelled content", () => {
  const labelled = "Fake-Labelled-Value-9";
  const gate = createGate({ labelled: { mine: labelled }, allowed: ["mine"] });
  const content = "quarantined body that must never be written";
  gate.quarantine.put(content, { source: "https://example.com/private-path" });
  gate.quarantine.put("another");
  assert.equal(JSON.stringify(gate.quarantine), '{"refs":2}');
  const json = JSON.stringify({ gate, q: gate.quarantine });
  assert.ok(!json.includes(content));
  assert.ok(!json.includes("another"));
  assert.ok(!json.includes("private-path"));
  assert.ok(!json.includes(labelled));
  assert.deepEqual(JSON.parse(json).gate, {
    labelled: ["mine"],
    allowed: ["mine"],
    quarantine: { refs: 2 },
  });
  assert.ok(!Deno.inspect(gate).includes(labelled));
  assert.ok(!Deno.inspect(gate.quarantine).includes(content));
});

Deno.test("trailEntry() records gates, labels and counts but no planted value", () => {
  const planted = {
    openai: "sk-" + "proj-" + fake(70),
    password: "hunter2-fake",
    labelled: "Fake-Labelled-Value-9",
    page: "quarantined page body",
  };
  const gate = createGate({ labelled: { mine: planted.labelled }, allowed: ["mine"] });
  const ref = gate.quarantine.put(planted.page);
  const decisions = [
    gate.redact(`key ${planted.openai} password=${planted.password} ${planted.labelled}`),
    gate.redact(`${planted.labelled} and ${planted.page}`, { destination: "model" }),
    { gates: ["quarantine"] as GateName[], quarantined: [ref] },
  ];
  const entry = trailEntry(decisions);
  assert.deepEqual(entry, {
    gates: ["secrets", "labelled", "quarantine"],
    redacted: { mine: 1, "openai-key": 1, password: 1 },
    allowed: { mine: 1 },
    quarantined: 1,
  });
  const json = JSON.stringify(entry);
  for (const value of Object.values(planted)) assert.ok(!json.includes(value), value);
});

Deno.test("trailEntry() takes a single decision and drops anything that is not a label", () => {
  const secret = "hunter2 with spaces";
  const entry = trailEntry({
    gates: ["secrets", "bogus" as GateName],
    counts: { password: 2, [secret]: 1, zero: 0 },
  });
  assert.deepEqual(entry, { gates: ["secrets"], redacted: { "invalid-label": 1, password: 2 } });
  assert.ok(!JSON.stringify(entry).includes(secret));
  const empty = trailEntry(createGate().redact("nothing here", { destination: "model" }));
  assert.deepEqual(empty, { gates: ["secrets"], redacted: {} });
});
