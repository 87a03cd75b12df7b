// The worker that reads what the store knows of every source (`KNOWN_COLUMNS`) on a connection of
// its own while the pass's thread finds the files and stats them, then stats the known sources'
// files itself, from the last row back, until the pass has looked at every file: at 100,000
// sources reading the rows takes a third of a second and stat-ing the files two thirds, and here
// the two threads share them. Started and spoken to only by `loadSourcesAside` (`identity.ts`).

import { DatabaseSync } from "node:sqlite";
import { type FlatKnown, flattenKnown, knownRows, lookAtKnown, type SeenChunk } from "./source.ts";

/** What the pass asks: the store's path. */
export interface ToKnownWorker {
  path: string;
}

/**
 * The rows, flat (their numbers transferred), or why they could not be read; then their files as
 * looked at, a chunk at a time, the last rows first.
 */
export type FromKnownWorker =
  | ({ type: "rows" } & FlatKnown)
  | ({ type: "seen" } & SeenChunk)
  | { type: "failed"; message: string };

/** Files looked at between two messages of them. */
const SEEN_CHUNK = 2048;

interface WorkerScope {
  onmessage: ((event: MessageEvent<ToKnownWorker>) => void) | null;
  postMessage(message: FromKnownWorker, transfer?: Transferable[]): void;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;

scope.onmessage = (event) => {
  let flat: FlatKnown;
  try {
    flat = readKnown(event.data.path);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    scope.postMessage({ type: "failed", message });
    scope.close();
    return;
  }
  const { locators } = flat;
  scope.postMessage({ type: "rows", ...flat }, [flat.numbers.buffer]);
  // Until the pass stops this worker, having looked at every file itself or taken these.
  // The last chunk is the one from row 0 (empty when there are no rows).
  let to = locators.length;
  do {
    const from = Math.max(0, to - SEEN_CHUNK);
    const chunk = lookAtKnown(locators, from, to);
    scope.postMessage({ type: "seen", ...chunk }, [chunk.kinds.buffer, chunk.numbers.buffer]);
    to = from;
  } while (to > 0);
  scope.close();
};

function readKnown(path: string): FlatKnown {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    // The count and the rows from one snapshot.
    db.exec("BEGIN");
    const { n } = db.prepare("SELECT count(*) AS n FROM sources").get() as { n: number };
    const flat = flattenKnown(knownRows((sql) => db.prepare(sql)), n);
    db.exec("COMMIT");
    return flat;
  } finally {
    db.close();
  }
}
