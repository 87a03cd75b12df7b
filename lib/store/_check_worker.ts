// The worker that checks the history store on a connection of its own, so a check that reads
// every page (seconds on a large store) does not hold up the dashboard. Started only by
// `checkStoreInWorker` (`check.ts`).

import { HistoryStore, isCorruption } from "./db.ts";
import { checkStore, type StoreCheck, unopenable } from "./check.ts";
import { messageOf } from "../format.ts";

/** What the worker is asked. */
export interface CheckRequest {
  path: string;
  root: string;
}

/** What it answers: the check, or why it could not run. */
export type CheckReply = { ok: true; check: StoreCheck } | { ok: false; message: string };

interface WorkerScope {
  onmessage: ((event: MessageEvent<CheckRequest>) => void) | null;
  postMessage(message: CheckReply): void;
  close(): void;
}

const scope = self as unknown as WorkerScope;

scope.onmessage = ({ data }) => {
  scope.postMessage(run(data));
  scope.close();
};

function run(request: CheckRequest): CheckReply {
  let store: HistoryStore;
  try {
    store = HistoryStore.open({ path: request.path, root: request.root, readOnly: true });
  } catch (err) {
    if (isCorruption(err)) return { ok: true, check: unopenable(err) };
    return { ok: false, message: messageOf(err) };
  }
  try {
    // Every page is read once: a small page cache keeps this thread's memory small (it runs
    // beside a rebuild, whose own peak it would add to).
    store.db.exec("PRAGMA cache_size = -2000");
    return { ok: true, check: checkStore(store) };
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  } finally {
    store.close();
  }
}
