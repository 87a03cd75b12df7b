// The sources a pass has left to read, in reading order: as found, but those whose records are
// decided from other sources' (a copy of its parent, a tool's output named by a transcript) after
// all the others. A 10 GB capture from empty reads 105,609 sources, and a pass holds them until
// each is read: as an object per source with its stat, their fields took 16 MiB of the heap (a
// stat's four numbers are four more objects), so the list keeps them in typed arrays and makes a
// source's object only when its turn comes.

import type { Adapter, SourceRef } from "../sources/adapter.ts";
import type { Found } from "./discover.ts";
import { type KnownSource, packSeen, SEEN_NUMBERS, unpackSeen } from "./source.ts";

/**
 * A source with work to do: whether it is read after the others (`readAfterOthers`), and the id
 * of its row (none until a new source gets one).
 */
export interface Work extends Found {
  last: boolean;
  id: number | undefined;
}

/** The sources of a pass left to read, each given once, in reading order (`take`). */
export class ReadingList {
  readonly #adapters: Adapter[] = [];
  readonly #adapterOf: Uint8Array;
  readonly #refs: (SourceRef | undefined)[];
  /** Each source's stat, `SEEN_NUMBERS` a source (`packSeen`). */
  readonly #stats: Float64Array;
  /** Each source's row id; NaN for none yet. */
  readonly #ids: Float64Array;
  /** Where the sources read after the others begin. */
  readonly #lastFrom: number;
  #next = 0;

  /** The sources of `found` (each asked `readAfterOthers` once), with their rows' ids. */
  constructor(found: readonly Found[], rows: ReadonlyMap<string, KnownSource>) {
    const last = new Uint8Array(found.length);
    let later = found.length;
    found.forEach(({ adapter, ref }, i) => {
      if (adapter.readAfterOthers?.(ref)) {
        last[i] = 1;
        later--;
      }
    });
    this.#lastFrom = later;
    this.#adapterOf = new Uint8Array(found.length);
    this.#refs = new Array(found.length);
    this.#stats = new Float64Array(found.length * SEEN_NUMBERS);
    this.#ids = new Float64Array(found.length);
    let first = 0;
    found.forEach(({ adapter, ref, stat }, i) => {
      const at = last[i] ? later++ : first++;
      let a = this.#adapters.indexOf(adapter);
      if (a < 0) a = this.#adapters.push(adapter) - 1;
      this.#adapterOf[at] = a;
      this.#refs[at] = ref;
      packSeen(this.#stats, at * SEEN_NUMBERS, stat);
      this.#ids[at] = rows.get(ref.locator)?.id ?? NaN;
    });
  }

  /** How many sources are left to read. */
  get length(): number {
    return this.#refs.length - this.#next;
  }

  /** The bytes left to read: each file's size past `cursor` of its locator, none below it. */
  bytesLeft(cursor: (locator: string) => number): number {
    let sum = 0;
    for (let i = this.#next; i < this.#refs.length; i++) {
      sum += Math.max(0, this.#stats[i * SEEN_NUMBERS]! - cursor(this.#refs[i]!.locator));
    }
    return sum;
  }

  /** How many of the sources left have no row yet. */
  get unnumbered(): number {
    let count = 0;
    for (let i = this.#next; i < this.#refs.length; i++) {
      if (Number.isNaN(this.#ids[i]!)) count++;
    }
    return count;
  }

  /** Gives each source left without a row the id of the row `create` makes for it, in order. */
  number(create: (source: { adapter: Adapter; ref: SourceRef }) => number): void {
    for (let i = this.#next; i < this.#refs.length; i++) {
      if (!Number.isNaN(this.#ids[i]!)) continue;
      const adapter = this.#adapters[this.#adapterOf[i]!]!;
      this.#ids[i] = create({ adapter, ref: this.#refs[i]! });
    }
  }

  /** The next source to read, which the list lets go of; undefined once all were given. */
  take(): Work | undefined {
    const i = this.#next;
    const ref = this.#refs[i];
    if (ref === undefined) return undefined;
    this.#refs[i] = undefined;
    this.#next++;
    return {
      adapter: this.#adapters[this.#adapterOf[i]!]!,
      ref,
      stat: unpackSeen(this.#stats, i * SEEN_NUMBERS),
      last: i >= this.#lastFrom,
      id: Number.isNaN(this.#ids[i]!) ? undefined : this.#ids[i],
    };
  }
}
