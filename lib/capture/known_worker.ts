// The worker that reads what the store knows of every source (`KNOWN_COLUMNS`) on a connection of
// its own while the pass's thread finds the files and stats them: at 100,000 sources each takes a
// third of a second or more, and here they run side by side. Started and spoken to only by
// `loadSourcesAside` (`identity.ts`).

import { DatabaseSync } from "node:sqlite";
import { type FlatKnown, flattenKnown, KNOWN_COLUMNS } from "./source.ts";

/** What the pass asks: the store's path. */
export interface ToKnownWorker {
  path: string;
}

/** The rows, flat (their numbers transferred), or why they could not be read. */
export type FromKnownWorker =
  | ({ type: "rows" } & FlatKnown)
  | { type: "failed"; message: string };

interface WorkerScope {
  onmessage: ((event: MessageEvent<ToKnownWorker>) => void) | null;
  postMessage(message: FromKnownWorker, transfer?: Transferable[]): void;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;

scope.onmessage = (event) => {
  try {
    const flat = readKnown(event.data.path);
    scope.postMessage({ type: "rows", ...flat }, [flat.numbers.buffer]);
  } catch (err) {
    scope.postMessage({
      type: "failed",
      message: err instanceof Error ? err.message : String(err),
    });
  }
  scope.close();
};

function readKnown(path: string): FlatKnown {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    // The count and the rows from one snapshot.
    db.exec("BEGIN");
    const { n } = db.prepare("SELECT count(*) AS n FROM sources").get() as { n: number };
    const statement = db.prepare(`SELECT ${KNOWN_COLUMNS} FROM sources`) as unknown as {
      setReturnArrays(on: boolean): void;
      iterate(): Iterable<unknown[]>;
    };
    statement.setReturnArrays(true);
    const flat = flattenKnown(statement.iterate(), n);
    db.exec("COMMIT");
    return flat;
  } finally {
    db.close();
  }
}
