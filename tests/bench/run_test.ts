// bench/run.ts as a person runs it: `--only` measures the parts named and leaves every other
// figure null, the disk a run needs is said up front and a run without it is refused, and a
// stopped run leaves nothing behind (its work folder gone, the corpus files it appended to cut
// back).

import assert from "node:assert/strict";
import { join } from "node:path";
import { FIGURE_KEYS, FIGURE_PARTS } from "../../bench/_figures.ts";
import { treeBytes } from "../../bench/_util.ts";
import { removeDir, tempDir } from "../_helpers.ts";
import { benchCommand, benchJson, logUntil } from "./_bench_json.ts";

/** Runs the bench with `args` to its end; its exit code, stdout and stderr. */
async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await benchCommand(args).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("bench --only search,cli,status,forget measures those parts and prints null for the rest", async () => {
  const dir = await tempDir("logbook-bench-only-");
  try {
    const { figures, stderr } = await benchJson([
      "--size",
      "2MB",
      "--only",
      "search,cli,status,forget",
      "--json",
      "--rounds",
      "1",
      "--cli-runs",
      "2",
      "--keep",
      dir,
    ]);
    assert.deepEqual(Object.keys(figures), [...FIGURE_KEYS]);
    const measured = ["search", "cli", "status", "forget"];
    for (const key of FIGURE_KEYS) {
      const value = figures[key];
      if (FIGURE_PARTS[key].every((part) => measured.includes(part))) {
        assert.ok(typeof value === "number" && Number.isFinite(value), `${key}: ${value}`);
      } else {
        assert.equal(value, null, key);
      }
    }
    // The search command's own cost is its time less the empty script's run beside it.
    assert.ok(figures.empty_script_ms! > 0);
    assert.ok(figures.search_cli_own_ms! < figures.search_cli_ms!);
    // And status's, less the empty script with status's flags beside each run.
    assert.ok(figures.status_cli_own_ms! < figures.status_cli_ms!);
    assert.match(stderr, /note: not measured \(--only\): capture, noop, rg, show, usage,/);
    // The store was captured once, by a plain capture: no ceilings, no scratch stores.
    assert.equal(stderr.match(/capture from empty/g)?.length, 1, stderr);
    assert.doesNotMatch(stderr, /FTS ceiling/);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("bench --slice-size below --size runs the breakdown, watch, migration and the symbols' counts on a slice, and says so", async () => {
  const dir = await tempDir("logbook-bench-slice-");
  try {
    const { code, stdout, stderr } = await bench([
      "--size",
      "3MB",
      "--slice-size",
      "1MB",
      "--only",
      "capture,search,rss,watch,migration",
      "--capture-rounds",
      "1",
      "--rounds",
      "1",
      "--keep",
      dir,
    ]);
    assert.equal(code, 0, stderr);
    // The slice is generated and captured once, for the four parts, beside the corpus.
    assert.equal(stderr.match(/generating the 1\.0 MB slice \(seed 7\)/g)?.length, 1, stderr);
    assert.equal(stderr.match(/slice: capture from empty/g)?.length, 1, stderr);
    assert.match(stderr, /FTS ceiling with the store's FTS settings .* \(on the 1\.0 MB slice\)/);
    assert.match(stdout, /watch_backlog_over_reindex +\d+(\.\d+)? +×/);
    // The corpus's capture is set against the slice's, each the reindex command from empty.
    assert.match(stdout, /slice_capture_mb_s +\d+(\.\d+)? +MB\/s/);
    assert.match(stdout, /capture_over_slice +\d+(\.\d+)? +×/);
    // The first capture, the reindex command's, gave capture's peak memory: no capture more.
    assert.match(stderr, /capture from empty \(reindex, in a child process\), round 1 of 1/);
    assert.match(stderr, /capture's peak RSS: the first capture from empty/);
    assert.doesNotMatch(stderr, /capture's peak RSS: reindex from empty/);
    assert.match(stdout, /capture_peak_rss_mb +\d+(\.\d+)? +MiB/);
    assert.match(stdout, /migrate_mb_s +\d+(\.\d+)? +MB\/s/);
    // The symbols' hits are counted on the slice, every other counted term's on the store.
    const found = stdout.match(/hits found \/ planted in captured formats: (.*)/)![1]!;
    const counts = found.split(", ");
    assert.equal(counts.filter((c) => / \(on the 1\.0 MB slice\)$/.test(c)).length, 2, found);
    assert.match(found, /💡 (\d+)\/\1 \(on the 1\.0 MB slice\)/);
    assert.ok(counts.length > 2 && counts.every((c) => /^\S+ (\d+)\/\1( |$)/.test(c)), found);
    assert.match(stdout, /the other steps over the 1\.0 MB slice \(--slice-size\), captured from/);
    assert.match(stdout, /store held the 1\.0 MB slice \(\d+ sources\)/);
    assert.match(
      stdout,
      /measured on the 1\.0 MB slice, .*: the capture's breakdown \(where the time goes\) and slice_capture_mb_s, the symbols' hits found \/ planted \(literal scans\), watch_backlog_over_reindex, migrate_mb_s and migration_peak_rss_mb/,
    );
    // The slice goes with the work folder's scratch; the corpus, the store and the report stay.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "config",
      "corpus",
      "data",
      "home",
      "report.txt",
    ]);
  } finally {
    await removeDir(dir);
  }
});

Deno.test("bench --only watch,migration with a smaller slice needs nothing of the corpus", async () => {
  const { code, stdout } = await bench([
    "--size",
    "10GB",
    "--only",
    "watch,migration",
    "--dry-run",
  ]);
  assert.equal(code, 0);
  assert.match(stdout, /the slice's corpus and store 2\.30 GB/);
  assert.doesNotMatch(stdout, /the corpus 10\.00 GB|the store 13/);
});

Deno.test("bench --only with a part it does not know is a usage error (exit 2) naming the parts", async () => {
  const { code, stderr } = await bench(["--only", "search,serach"]);
  assert.equal(code, 2);
  assert.match(stderr, /error: Unknown part "serach" in --only: expected some of capture, noop,/);
});

Deno.test("bench says up front how much disk it needs and refuses (exit 2) when it is not free", async (t) => {
  await t.step("--dry-run at 10GB: the parts and the disk, and nothing run", async () => {
    const { code, stdout, stderr } = await bench([
      "--size",
      "10GB",
      "--only",
      "search,rg",
      "--dry-run",
    ]);
    // Refused only on a machine with less free than the plan needs.
    if (code !== 0) assert.match(stderr, /error: Not enough free disk in "/);
    assert.ok(code === 0 || code === 2, String(code));
    assert.match(stdout, /^parts: search, rg\n/);
    assert.match(
      stdout,
      /disk: needs 25\.56 GB in \S+ \(the corpus 10\.00 GB, the store 13\.00 GB, its WAL 256\.0 MB, the slice's corpus and store 2\.30 GB\)/,
    );
  });

  await t.step("a run needing more than is free is refused before it makes anything", async () => {
    const { code, stdout, stderr } = await bench(["--size", "9000GB", "--json"]);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.match(
      stderr,
      /error: Not enough free disk in "[^"]+" for this run: it needs [\d.]+ GB, [\d.]+ [kMG]?B are free\n/,
    );
    assert.doesNotMatch(stderr, /generating|work folder/);
  });
});

Deno.test("a bench stopped by SIGINT removes its work folder", async () => {
  const child = benchCommand(["--size", "2MB", "--only", "search", "--rounds", "1"]).spawn();
  const log = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const started = await logUntil(log, /capture from empty/);
    const work = /work folder: (\S+)/.exec(started)![1]!;
    assert.ok(Deno.statSync(join(work, "corpus")).isDirectory);
    child.kill("SIGINT");
    const text = await logUntil(log, /stopped \(SIGINT\)/, started);
    assert.equal((await child.status).code, 130, text);
    assert.throws(() => Deno.statSync(work), Deno.errors.NotFound);
  } finally {
    await log.cancel();
    await child.stdout.cancel();
  }
});

Deno.test("a bench stopped while it generates its corpus stops at once and leaves nothing", async () => {
  const child = benchCommand(["--size", "200MB", "--only", "rg"]).spawn();
  const log = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const started = await logUntil(log, /generating a 200\.0 MB corpus/);
    const work = /work folder: (\S+)/.exec(started)![1]!;
    child.kill("SIGINT");
    const text = await logUntil(log, /stopped \(SIGINT\)/, started);
    assert.equal((await child.status).code, 130, text);
    // The generator was stopped, not waited for.
    assert.doesNotMatch(text, /corpus: [\d.]+ MB in/);
    assert.throws(() => Deno.statSync(work), Deno.errors.NotFound);
  } finally {
    await log.cancel();
    await child.stdout.cancel();
  }
});

Deno.test("a kept bench killed mid-run (SIGKILL) leaves the figures measured so far in DIR/report.txt; one that ends, the whole report", async () => {
  const dir = await tempDir("logbook-bench-report-");
  const args = ["--size", "2MB", "--only", "noop,search", "--rounds", "1", "--keep", dir];
  const child = benchCommand(args).spawn();
  const log = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    // The no-op part has ended and the search part begun: killed as a crash would end it.
    await logUntil(log, /in-process search:/);
    child.kill("SIGKILL");
    await child.status;
    const partial = Deno.readTextFileSync(join(dir, "report.txt"));
    assert.match(partial, /^\s*noop_reindex_ms\s+\d+(\.\d+)?\s+ms/m, partial);
    assert.match(partial, /^\s*search_p50_ms\s+n\/a/m, "the search had not ended");
    assert.match(partial, /the run had not ended when this was written/);

    const whole = await bench(args);
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(Deno.readTextFileSync(join(dir, "report.txt")).trimEnd(), whole.stdout.trimEnd());
  } finally {
    await log.cancel();
    await child.stdout.cancel();
    await removeDir(dir);
  }
});

Deno.test("a kept bench stopped by SIGTERM while appending cuts the corpus files back and keeps the corpus", async () => {
  const dir = await tempDir("logbook-bench-stop-");
  const child = benchCommand([
    "--size",
    "2MB",
    "--only",
    "append",
    "--keep",
    dir,
  ]).spawn();
  const log = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const text = await logUntil(log, /append 1 MB to one file/);
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 143, await logUntil(log, /stopped \(SIGTERM\)/, text));
    const manifest = JSON.parse(Deno.readTextFileSync(join(dir, "corpus", "manifest.json")));
    assert.equal(treeBytes(join(dir, "corpus", "claude")).bytes, manifest.bytes.claude);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["config", "corpus", "data", "home"],
    );
  } finally {
    await log.cancel();
    await child.stdout.cancel();
    await removeDir(dir);
  }
});
