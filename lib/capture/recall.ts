// What the store already holds of other sources, as adapters ask for it (`Recall` in
// `lib/sources/adapter.ts`): whether a source is known, which are in a folder or of an agent,
// and a source's captured bytes. Raw bytes and source rows are never dropped, by a rebuild
// either, so what an adapter decides from them is the same after a rebuild and once the files are
// gone.

import { sep } from "../path.ts";
import type { AgentName, Recall, StoredChunk } from "../sources/adapter.ts";
import type { HistoryStore } from "../store/db.ts";
import { decodeRaw } from "../store/raw.ts";

/** A `Recall` over one store, for one pass (adapters keep what they learn from it per pass). */
export class StoreRecall implements Recall {
  readonly #store: HistoryStore;

  constructor(store: HistoryStore) {
    this.#store = store;
  }

  has(locator: string): boolean {
    return this.#store.stmt("SELECT 1 FROM sources WHERE locator = ?").get(locator) !== undefined;
  }

  sources(folder: string): string[] {
    const prefix = folder.endsWith(sep) ? folder : folder + sep;
    // Every locator that starts with the prefix sorts between it and the prefix with its last
    // character (the separator) one higher.
    const after = prefix.slice(0, -1) +
      String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    const rows = this.#store.stmt(
      "SELECT locator FROM sources WHERE locator > ? AND locator < ? ORDER BY locator",
    ).all(prefix, after) as { locator: string }[];
    return rows.map((r) => r.locator).filter((l) => !l.slice(prefix.length).includes(sep));
  }

  sourcesOf(agent: AgentName): string[] {
    // Unsorted: sorting tens of thousands of locators would take most of the time. One row at
    // a time: SQLite's row objects, all at once, weigh several times their locators.
    const rows = this.#store.stmt("SELECT locator FROM sources WHERE agent = ?").iterate(agent);
    return Array.from(rows as Iterable<{ locator: string }>, (row) => row.locator);
  }

  *chunks(locator: string): Iterable<StoredChunk> {
    const source = this.#store.stmt("SELECT id FROM sources WHERE locator = ?").get(locator) as
      | { id: number }
      | undefined;
    if (!source) return;
    // A statement of its own: two sources may be read at once, and a reader may stop early.
    const rows = this.#store.db.prepare(
      "SELECT seq, raw, flags FROM records WHERE source_id = ? ORDER BY generation, offset",
    ).iterate(source.id) as Iterable<{ seq: number; raw: Uint8Array; flags: number }>;
    for (const row of rows) yield { bytes: decodeRaw(row), start: row.seq === 0 };
  }
}
