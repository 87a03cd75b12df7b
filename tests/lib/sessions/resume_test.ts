// Tests for lib/sessions/resume.ts: picker rows from records and the history store (this project
// only, newest first), finding a row by id or prefix, native resume commands and manifest runs.

import assert from "node:assert/strict";
import { main as reindex } from "../../../commands/reindex.ts";
import { loadContext } from "../../../lib/context.ts";
import { createGate } from "../../../lib/gate/gate.ts";
import { projectOf } from "../../../lib/paths.ts";
import {
  commandLine,
  describeManifest,
  findRow,
  nativeCommand,
  newestContinuable,
  type PickerRow,
  pickerRows,
  resumeHint,
  rowLabel,
  withHistoryStore,
} from "../../../lib/sessions/resume.ts";
import { newRecord, type SessionRecord, SessionStore } from "../../../lib/sessions/records.ts";
import { captureIo } from "../../_helpers.ts";
import { world, writeClaudeSession } from "./_world.ts";

const gate = createGate();
const redact = (text: string) => gate.redactText(text);

function ownRecord(cwd: string, updatedAt: string, kind: "chat" | "manifest" = "chat") {
  const record: SessionRecord = newRecord({
    cwd,
    project: projectOf(cwd).root,
    branch: null,
    build: "0.1.0",
    now: Date.parse(updatedAt),
    kind,
    title: kind === "manifest" ? "Upgrade the linter" : "Own session",
  });
  if (kind === "chat") record.messages.push({ role: "user", content: "hello" });
  else {
    record.plan = {
      goal: "Upgrade the linter to v9",
      plan: ["bump the version", "fix the new warnings"],
      steps: [
        { step: "bump the version", status: "done", output: "package.json updated" },
        { step: "fix the new warnings", status: "failed", output: "3 left\nin lib/a.ts" },
      ],
    };
  }
  return record;
}

Deno.test("picker rows: this project's records and captured conversations, newest first", async () => {
  const { world: w, project, other } = await world();
  try {
    writeClaudeSession(
      w,
      project,
      "11111111-1111-4111-8111-111111111111",
      [["old q", "old a"]],
      "2026-01-01T00:00:00Z",
    );
    writeClaudeSession(
      w,
      project,
      "22222222-2222-4222-8222-222222222222",
      [["new q", "new a"]],
      "2026-06-01T00:00:00Z",
    );
    writeClaudeSession(w, other, "33333333-3333-4333-8333-333333333333", [["elsewhere", "a"]]);
    assert.equal(await reindex(["--quiet"], captureIo(), w.env), 0);
    const ctx = loadContext({ env: w.env });
    const sessions = new SessionStore(ctx.paths);
    const mine = ownRecord(project, "2026-03-01T00:00:00Z");
    const manifest = ownRecord(project, "2026-07-01T00:00:00Z", "manifest");
    sessions.save(mine);
    sessions.save(manifest);
    sessions.save(ownRecord(other, "2026-08-01T00:00:00Z"));

    const { rows, corrupt } = withHistoryStore(
      ctx,
      (store) => pickerRows(sessions, projectOf(project), { store, redact }),
    );
    assert.deepEqual(corrupt, []);
    assert.deepEqual(rows.map((r) => r.key), [
      `logbook:${manifest.id}`,
      "claude:22222222-2222-4222-8222-222222222222",
      `logbook:${mine.id}`,
      "claude:11111111-1111-4111-8111-111111111111",
    ]);
    assert.equal(rows[0]!.manifest, true);
    assert.equal(newestContinuable(rows)!.key, "claude:22222222-2222-4222-8222-222222222222");
    assert.equal(rows[1]!.cwd, project);
    assert.ok(rows[1]!.size > 0);
    const label = rowLabel(rows[0]!, Date.parse("2026-07-03T00:00:00Z"));
    assert.match(label, /^logbook +\[manifest\] Upgrade the linter +2 d ago +\d+(\.\d)? KB$/);
    // Without a history store, only logbook's own records.
    assert.deepEqual(
      pickerRows(sessions, projectOf(project), { redact }).rows.map((r) => r.agent),
      ["logbook", "logbook"],
    );
  } finally {
    await w.cleanup();
  }
});

Deno.test("picker rows show titles through the gate, so a cut label never shows part of a key", async () => {
  const { world: w, project } = await world();
  try {
    const aws = "AKIA" + "Z3MQW7Q2JX4HB7ND";
    const sid = "55555555-5555-4555-8555-555555555555";
    // The key straddles the label's 60-character cut.
    writeClaudeSession(w, project, sid, [[
      `${"x".repeat(44)} set AWS_ACCESS_KEY_ID=${aws} and deploy`,
      "ok",
    ]]);
    assert.equal(await reindex(["--quiet"], captureIo(), w.env), 0);
    const ctx = loadContext({ env: w.env });
    const sessions = new SessionStore(ctx.paths);
    const own = ownRecord(project, "2026-03-01T00:00:00Z");
    own.title = `deploy with ${aws}`;
    sessions.save(own);
    const { rows } = withHistoryStore(
      ctx,
      (store) => pickerRows(sessions, projectOf(project), { store, redact }),
    );
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.match(row.title, /\[REDACTED:/);
      assert.doesNotMatch(row.title, /AKIA/);
      assert.doesNotMatch(rowLabel(row, Date.now()), /AKIA/);
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("findRow takes a full key, a native id or a unique prefix, and says when it cannot", () => {
  const row = (key: string): PickerRow => ({
    key,
    agent: key.split(":")[0] as PickerRow["agent"],
    nativeId: key.split(":")[1]!,
    title: "t",
    updatedAt: 0,
    size: 0,
    messages: 0,
    cwd: "/w",
    manifest: false,
  });
  const rows = [
    row("logbook:3f2a0000-0000-4000-8000-000000000000"),
    row("claude:3f2b9999"),
    row("codex:abc"),
  ];
  assert.equal(findRow(rows, "claude:3f2b9999"), rows[1]);
  assert.equal(findRow(rows, "abc"), rows[2]);
  assert.equal(findRow(rows, "3f2a"), rows[0]);
  assert.equal(findRow(rows, "logbook:3f"), rows[0]);
  assert.throws(
    () => findRow(rows, "3f2"),
    /^SessionNotFoundError: Session id "3f2" is ambiguous: it matches "logbook:3f2a/,
  );
  assert.throws(() => findRow(rows, "zz"), {
    message: 'Cannot resume session "zz": no such id in this project',
  });
  assert.throws(() => findRow(rows, "zz", "fork"), /Cannot fork session "zz"/);
});

Deno.test("native commands: each agent's own resume, run in the session's directory", () => {
  const base = { title: "t", updatedAt: 0, size: 0, messages: 0, manifest: false };
  const cases: [PickerRow, string[]][] = [
    [{ ...base, key: "claude:s1", agent: "claude", nativeId: "s1", cwd: "/w/a b" }, [
      "claude",
      "--resume",
      "s1",
    ]],
    [{ ...base, key: "codex:u1", agent: "codex", nativeId: "u1", cwd: "/w/a b" }, [
      "codex",
      "resume",
      "u1",
    ]],
    [{ ...base, key: "opencode:ses_1", agent: "opencode", nativeId: "ses_1", cwd: "/w/a b" }, [
      "opencode",
      "--session",
      "ses_1",
    ]],
  ];
  for (const [row, argv] of cases) {
    const cmd = nativeCommand(row, "/fallback");
    assert.deepEqual([cmd.command, ...cmd.args], argv);
    assert.equal(cmd.cwd, "/w/a b");
    assert.equal(commandLine(cmd, "/w/a b"), argv.join(" "));
    assert.equal(commandLine(cmd, "/elsewhere"), `cd '/w/a b' && ${argv.join(" ")}`);
  }
  assert.equal(resumeHint("u-1", "/w", "/w"), "logbook resume u-1");
  assert.equal(resumeHint("u-1", "/w/it's", "/w"), `cd '/w/it'\\''s' && logbook resume u-1`);
});

/** What bash makes of the directory word of `line` (`cd <word> && …`), or null without bash. */
async function bashReads(line: string): Promise<string | null> {
  const word = line.slice("cd ".length, line.indexOf(" && "));
  try {
    const bash = await new Deno.Command("bash", {
      args: ["-c", `printf %s ${word}`],
      env: { LC_ALL: "C.UTF-8" },
      stdout: "piped",
    }).output();
    return new TextDecoder().decode(bash.stdout);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    console.log("skipped the read-back: bash is not installed");
    return null;
  }
}

Deno.test("a directory with control characters is quoted so bash reads it back exactly and nothing raw prints", async () => {
  const dir = "/w/it's \x1b]0;t\x07 \u009b2J \u202e\\x";
  const line = resumeHint("u-1", dir, "/w");
  assert.equal(line, `cd $'/w/it\\'s \\x1b]0;t\\x07 \\u009b2J \\u202e\\\\x' && logbook resume u-1`);
  // deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
  assert.doesNotMatch(line, /[\0-\x1f\x7f-\x9f\u202a-\u202e]/);
  assert.equal(await bashReads(line) ?? dir, dir);
});

Deno.test("a directory with invisible characters is quoted so bash reads it back and none prints raw", async () => {
  // The terminal filter would show them as escapes, which pasted in '…' name another directory.
  const dir = "/w/pro\u200bj \u200e\u{e0041}";
  const line = resumeHint("u-1", dir, "/w");
  assert.equal(line, `cd $'/w/pro\\u200bj \\u200e\\U000e0041' && logbook resume u-1`);
  assert.doesNotMatch(line, /\p{Default_Ignorable_Code_Point}/u);
  assert.equal(await bashReads(line) ?? dir, dir);
});

Deno.test("a manifest run is described by what it produced", () => {
  const text = describeManifest(ownRecord("/w", "2026-07-01T00:00:00Z", "manifest"));
  assert.match(text, /^Manifest run "Upgrade the linter" \(/);
  assert.match(text, /Goal: Upgrade the linter to v9/);
  assert.match(text, / {2}1\. bump the version\n {2}2\. fix the new warnings/);
  assert.match(text, / {2}2\. \[failed\] fix the new warnings\n {7}3 left\n {7}in lib\/a\.ts/);
});
