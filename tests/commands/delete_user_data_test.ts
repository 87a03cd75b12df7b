// `delete-user-data`: confirmation, stopping logbook's own running work (and nobody else's),
// removing every data path, an honest report, exit 0 only when all is gone, config kept.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { main as deleteCommand } from "../../commands/delete_user_data.ts";
import { deleteUserData, userDataSize } from "../../lib/delete_data.ts";
import { formatBytes } from "../../lib/format.ts";
import { dataPaths } from "../../lib/paths.ts";
import { removePath } from "../../lib/private_fs.ts";
import { DatabaseSync } from "node:sqlite";
import {
  captureIo,
  childBaseEnv,
  makeWorld,
  ROOT,
  runCli,
  taskFlags,
  type World,
} from "../_helpers.ts";
import { writeClaudeCorpus } from "../_corpus.ts";
import { eventually } from "../_wait.ts";

async function populated(): Promise<World> {
  const world = await makeWorld();
  writeClaudeCorpus(world.claude, { sessions: 3, lines: 4 });
  assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
  await Deno.mkdir(join(world.data, "sessions", "proj-abc"), { recursive: true });
  Deno.writeTextFileSync(join(world.data, "sessions", "proj-abc", "s.json"), "{}");
  Deno.writeTextFileSync(
    join(world.data, "sessions", "proj-abc", ".s.json.tmp-123-abcdef"),
    "half",
  );
  await Deno.mkdir(join(world.data, "prune-archives"), { recursive: true });
  Deno.writeTextFileSync(join(world.data, "prune-archives", "snap.txt"), "snapshot");
  await Deno.mkdir(join(world.data, "logs"), { recursive: true });
  Deno.writeTextFileSync(join(world.data, "logs", "stage-markers.log"), "{}\n");
  Deno.writeTextFileSync(join(world.data, "logs", "stage-markers.log.1"), "{}\n");
  Deno.writeTextFileSync(join(world.data, "prompt-history.jsonl"), "{}\n");
  await Deno.mkdir(world.config, { recursive: true });
  Deno.writeTextFileSync(join(world.config, "config.json"), '{"model": "m"}');
  return world;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("delete-user-data --yes stops the watcher, removes every data path and keeps config", async () => {
  const world = await populated();
  const watcher = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("reindex"),
      "--quiet",
      join(ROOT, "commands", "reindex.ts"),
      "--watch",
      "--quiet",
    ],
    env: { ...childBaseEnv(), ...world.vars },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  // A process that is not logbook's, named by a stale lock file, must not be touched.
  const bystander = new Deno.Command("sleep", { args: ["30"] }).spawn();
  try {
    const lock = join(world.data, "run", "capture.lock");
    await eventually("the watcher to take the capture lock", () => {
      try {
        return JSON.parse(Deno.readTextFileSync(lock)).pid === watcher.pid;
      } catch {
        return false; // not yet
      }
    });
    Deno.writeTextFileSync(
      join(world.data, "run", "other.lock"),
      JSON.stringify({ pid: bystander.pid, startedAt: 0, command: "dashboard" }),
    );

    const result = await runCli("delete_user_data", ["--yes"], world.vars);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`^stopped +reindex --watch \\(pid ${watcher.pid}\\)$`, "m"),
    );
    assert.match(result.stdout, /^removed +.*history\.db$/m);
    assert.match(result.stdout, /^removed +.*\.s\.json\.tmp-123-abcdef$|^removed +.*sessions$/m);
    assert.match(result.stdout, /All logbook data is gone/);
    assert.equal(exists(world.data), false, "the data dir itself is gone");
    assert.equal(Deno.readTextFileSync(join(world.config, "config.json")), '{"model": "m"}');
    const status = await watcher.status;
    assert.equal(status.success, true, "the watcher stopped cleanly on SIGTERM");
    assert.equal(exists(`/proc/${bystander.pid}`), true, "the bystander still runs");
  } finally {
    for (const child of [watcher, bystander]) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
    await world.cleanup();
  }
});

Deno.test("delete-user-data refuses without a terminal and without --yes, and on a wrong word", async () => {
  const world = await populated();
  try {
    const refused = await runCli("delete_user_data", [], world.vars);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: refusing to delete without confirmation/);
    assert.ok(exists(join(world.data, "history.db")));

    const io = captureIo();
    const size = userDataSize(dataPaths(world.data, world.env));
    assert.ok(size.bytes > 0 && size.files > 5, JSON.stringify(size));
    assert.equal(await deleteCommand([], io, world.env, () => "yes please"), 1);
    // What goes, and how much, is said before the question.
    assert.ok(
      io.stderr().includes(`(${formatBytes(size.bytes)} in ${size.files} files)`),
      io.stderr(),
    );
    assert.match(io.stderr(), /Nothing was deleted/);
    assert.ok(exists(join(world.data, "history.db")));

    const asked: string[] = [];
    const ok = captureIo();
    assert.equal(await deleteCommand([], ok, world.env, (q) => (asked.push(q), "delete")), 0);
    assert.deepEqual(asked, ['Type "delete" to confirm:']);
    assert.equal(exists(world.data), false);
  } finally {
    await world.cleanup();
  }
});

Deno.test("delete-user-data reports what it could not remove and exits 1", async () => {
  const world = await populated();
  try {
    Deno.writeTextFileSync(join(world.data, "my-notes.txt"), "mine");
    const paths = dataPaths(world.data, world.env);
    const report = await deleteUserData({
      paths,
      remove: (path) =>
        path === paths.pruneArchives
          ? { removed: false, error: "Permission denied (os error 13)" }
          : removePath(path),
    });
    assert.equal(report.complete, false);
    assert.deepEqual(report.steps.find((s) => s.path === paths.pruneArchives), {
      action: "not removed",
      path: paths.pruneArchives,
      reason: "Permission denied (os error 13)",
    });
    assert.deepEqual(report.steps.find((s) => s.path?.endsWith("my-notes.txt"))?.action, "left");
    assert.equal(Deno.readTextFileSync(join(world.data, "my-notes.txt")), "mine");
    assert.equal(exists(paths.historyDb), false);

    const io = captureIo();
    assert.equal(await deleteCommand(["--yes"], io, world.env), 1);
    assert.match(io.stdout(), /^left +.*my-notes\.txt: not created by logbook, so not deleted$/m);
    assert.match(io.stdout(), /Everything logbook created is gone/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("delete-user-data leaving only a foreign file says so, not to run it again", async () => {
  const world = await populated();
  try {
    Deno.writeTextFileSync(join(world.data, "my-notes.txt"), "mine");
    const io = captureIo();
    assert.equal(await deleteCommand(["--yes"], io, world.env), 1);
    assert.doesNotMatch(io.stdout(), /run this again/);
    assert.match(
      io.stdout(),
      /^Everything logbook created is gone\. Your config in .* was kept\.$/m,
    );
    assert.match(
      io.stdout(),
      /still holds 1 entry logbook did not create .*; it was not touched: move or delete it yourself/,
    );
    assert.equal(Deno.readTextFileSync(join(world.data, "my-notes.txt")), "mine");
  } finally {
    await world.cleanup();
  }
});

Deno.test("delete-user-data counts the project mirrors in the size it announces", async () => {
  const world = await populated();
  try {
    const paths = dataPaths(world.data, world.env);
    const before = userDataSize(paths);
    const mirror = join(world.dir, "app", ".logbook", "conversations-0123456789ab.db");
    await Deno.mkdir(join(world.dir, "app", ".logbook"), { recursive: true });
    Deno.writeTextFileSync(mirror, "m".repeat(40_000));
    Deno.writeTextFileSync(`${mirror}-wal`, "w".repeat(8_000));
    // The store lists its mirrors in meta, as `mirror on` leaves them.
    const db = new DatabaseSync(paths.historyDb);
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('mirrors', ?)")
      .run(JSON.stringify({ app: { path: mirror } }));
    db.close();
    const size = userDataSize(paths, [mirror]);
    assert.equal(size.files, userDataSize(paths).files + 2);
    assert.ok(size.bytes >= before.bytes + 48_000, JSON.stringify({ before, size }));

    const io = captureIo();
    assert.equal(await deleteCommand([], io, world.env, () => "no"), 1);
    // Measured again after the command, which opened the store (and so its SHM file).
    const announced = userDataSize(paths, [mirror]);
    assert.ok(
      io.stderr().includes(
        `prompt history, and 1 project mirror (${formatBytes(announced.bytes)} in ` +
          `${announced.files} files in all):\n  ${mirror}\n`,
      ),
      io.stderr(),
    );
    assert.ok(Deno.statSync(mirror).isFile, "nothing deleted on a no");
  } finally {
    await world.cleanup();
  }
});
