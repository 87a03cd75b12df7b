// Tests for lib/gate/secrets.ts: secret shapes and near misses, redaction of a text cut in pieces,
// markers, and inputs built to be slow. Every secret is fake and assembled at run time (the table
// of shapes is in `_secret_shapes.ts`).

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createGate, redactorOf } from "../../../lib/gate/gate.ts";
import {
  holdsRedaction,
  mapStrings,
  REDACTION_OVERLAP,
  redactSecrets,
  SECRET_LABELS,
} from "../../../lib/gate/secrets.ts";
import { fake, fakeAwsLetters, fakeHex, fakeUpper, SECRET_SHAPES } from "../_secret_shapes.ts";

const SECRETS = SECRET_SHAPES;

const NEAR_MISSES: [name: string, text: string][] = [
  ["sk- inside a word", "we ran task-sk-learn, not sk-learn"],
  ["sk- with a long body without digits", "sk-" + "this-is-a-long-kebab-case-identifier"],
  ["ghp_ too short", "ghp" + "_" + fake(20)],
  ["AKIA with too few characters", "AKIA" + "1234 is not a key"],
  ["AKIA followed by lower case", "AKIA" + "abcdefghijklmnop"],
  ["a git SHA", "commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b"],
  ["a UUID", "session 123e4567-e89b-12d3-a456-426614174000"],
  [
    "a base64 image data URL with text around it",
    "see ![x](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" +
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==) here",
  ],
  [
    "a public key block",
    "-----BEGIN PUBLIC KEY-----\nMIIB" + fake(60) + "\n-----END PUBLIC KEY-----",
  ],
  ["a private key header named in prose", "a file starting -----BEGIN RSA PRIVATE KEY----- is"],
  ["the word password alone", "what is the password"],
  ["password reset flow", "the password reset flow sends an email"],
  ["Bearer in a sentence", "Bearer tokens are described in RFC 6750"],
  ["Bearer with a long word", "Bearer internationalization"],
  ["token= with an empty value", "token= and token=''"],
  ["code reading a password", "const password = getPassword();"],
  ["a typed parameter", "function login(user: string, password: string) {"],
  ["a value from the environment", "token: process.env.GITHUB_TOKEN,"],
  ["a template placeholder", "password=${DB_PASSWORD} token: <your-token> secret: '***'"],
  ["a keyword argument passing a variable", "connect(password=password, api_key=user_key)"],
  ["a comparison", 'if password == "" {'],
  ["None and null", 'token = None\n"token": null'],
  ["prose after a colon", "Password: must be at least 8 characters long"],
  ["token counts", "max_tokens=4096 and input_tokens: 12"],
  ["an ordinary URL with a port", "https://example.com:8080/a:b@c"],
  ["a Slack-like word without digits", "xoxb" + "-not-a-real-token-at-all"],
];

Deno.test("redact() replaces each secret shape with its label and keeps the text around it", async (t) => {
  const gate = createGate();
  for (const c of SECRETS) {
    await t.step(c.name, () => {
      const r = gate.redact(c.before + c.secret + c.after);
      assert.equal(r.text, `${c.before}[REDACTED:${c.label}]${c.after}`);
      assert.deepEqual(r.labels, [c.label]);
      assert.deepEqual(r.counts, { [c.label]: 1 });
    });
  }
});

Deno.test("redact() finds each shape in raw JSON bytes, after an escaped line break", async (t) => {
  const gate = createGate();
  for (const c of SECRETS) {
    await t.step(c.name, () => {
      const raw = JSON.stringify({ content: `first line\n${c.before}${c.secret}${c.after}\nlast` });
      const r = gate.redact(raw);
      assert.ok(!r.text.includes(JSON.stringify(c.secret).slice(1, -1)), r.text);
      assert.ok(r.labels.length > 0, r.text);
    });
  }
});

Deno.test("the table has at least 40 shapes and a shape for every built-in label", () => {
  assert.ok(SECRET_SHAPES.length >= 40, `${SECRET_SHAPES.length} shapes`);
  const used = new Set(SECRET_SHAPES.map((c) => c.label));
  assert.deepEqual([...used].filter((l) => !(SECRET_LABELS as readonly string[]).includes(l)), []);
  assert.deepEqual(SECRET_LABELS.filter((l) => !used.has(l)), []);
  assert.equal(new Set(SECRET_SHAPES.map((c) => c.name)).size, SECRET_SHAPES.length);
});

Deno.test("redact() leaves each shape's near miss unchanged", async (t) => {
  const gate = createGate();
  for (const c of SECRETS) {
    await t.step(c.name, () => {
      const r = gate.redact(c.nearMiss);
      assert.equal(r.text, c.nearMiss);
      assert.deepEqual(r.labels, []);
    });
  }
});

Deno.test("redact() leaves near misses unchanged", async (t) => {
  const gate = createGate();
  for (const [name, text] of NEAR_MISSES) {
    await t.step(name, () => {
      const r = gate.redact(text);
      assert.equal(r.text, text);
      assert.deepEqual(r.labels, []);
    });
  }
});

Deno.test("redacting redacted text changes nothing", () => {
  const gate = createGate({ labelled: { "red": "REDACTED", "work": "Fake-Work-Value-1" } });
  const texts = [
    ...SECRETS.map((c) => c.before + c.secret + c.after),
    "password=[REDACTED:password] and postgres://u:[REDACTED:password]@h",
    "Fake-Work-Value-1 REDACTED",
  ];
  for (const text of texts) {
    const once = gate.redactText(text);
    assert.equal(gate.redactText(once), once, `not idempotent: ${once}`);
  }
  assert.equal(gate.redactText("[REDACTED:openai-key]"), "[REDACTED:openai-key]");
});

Deno.test("redact() finds several secrets in one text and counts them per label", () => {
  const gate = createGate();
  const a = "ghp" + "_" + fake(36);
  const b = "ghp" + "_" + fake(40, "Zz9Yy8Xx7");
  const key = "sk-" + "proj-" + fake(80);
  const text = `one ${a}, two ${b}\nOPENAI_API_KEY=${key}\npassword=hunter2`;
  const r = gate.redact(text);
  assert.equal(
    r.text,
    "one [REDACTED:github-token], two [REDACTED:github-token]\n" +
      "OPENAI_API_KEY=[REDACTED:openai-key]\npassword=[REDACTED:password]",
  );
  assert.deepEqual(r.labels, ["github-token", "openai-key", "password"]);
  assert.deepEqual(r.counts, { "github-token": 2, "openai-key": 1, "password": 1 });
});

Deno.test("a private key without an END line is redacted to the end of the text", () => {
  const gate = createGate();
  const text = "before\n-----BEGIN EC PRIVATE KEY-----\nMHcC" + fake(64) + "\n" + fake(30);
  assert.equal(gate.redactText(text), "before\n[REDACTED:private-key]");
  const escaped = 'x "-----BEGIN PRIVATE KEY-----\\nMIIE' + fake(64) + "\\n" + fake(20);
  assert.equal(gate.redactText(escaped), 'x "[REDACTED:private-key]');
});

Deno.test("redactBetween() redacts each shape cut in two, in both pieces", async (t) => {
  const gate = createGate();
  for (const c of SECRETS) {
    await t.step(c.name, () => {
      const cut = Math.floor(c.secret.length / 2);
      const head = c.before + c.secret.slice(0, cut);
      const tail = c.secret.slice(cut) + c.after;
      assert.equal(gate.redactBetween("", head, tail), `${c.before}[REDACTED:${c.label}]`);
      assert.equal(gate.redactBetween(head, tail, ""), `[REDACTED:${c.label}]${c.after}`);
      // Alone, each piece may show its half: that is what the neighbours are for.
      assert.equal(redactSecrets.between("", head, tail), `${c.before}[REDACTED:${c.label}]`);
    });
  }
});

Deno.test("redactBetween() keeps text outside the piece out of the result", () => {
  const gate = createGate();
  const key = "sk-" + "proj-" + fake(70);
  assert.equal(gate.redactBetween(`a ${key} b `, "middle", ` c ${key}`), "middle");
  assert.equal(gate.redactBetween("", "", key), "");
  assert.equal(
    gate.redactBetween("password=", "hunter2 and more", ""),
    "[REDACTED:password] and more",
  );
  const redactor = redactorOf(gate);
  assert.equal(redactor(`x ${key}`), "x [REDACTED:openai-key]");
  assert.equal(redactor.between("x sk-", "proj-" + fake(70), ""), "[REDACTED:openai-key]");
  assert.throws(() => gate.redactBetween("", 42 as unknown as string, ""), TypeError);
});

Deno.test("a private key longer than the overlap is hidden in every piece of its text", () => {
  const gate = createGate();
  const lines = Array.from({ length: 320 }, (_, i) => fake(64, `Ke${i % 10}yMaterial`));
  const key = `-----BEGIN RSA PRIVATE KEY-----\n${lines.join("\n")}\n-----END RSA PRIVATE KEY-----`;
  const text = `before ${key} after`;
  assert.ok(key.length > 2 * REDACTION_OVERLAP);
  const piece = 8000;
  const shown: string[] = [];
  for (let at = 0; at < text.length; at += piece) {
    shown.push(gate.redactBetween(
      text.slice(Math.max(0, at - REDACTION_OVERLAP), at),
      text.slice(at, at + piece),
      text.slice(at + piece, at + piece + REDACTION_OVERLAP),
    ));
  }
  const joined = shown.join("|");
  for (const line of new Set(lines)) assert.ok(!joined.includes(line.slice(0, 16)), line);
  assert.ok(shown[0]!.startsWith("before [REDACTED:private-key]"));
  assert.ok(shown.at(-1)!.endsWith("[REDACTED:private-key] after"));
});

Deno.test("an AWS secret key is redacted after any name that says a secret, a SHA-1 is not", async (t) => {
  const letters = fakeAwsLetters(40);
  const mixed = fake(36) + "/+Ab";
  await t.step("40 characters shaped as an AWS secret key, after each name and separator", () => {
    const cases: [text: string, redacted: string][] = [
      [`aws-secret ${letters}`, "aws-secret [REDACTED:aws-secret-key]"],
      [`aws-secret-key: ${letters}`, "aws-secret-key: [REDACTED:aws-secret-key]"],
      [`AWS_SECRET=${letters}`, "AWS_SECRET=[REDACTED:aws-secret-key]"],
      [`export AWS_SECRET_KEY=${letters}`, "export AWS_SECRET_KEY=[REDACTED:aws-secret-key]"],
      [`awsSecretAccessKey: ${letters}`, "awsSecretAccessKey: [REDACTED:aws-secret-key]"],
      [`--aws-secret ${letters} now`, "--aws-secret [REDACTED:aws-secret-key] now"],
      [`AWS secret key ${mixed}`, "AWS secret key [REDACTED:aws-secret-key]"],
      [`"Secret Access Key": "${letters}"`, '"Secret Access Key": "[REDACTED:aws-secret-key]"'],
      [`secret ${mixed}`, "secret [REDACTED:secret]"],
      [`secret: ${letters}`, "secret: [REDACTED:secret]"],
      [`SECRET_KEY=${letters}`, "SECRET_KEY=[REDACTED:secret]"],
      [`  secret_key: ${letters} # prod`, "  secret_key: [REDACTED:secret] # prod"],
      [`client_secret ${mixed}`, "client_secret [REDACTED:secret]"],
    ];
    for (const [text, redacted] of cases) assert.equal(redactSecrets(text), redacted, text);
  });
  await t.step("a SHA-1, an upper-case id, an identifier or prose stays", () => {
    const texts = [
      `secret ${fakeHex(40)}`,
      `aws-secret ${fakeHex(40)} is the commit that added it`,
      `SECRET_KEY ${fakeUpper(40)}`,
      "SECRET_KEY=getSecretAccessKeyFromTheEnvironment",
      "the secret getSecretAccessKeyFromTheEnvironmentNow",
      `the secret of ${letters}`,
      `secret ${letters.toLowerCase()}`,
      `secret_key=${letters}x`,
      "secret key = abc123def",
      "aws configure get aws_secret_access_key --profile dev",
    ];
    for (const text of texts) assert.equal(redactSecrets(text), text, text);
  });
});

Deno.test("redactSecrets() redacts built-in shapes without a gate", () => {
  assert.equal(redactSecrets("password=hunter2"), "password=[REDACTED:password]");
});

Deno.test("redact() copes with inputs built to make a regex backtrack", () => {
  const gate = createGate();
  const inputs = [
    "token=".repeat(50_000),
    "password='".repeat(30_000),
    "-----BEGIN RSA PRIVATE KEY----- ".repeat(10_000),
    " eyJ" + "a".repeat(300_000),
    "Bearer ".repeat(50_000),
    "A".repeat(200_000) + "\n-----END PRIVATE KEY-----".repeat(20_000),
    ("0123456789abcdef".repeat(2) + "-").repeat(50_000),
    "npm_".repeat(100_000) + "abc8Q~".repeat(50_000),
    "aws_secret_access_key ".repeat(40_000),
    "secret ".repeat(40_000),
    "Secret Access Key [None]".repeat(20_000),
    `secret ${"A".repeat(39)}`.repeat(10_000),
  ];
  for (const text of inputs) {
    // Not a timing test: it only guards against a pattern that would hang.
    assert.equal(typeof gate.redactText(text), "string");
  }
});

const CORPUS = fileURLToPath(new URL("../../../../shared/corpus", import.meta.url));
const corpusExists = (() => {
  try {
    return Deno.statSync(CORPUS).isDirectory;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "redactText() leaves the real transcript samples unchanged",
  ignore: !corpusExists,
  fn() {
    const gate = createGate();
    const walk = (dir: string): string[] =>
      [...Deno.readDirSync(dir)].flatMap((e) =>
        e.isDirectory
          ? walk(join(dir, e.name))
          : e.name.endsWith(".jsonl")
          ? [join(dir, e.name)]
          : []
      );
    const files = walk(CORPUS);
    assert.ok(files.length > 0);
    for (const file of files) {
      const text = Deno.readTextFileSync(file);
      assert.equal(gate.redactText(text), text, file);
    }
  },
});

Deno.test("redact() finds each shape with a zero-width character inside, as a reader sees it", async (t) => {
  const gate = createGate({ labelled: { codename: "heliotrope-vault" } });
  for (const c of SECRETS) {
    await t.step(c.name, () => {
      // Inside the secret, past its first characters: where a prefix or a shape would break.
      const at = Math.min(6, c.secret.length - 1);
      for (const invisible of ["\u200b", "\u2060\u200c", "\u00ad"]) {
        const hidden = c.secret.slice(0, at) + invisible + c.secret.slice(at);
        const r = gate.redact(c.before + hidden + c.after);
        assert.equal(
          r.text,
          `${c.before}[REDACTED:${c.label}]${c.after}`,
          JSON.stringify(invisible),
        );
      }
    });
  }
  await t.step("a labelled value, and the text around it kept as it was", () => {
    const text = "a\u200bb heliotrope\u200b-vault c\u200bd";
    assert.equal(gate.redactText(text), "a\u200bb [REDACTED:codename] c\u200bd");
  });
});

Deno.test("holdsRedaction() sees a marker on every call, and only a marker", () => {
  const shown = "/src/[REDACTED:github-token]/app";
  assert.ok(holdsRedaction(shown));
  assert.ok(holdsRedaction(shown), "the same text again");
  assert.ok(holdsRedaction("[REDACTED:a]"));
  assert.ok(!holdsRedaction("/src/app"));
  assert.ok(!holdsRedaction("[REDACTED:bad label]"));
});

Deno.test("mapStrings() passes every string of a JSON-like value and copies it", () => {
  const value = { a: "x", list: ["y", 1, null], nested: { b: "z" }, when: new Date(0) };
  const keys: (string | undefined)[] = [];
  const out = mapStrings(value, (s, key) => {
    keys.push(key);
    return s.toUpperCase();
  });
  assert.deepEqual(out, { a: "X", list: ["Y", 1, null], nested: { b: "Z" }, when: value.when });
  assert.equal(value.a, "x", "the input is not modified");
  assert.equal(out.when, value.when, "an object that is not plain is kept as it is");
  assert.deepEqual(keys, ["a", undefined, "b"]);
});
