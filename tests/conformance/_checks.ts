// What the conformance suite asserts of a capture, through logbook's own commands: every source
// byte-exact through `show --json`, every planted word found by `search`, no format drift, and
// the record types the agent wrote.

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { DatabaseSync } from "node:sqlite";
import { logbook, type Rig } from "./_rig.ts";

/** A conversation as `show --json` gives it, with all its records (every page). */
export interface Shown {
  conversation: {
    id: string;
    title: string | null;
    project: string | null;
    cwd: string | null;
    parent: string | null;
    subagent: boolean;
    archived: boolean;
    records: number;
    agentVersion: string | null;
  };
  records: { source: string; generation: number; offset: number; raw: string; kind: string }[];
}

/** Captures the rig's home (`reindex`); fails the test when reindex fails. */
export async function capture(rig: Rig): Promise<void> {
  const out = await logbook(rig, "reindex", []);
  assert.equal(out.code, 0, `reindex failed:\n${out.stdout}\n${out.stderr}`);
}

/** The history store's part of `status --json` (drift, empty sources, errors, counts). */
export async function status(rig: Rig): Promise<Record<string, unknown>> {
  const out = await logbook(rig, "status", ["--json"]);
  assert.equal(out.code, 0, `status failed: ${out.stderr}`);
  return JSON.parse(out.stdout).store ?? {};
}

/** Every page of `show <id> --json`. */
export async function show(rig: Rig, id: string): Promise<Shown> {
  let after: number | null = null;
  let shown: Shown | null = null;
  do {
    const args: string[] = [
      id,
      "--json",
      "--limit",
      "500",
      ...(after ? ["--after", String(after)] : []),
    ];
    const out = await logbook(rig, "show", args);
    assert.equal(out.code, 0, `show ${id} failed: ${out.stderr}`);
    const page = JSON.parse(out.stdout);
    if (!shown) shown = { conversation: page.conversation, records: [] };
    shown.records.push(...page.records);
    after = page.next;
  } while (after !== null);
  return shown!;
}

/**
 * Asserts that the records of every file source, concatenated in offset order (newest
 * generation), are the file's bytes exactly. Returns the files checked.
 */
export function assertFilesExact(shown: Shown[], files: string[]): string[] {
  const bySource = new Map<string, Map<number, Shown["records"]>>();
  for (const s of shown) {
    for (const r of s.records) {
      const generations = bySource.get(r.source) ?? new Map();
      generations.set(r.generation, [...(generations.get(r.generation) ?? []), r]);
      bySource.set(r.source, generations);
    }
  }
  for (const file of files) {
    const generations = bySource.get(file);
    assert.ok(generations, `no records from "${file}" were shown`);
    const newest = Math.max(...generations.keys());
    const records = [...generations.get(newest)!].sort((a, b) => a.offset - b.offset);
    const bytes = Buffer.concat(records.map((r) => Buffer.from(r.raw, "base64")));
    const disk = Deno.readFileSync(file);
    assert.equal(
      bytes.length,
      disk.length,
      `"${file}": ${bytes.length} bytes shown, ${disk.length} on disk`,
    );
    assert.ok(Buffer.from(disk).equals(bytes), `"${file}": the bytes shown differ from the file`);
  }
  return files;
}

/**
 * Asserts that every row of OpenCode's tables is a record, as the adapter defines raw: the row as
 * one JSON object (`table` and every column) and a newline, its `data` exactly as stored.
 */
export function assertRowsExact(shown: Shown[], database: string): number {
  const records = shown.flatMap((s) => s.records).filter((r) => r.source === database);
  const rows = new Map<string, Record<string, unknown>[]>();
  for (const r of records) {
    const text = Buffer.from(r.raw, "base64").toString("utf8");
    assert.ok(text.endsWith("\n"), "a row record ends with a newline");
    const row = JSON.parse(text) as Record<string, unknown>;
    const key = `${row.table}:${row.id}`;
    rows.set(key, [...(rows.get(key) ?? []), row]);
  }
  const db = new DatabaseSync(database, { readOnly: true });
  let checked = 0;
  try {
    for (const table of ["session", "message", "part"]) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
        const seen = rows.get(`${table}:${row.id}`);
        assert.ok(seen?.length, `${table} row "${row.id}" was not captured`);
        const newest = seen.at(-1)!;
        for (const [column, value] of Object.entries(row)) {
          assert.deepEqual(
            newest[column],
            typeof value === "bigint" ? Number(value) : value,
            `${table} "${row.id}" column ${column} differs`,
          );
        }
        checked++;
      }
    }
  } finally {
    db.close();
  }
  return checked;
}

/** Asserts `search <word>` finds the word in `conversation` (each word of `words`). */
export async function assertFound(
  rig: Rig,
  agent: string,
  words: Record<string, string>,
): Promise<void> {
  for (const [word, conversation] of Object.entries(words)) {
    const out = await logbook(rig, "search", [word, "--agent", agent, "--json", "--limit", "50"]);
    assert.equal(out.code, 0, `search "${word}" found nothing (exit ${out.code}): ${out.stderr}`);
    const hits = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(
      hits.some((h) => h.conversation === conversation),
      `search "${word}" found it in ${[...new Set(hits.map((h) => h.conversation))].join(", ")}, ` +
        `not in ${conversation}`,
    );
  }
}

/** Drift `status` reports for this agent: `version: category detail`. */
export function driftOf(state: Record<string, unknown>, agent: string): string[] {
  const drift = (state.drift ?? []) as {
    agent: string;
    version: string | null;
    category: string;
    detail: string;
    count: number;
  }[];
  return drift.filter((d) => d.agent === agent).map((d) =>
    `${d.version ?? "?"}: ${d.category} ${d.detail} (${d.count})`
  );
}

/** The record types in the captured bytes, as the agent names them. */
export function typesSeen(shown: Shown[], agent: string): string[] {
  const types = new Set<string>();
  for (const r of shown.flatMap((s) => s.records)) {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(Buffer.from(r.raw, "base64").toString("utf8"));
    } catch {
      continue; // One chunk of a long line.
    }
    const payload = value.payload as Record<string, unknown> | undefined;
    if (agent === "codex") {
      const inner = payload && typeof payload.type === "string" ? `/${payload.type}` : "";
      types.add(
        `${value.type}${value.type === "response_item" || value.type === "event_msg" ? inner : ""}`,
      );
    } else if (agent === "gemini") {
      // A chat log's line: a header, a message, a `$set` patch (by key) or a `$rewindTo`.
      const set = value.$set as Record<string, unknown> | undefined;
      types.add(
        typeof value.$rewindTo === "string"
          ? "$rewindTo"
          : typeof value.id === "string"
          ? `message/${value.type}`
          : set
          ? `$set/${Object.keys(set).sort().join("+")}`
          : `header/${value.kind}`,
      );
    } else if (agent === "continue") {
      // A Continue row: the session document, or a history item by its message's role.
      const item = value.item as { message?: { role?: unknown } } | undefined;
      types.add(value.continue === "item" ? `item/${item?.message?.role}` : String(value.continue));
    } else if (typeof value.cline === "string") {
      // A Cline row: its session document, or a message by its role.
      const message = value.message as { role?: unknown } | undefined;
      types.add(value.cline === "message" ? `message/${message?.role}` : String(value.cline));
    } else if (typeof value.table === "string") {
      // A row of an OpenCode-style database.
      const data = typeof value.data === "string" ? JSON.parse(value.data) : null;
      types.add(value.table === "part" ? `part/${data?.type}` : String(value.table));
    } else types.add(String(value.type));
  }
  return [...types].sort();
}
