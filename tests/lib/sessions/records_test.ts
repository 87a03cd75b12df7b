// Tests for lib/sessions/records.ts: records and trails on disk, owner-only and atomic, listed
// newest first, unknown fields kept, corrupt records left out and reported, forks and renames.

import assert from "node:assert/strict";
import { join } from "node:path";
import { dataPaths, projectKey } from "../../../lib/paths.ts";
import { createGate } from "../../../lib/gate/gate.ts";
import {
  corruptRecords,
  newRecord,
  type SessionRecord,
  SessionStore,
  spendTotal,
} from "../../../lib/sessions/records.ts";
import { envFrom } from "../../../lib/env.ts";
import { removeDir, tempDir } from "../../_helpers.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const T0 = Date.parse("2026-03-01T10:00:00Z");

async function withStore(
  fn: (store: SessionStore, root: string) => Promise<void> | void,
): Promise<void> {
  const dir = await tempDir();
  try {
    const paths = dataPaths(join(dir, "data"), envFrom({}));
    await fn(new SessionStore(paths), paths.root);
  } finally {
    await removeDir(dir);
  }
}

function sampleRecord(project = "/work/alpha", at = T0): SessionRecord {
  const record = newRecord({
    cwd: project,
    project,
    branch: "main",
    build: "0.1.0",
    now: at,
    title: "Why is the build slow",
  });
  record.messages.push(
    { role: "user", content: "Why is the build slow?", at: new Date(at).toISOString(), turn: 1 },
    { role: "assistant", content: "The cache is cold.", turn: 1 },
  );
  record.spend.turns.push({
    turn: 1,
    at: new Date(at).toISOString(),
    outcome: "ok",
    model: "asked",
    answeredBy: "served",
    tokensIn: 12,
    tokensOut: 5,
    wallMs: 100,
    waitingModelMs: 80,
    runningToolsMs: 0,
    waitingUserMs: 0,
    otherMs: 20,
  });
  record.spend.total = spendTotal(record.spend.turns);
  record.trust.allowedCommands.push("deno test");
  record.btw.push({ question: "what is a cold cache?", answer: "an empty one" });
  return record;
}

Deno.test("a saved record reads back equal, owner-only, under sessions/<project-key>/", async () => {
  await withStore((store, root) => {
    const record = sampleRecord();
    assert.match(record.id, UUID_V4);
    assert.equal(store.save(record), true);
    const key = projectKey("/work/alpha");
    assert.deepEqual(store.read(key, record.id), record);
    const path = join(root, "sessions", key, `${record.id}.json`);
    assert.equal(store.recordPath(record), path);
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(join(root, "sessions", key)).mode! & 0o777, 0o700);
    assert.equal(Deno.statSync(join(root, "sessions")).mode! & 0o777, 0o700);
    // No temp files are left beside it.
    assert.deepEqual([...Deno.readDirSync(join(root, "sessions", key))].map((e) => e.name), [
      `${record.id}.json`,
    ]);
  });
});

Deno.test("trail lines are appended one JSON object per line, 0600", async () => {
  await withStore((store) => {
    const record = sampleRecord();
    store.save(record);
    const entry = { gates: ["secrets" as const], redacted: { "openai-key": 1 } };
    store.appendTrail(record, [{ at: record.createdAt, event: "turn", turn: 1, disk: entry }]);
    store.appendTrail(record, [{ at: record.updatedAt, event: "undo", turn: 1 }]);
    const text = new TextDecoder().decode(store.readTrail(record));
    const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.event), ["turn", "undo"]);
    assert.deepEqual(lines[0].disk, entry);
    assert.equal(Deno.statSync(store.trailPath(record)).mode! & 0o777, 0o600);
  });
});

Deno.test("list() sorts by updatedAt, newest first, not by id or creation", async () => {
  await withStore((store) => {
    const made = [3, 1, 2].map((hours) => {
      const r = sampleRecord("/work/alpha", T0);
      r.updatedAt = new Date(T0 + hours * 3600_000).toISOString();
      store.save(r);
      return r;
    });
    const listed = store.list(projectKey("/work/alpha")).sessions.map((r) => r.id);
    assert.deepEqual(listed, [made[0]!.id, made[2]!.id, made[1]!.id]);
  });
});

Deno.test("unknown fields, top-level and nested, survive a rewrite", async () => {
  await withStore((store) => {
    const record = sampleRecord();
    const newer = {
      ...record,
      version: 2,
      futureField: { keep: [1, 2, 3] },
      messages: record.messages.map((m) => ({ ...m, tokens: 7 })),
      trust: { ...record.trust, scopes: ["src/"] },
    };
    store.save(newer as SessionRecord);
    const key = projectKey(record.project);
    const read = store.read(key, record.id);
    const renamed = store.rename(read, "A newer title", createGate(), T0 + 1000);
    const json = JSON.parse(Deno.readTextFileSync(store.recordPath(renamed)));
    assert.equal(json.title, "A newer title");
    assert.equal(json.version, 2);
    assert.deepEqual(json.futureField, { keep: [1, 2, 3] });
    assert.equal(json.messages[0].tokens, 7);
    assert.deepEqual(json.trust.scopes, ["src/"]);
  });
});

Deno.test("corrupt records are left out of lists and reported with the reason", async () => {
  await withStore((store, root) => {
    const good = sampleRecord();
    store.save(good);
    const key = projectKey(good.project);
    const dir = join(root, "sessions", key);
    const badJson = "0f3c1d2e-4a5b-4c6d-8e7f-901234567890";
    const badShape = "1f3c1d2e-4a5b-4c6d-8e7f-901234567890";
    const wrongId = "2f3c1d2e-4a5b-4c6d-8e7f-901234567890";
    Deno.writeTextFileSync(join(dir, `${badJson}.json`), '{"version": 1, "id": ');
    Deno.writeTextFileSync(
      join(dir, `${badShape}.json`),
      JSON.stringify({ ...good, id: badShape, messages: [{ role: "wizard", content: 1 }] }),
    );
    Deno.writeTextFileSync(join(dir, `${wrongId}.json`), JSON.stringify(good));
    const { sessions, corrupt } = store.list(key);
    assert.deepEqual(sessions.map((s) => s.id), [good.id]);
    assert.deepEqual(corrupt.map((c) => c.id), [badJson, badShape, wrongId]);
    assert.match(corrupt[0]!.reason, /^it is not valid JSON: /);
    assert.match(corrupt[1]!.reason, /"messages\[0\]\.role"/);
    assert.match(corrupt[2]!.reason, /does not match its file name/);
    // What `status` will call: every project, or one.
    const paths = { root, sessions: join(root, "sessions") };
    assert.deepEqual(corruptRecords(paths).map((c) => c.id), [badJson, badShape, wrongId]);
    assert.deepEqual(corruptRecords(paths, "other-000000000000"), []);
    assert.equal(corruptRecords(paths)[0]!.path, join(dir, `${badJson}.json`));
  });
});

Deno.test("fork copies conversation, spend and trail into a new id; the source stays byte-identical", async () => {
  await withStore((store) => {
    const source = sampleRecord();
    store.save(source);
    store.appendTrail(source, [{
      at: source.createdAt,
      event: "turn",
      turn: 1,
      disk: { gates: ["secrets"], redacted: {} },
    }]);
    const recordBefore = Deno.readFileSync(store.recordPath(source));
    const trailBefore = Deno.readFileSync(store.trailPath(source));

    const later = T0 + 86400_000;
    const fork = store.fork(source, later);

    assert.deepEqual(Deno.readFileSync(store.recordPath(source)), recordBefore);
    assert.deepEqual(Deno.readFileSync(store.trailPath(source)), trailBefore);
    assert.match(fork.id, UUID_V4);
    assert.notEqual(fork.id, source.id);
    assert.equal(fork.title, "Why is the build slow (fork)");
    assert.equal(fork.startedAt, new Date(later).toISOString());
    assert.notEqual(fork.startedAt, source.startedAt);
    assert.equal(fork.forkedFrom, `logbook:${source.id}`);
    const onDisk = store.read(projectKey(source.project), fork.id);
    assert.deepEqual(onDisk.messages, source.messages);
    assert.deepEqual(onDisk.spend, source.spend);
    assert.deepEqual(onDisk.trust, source.trust);
    assert.deepEqual(onDisk.btw, source.btw);
    assert.deepEqual(Deno.readFileSync(store.trailPath(fork)), trailBefore);
  });
});

Deno.test("fork refuses a manifest run; rename refuses an empty title", async () => {
  await withStore((store) => {
    const manifest = sampleRecord();
    manifest.kind = "manifest";
    manifest.messages = [];
    store.save(manifest);
    assert.throws(() => store.fork(manifest, T0), /manifest run, which has no conversation/);
    assert.throws(
      () => store.rename(manifest, "  \n ", createGate(), T0),
      (err) => err instanceof RangeError && /the title is empty/.test(err.message),
    );
  });
});

Deno.test("rename passes the title through the gate before writing it", async () => {
  await withStore((store) => {
    const record = sampleRecord();
    store.save(record);
    const key = "sk-" + "Fa4Ke7Xy2Qz9Lm3Np8Rt5Vw6".repeat(2);
    const renamed = store.rename(record, `deploy with ${key}`, createGate(), T0 + 5);
    assert.equal(renamed.title, "deploy with [REDACTED:openai-key]");
    assert.ok(!Deno.readTextFileSync(store.recordPath(record)).includes(key));
    const trail = new TextDecoder().decode(store.readTrail(record));
    assert.match(trail, /"event":"rename"/);
    assert.ok(!trail.includes("deploy"));
  });
});

Deno.test("an incognito store writes nothing, not even its directories", async () => {
  const dir = await tempDir();
  try {
    const paths = dataPaths(join(dir, "data"), envFrom({}));
    const store = new SessionStore(paths, { incognito: true });
    const record = sampleRecord();
    assert.equal(store.save(record), false);
    assert.equal(store.appendTrail(record, [{ at: record.createdAt, event: "turn" }]), false);
    const fork = store.fork(record, T0 + 1);
    assert.match(fork.id, UUID_V4);
    store.rename(record, "x", createGate(), T0);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    assert.throws(() => {
      // The flag cannot be turned off once the store exists.
      (store as { incognito: boolean }).incognito = false;
    }, TypeError);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("/a/b, /a-b and /a b keep their sessions apart", async () => {
  await withStore((store) => {
    const ids = new Map<string, string>();
    for (const path of ["/a/b", "/a-b", "/a b"]) {
      const r = sampleRecord(path);
      store.save(r);
      ids.set(path, r.id);
    }
    const keys = new Set([...ids.keys()].map(projectKey));
    assert.equal(keys.size, 3);
    for (const [path, id] of ids) {
      assert.deepEqual(store.list(projectKey(path)).sessions.map((s) => s.id), [id]);
    }
  });
});
