// The benchmark's corpus generator is deterministic and writes valid transcripts where the agents
// keep them, and `bench/run.ts --json` runs end to end and prints exactly its figures. Shapes,
// not speeds: this is not a timed test.

import { ccusageDir } from "../../bench/_usage.ts";
import { canStat } from "../../lib/present.ts";
import { existsSync } from "node:fs";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { generateCorpus, SHARES } from "../../bench/corpus.ts";
import { FIGURE_KEYS } from "../../bench/_figures.ts";
import { upgradeUnavailable } from "../../bench/_upgrade.ts";
import { commitUnavailable } from "../../bench/_measure.ts";
import { RELEVANCE_BASELINE } from "../../bench/_relevance.ts";
import { which } from "../../bench/_util.ts";
import { runCapture } from "../../lib/capture/run.ts";
import { openStore, redactorFor } from "../../lib/context.ts";
import { ADAPTERS } from "../../lib/sources/mod.ts";
import { search } from "../../lib/store/search.ts";
import { removeDir, tempDir } from "../_helpers.ts";
import { benchJson } from "./_bench_json.ts";
import { corpusContext } from "./_corpus_context.ts";

const SIZE = 2_000_000;

/** Every file under `dir` with the SHA-256 of its bytes (the OpenCode database as its rows). */
function fingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (path: string) => {
    for (const entry of Deno.readDirSync(path)) {
      const full = join(path, entry.name);
      if (entry.isDirectory) walk(full);
      else if (entry.name === "manifest.json") {
        const manifest = JSON.parse(Deno.readTextFileSync(full));
        delete manifest.generationMs;
        out.set(relative(dir, full), JSON.stringify(manifest));
      } else if (entry.name.endsWith(".db")) {
        out.set(relative(dir, full), dbRows(full));
      } else {
        const hash = createHash("sha256").update(Deno.readFileSync(full)).digest("hex");
        out.set(relative(dir, full), hash);
      }
    }
  };
  walk(dir);
  return out;
}

function dbRows(path: string): string {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const hash = createHash("sha256");
    for (const table of ["project", "session", "message", "part"]) {
      for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY id`).all()) {
        hash.update(JSON.stringify(row));
      }
    }
    return hash.digest("hex");
  } finally {
    db.close();
  }
}

function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const entry of Deno.readDirSync(path)) {
      const full = join(path, entry.name);
      if (entry.isDirectory) walk(full);
      else if (entry.name.endsWith(".jsonl")) out.push(full);
    }
  };
  walk(dir);
  return out;
}

Deno.test("generateCorpus() writes the same valid corpus for the same seed, where capture finds it", async (t) => {
  const dir = await tempDir("logbook-bench-test-");
  try {
    const a = join(dir, "a");
    const b = join(dir, "b");
    const manifest = generateCorpus({ out: a, size: SIZE, seed: 11 });
    generateCorpus({ out: b, size: SIZE, seed: 11 });
    const rare = manifest.terms.filter((term) => term.class === "rare");

    await t.step("the same seed gives the same files and bytes", () => {
      const fa = fingerprint(a);
      assert.ok(fa.size > 10);
      assert.deepEqual(fingerprint(b), fa);
    });

    await t.step("files are laid out as the agents keep them, lines are JSON", () => {
      const claude = jsonlFiles(join(a, "claude", "projects"));
      const codex = [
        ...jsonlFiles(join(a, "codex", "sessions")),
        // A small corpus may archive nothing.
        ...(existsSync(join(a, "codex", "archived_sessions"))
          ? jsonlFiles(join(a, "codex", "archived_sessions"))
          : []),
      ];
      assert.ok(claude.length > 0 && codex.length > 0);
      for (const path of claude) {
        const rel = relative(join(a, "claude", "projects"), path);
        assert.match(
          rel,
          /^-[A-Za-z0-9-]+\/([0-9a-f-]{36}\.jsonl|[0-9a-f-]{36}\/subagents\/agent-a(compact-|side_question-)?[0-9a-f]{16}\.jsonl)$/,
        );
      }
      for (const path of codex) {
        const rel = relative(join(a, "codex"), path);
        assert.match(
          rel,
          /^(sessions\/\d{4}\/\d{2}\/\d{2}|archived_sessions)\/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9a-f-]{36}\.jsonl$/,
        );
      }
      for (const path of [...claude, ...codex]) {
        const text = Deno.readTextFileSync(path);
        assert.ok(text.endsWith("\n"));
        for (const line of text.slice(0, -1).split("\n")) {
          assert.equal(typeof JSON.parse(line).type, "string");
        }
      }
      // Persisted tool outputs beside their sessions, and the prompt history files.
      const sidecars = Deno.readDirSync(join(a, "claude", "projects")).toArray().flatMap((p) =>
        Deno.readDirSync(join(a, "claude", "projects", p.name)).toArray()
          .filter((e) => e.isDirectory)
          .flatMap((e) => {
            const folder = join(a, "claude", "projects", p.name, e.name, "tool-results");
            try {
              return Deno.readDirSync(folder).toArray().map((f) => join(folder, f.name));
            } catch {
              return [];
            }
          })
      );
      assert.equal(sidecars.length, manifest.sidecars.claude);
      for (const path of sidecars) assert.match(path, /\/tool-results\/b[0-9a-f]{8}\.txt$/);
      for (const [agent, field] of [["claude", "display"], ["codex", "text"]] as const) {
        const lines = Deno.readTextFileSync(join(a, agent, "history.jsonl")).split("\n");
        assert.equal(lines.pop(), "");
        assert.equal(lines.length, manifest.historyPrompts[agent]);
        for (const line of lines) assert.equal(typeof JSON.parse(line)[field], "string");
      }
      const db = new DatabaseSync(join(a, "xdg-data", "opencode", "opencode.db"), {
        readOnly: true,
      });
      try {
        const parts = db.prepare("SELECT count(*) AS n FROM part").get() as { n: number };
        assert.ok(parts.n > 0);
      } finally {
        db.close();
      }
    });

    await t.step("shares by bytes and planted terms are as the manifest says", () => {
      for (const [agent, share] of Object.entries(SHARES)) {
        const actual = manifest.bytes[agent as keyof typeof SHARES] / manifest.totalBytes;
        assert.ok(Math.abs(actual - share) < 0.15, `${agent}: ${actual}`);
      }
      assert.ok(rare.length >= 5);
      for (const term of rare) assert.equal(term.count, 3, term.term);
      for (const cls of ["medium", "common", "phrase", "cjk", "hidden", "symbol"]) {
        assert.ok(manifest.terms.some((term) => term.class === cls && term.count > 0), cls);
      }
    });

    await t.step(
      "the real engine captures it without drift and finds every rare term, CJK word, hidden word and symbol",
      async () => {
        const ctx = corpusContext(dir, a);
        const store = openStore(ctx);
        try {
          const redact = redactorFor(ctx);
          const result = await runCapture({ ctx, store, redact });
          assert.equal(result.status, "captured");
          if (result.status !== "captured") return;
          assert.deepEqual(result.summary.drift, []);
          assert.deepEqual(result.summary.errors, []);
          const agents = (store.db.prepare(
            "SELECT DISTINCT s.agent FROM records r JOIN sources s ON s.id = r.source_id",
          ).all() as { agent: string }[]).map((r) => r.agent).sort();
          const registered = [...new Set(ADAPTERS.map((adapter) => adapter.agent))]
            .filter((agent) => agent in SHARES).sort();
          assert.deepEqual(agents, registered);
          const counted = manifest.terms.filter((term) =>
            ["rare", "cjk", "hidden", "symbol"].includes(term.class)
          );
          for (const term of counted) {
            const planted: number = agents.reduce(
              (n: number, agent: string) => n + (term.byAgent[agent] ?? 0),
              0,
            );
            const result = search(store, ADAPTERS, redact, { query: term.term, limit: 1000 });
            assert.equal(result.hits.length, planted, term.term);
            // A CJK word is found by the index inside its run; a symbol by the literal scan.
            assert.equal(result.mode, term.class === "symbol" ? "literal" : "fts", term.term);
          }
        } finally {
          store.close();
        }
      },
    );
  } finally {
    await removeDir(dir);
  }
});

Deno.test("bench/run.ts -- --size 2MB --json (as `deno task bench -- …` passes it) prints exactly the figures, as numbers", async () => {
  const dir = await tempDir("logbook-bench-run-");
  try {
    const { figures, stderr } = await benchJson([
      "--size",
      "2MB",
      "--json",
      "--huge-line",
      "12MB",
      "--rounds",
      "1",
      "--cli-runs",
      "1",
      "--capture-rounds",
      "2",
      "--relevance-size",
      "2MB",
      "--keep",
      dir,
    ]);
    assert.deepEqual(Object.keys(figures), [...FIGURE_KEYS]);
    const rgMissing = which("rg") === null;
    // The previous release comes from Git's history, which a shallow clone may not hold.
    const noPreviousRelease = (await upgradeUnavailable()) !== null;
    // The relevance figures' costs are against the build before issue 31, also from Git's history.
    const noBaseline = (await commitUnavailable(RELEVANCE_BASELINE, "the build")) !== null;
    const againstBaseline = /^relevance_(store_growth|capture_slowdown)$/;
    // ccusage is there once the conformance suite installed it.
    const noCcusage = !canStat(join(ccusageDir(), "node_modules", ".bin", "ccusage"));
    // At 2 MB the slice is the corpus itself: there is no capture of a slice to set against.
    const ofSlice = /^(slice_capture_mb_s|capture_over_slice)$/;
    for (const key of FIGURE_KEYS) {
      const value = figures[key];
      if (ofSlice.test(key)) {
        assert.equal(value, null, key);
      } else if (
        (rgMissing && /^rg_/.test(key)) || (noPreviousRelease && /^upgrade_/.test(key)) ||
        (noCcusage && /^ccusage_/.test(key)) ||
        (noBaseline && againstBaseline.test(key))
      ) {
        assert.ok(value === null || typeof value === "number", key);
      } else {
        assert.ok(typeof value === "number" && Number.isFinite(value), `${key}: ${value}`);
        // A cost against the build before may be below zero (a faster capture, a smaller store),
        // and so may a difference of two timed runs (a command less the empty script beside it).
        if (!againstBaseline.test(key) && !/_cli_own_ms$/.test(key)) {
          assert.ok(value >= 0, `${key}: ${value}`);
        }
      }
    }
    assert.match(stderr, /\[bench [\d.]+s, heap \d+ MB\] capture from empty/);
    // The previous release's store, upgraded, answers as a fresh capture does.
    if (!noPreviousRelease) assert.equal(figures.upgrade_terms_differing, 0);
  } finally {
    await removeDir(dir);
  }
});
