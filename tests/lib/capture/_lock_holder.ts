// A worker that holds a history store's write lock for a while, from a thread of its own: a
// test's capture can then wait on the lock (even synchronously, in SQLite's busy handler) and
// see it released. Started by `holdStoreLock` in batch_writers_test.ts.

import { DatabaseSync } from "node:sqlite";

interface Scope {
  onmessage:
    | ((event: MessageEvent<{ path: string; ms: number; taken: Int32Array }>) => void)
    | null;
  close(): void;
}

const scope = globalThis as unknown as Scope;
scope.onmessage = (event) => {
  const { path, ms, taken } = event.data;
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("BEGIN IMMEDIATE");
  Atomics.store(taken, 0, 1);
  Atomics.notify(taken, 0);
  setTimeout(() => {
    db.exec("ROLLBACK");
    db.close();
    scope.close();
  }, ms);
};
