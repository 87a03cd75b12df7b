// The sources a pass has left to read, in reading order: as found, but those whose records are
// decided from other sources' (a copy of its parent, a tool's output named by a transcript) after
// all the others. A 10 GB capture from empty reads 105,609 sources, and a pass holds them until
// each is read: as an object per source with its stat, their fields took 16 MiB of the heap (a
// stat's four numbers are four more objects), so the list keeps them in typed arrays and makes a
// source's object only when its turn comes.
//
// Whether a source is read after the others is asked at its turn, not when the list is made: for
// a Claude Code session the adapter reads the file's first lines (is it made only of summaries?),
// and asking all 62,244 sessions of the 10 GB bench corpus before the first batch took 2.6 s with
// the files in the page cache and 18.9 s without, one small read each, then read again later.
// Asked at its turn, the head is read just before the whole file, and the worker writes meanwhile.
// The sources deferred wait for all the others and come in the order found, so the order read is
// the one asking first gave. New sources are numbered in the order found, which is the order a
// rebuild derives them in: what a deferred source decides comes from stored bytes (`Recall`),
// whatever the order.

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
  /** The sources deferred at their turn (`readAfterOthers`), by place, in the order found. */
  readonly #later: number[] = [];
  /** The next place to give (or defer); then the next of `#later` to give. */
  #next = 0;
  #nextLater = 0;
  #given = 0;

  /** The sources of `found`, in the order found, with their rows' ids. */
  constructor(found: readonly Found[], rows: ReadonlyMap<string, KnownSource>) {
    this.#adapterOf = new Uint8Array(found.length);
    this.#refs = new Array(found.length);
    this.#stats = new Float64Array(found.length * SEEN_NUMBERS);
    this.#ids = new Float64Array(found.length);
    found.forEach(({ adapter, ref, stat }, at) => {
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
    return this.#refs.length - this.#given;
  }

  /** The bytes left to read: each file's size past `cursor` of its locator, none below it. */
  bytesLeft(cursor: (locator: string) => number): number {
    let sum = 0;
    this.#eachLeft((i, ref) => {
      sum += Math.max(0, this.#stats[i * SEEN_NUMBERS]! - cursor(ref.locator));
    });
    return sum;
  }

  /** How many of the sources left have no row yet. */
  get unnumbered(): number {
    let count = 0;
    this.#eachLeft((i) => {
      if (Number.isNaN(this.#ids[i]!)) count++;
    });
    return count;
  }

  /** Gives each source left without a row the id of the row `create` makes for it, as found. */
  number(create: (source: { adapter: Adapter; ref: SourceRef }) => number): void {
    this.#eachLeft((i, ref) => {
      if (!Number.isNaN(this.#ids[i]!)) return;
      this.#ids[i] = create({ adapter: this.#adapters[this.#adapterOf[i]!]!, ref });
    });
  }

  /**
   * The next source to read, which the list lets go of; undefined once all were given. A source
   * its adapter reads after the others (asked here, once) is given after every other source.
   */
  take(): Work | undefined {
    while (this.#next < this.#refs.length) {
      const i = this.#next++;
      if (this.#adapterAt(i).readAfterOthers?.(this.#refs[i]!)) this.#later.push(i);
      else return this.#give(i, false);
    }
    const i = this.#later[this.#nextLater++];
    return i === undefined ? undefined : this.#give(i, true);
  }

  #adapterAt(i: number): Adapter {
    return this.#adapters[this.#adapterOf[i]!]!;
  }

  #give(i: number, last: boolean): Work {
    const ref = this.#refs[i]!;
    this.#refs[i] = undefined;
    this.#given++;
    return {
      adapter: this.#adapterAt(i),
      ref,
      stat: unpackSeen(this.#stats, i * SEEN_NUMBERS),
      last,
      id: Number.isNaN(this.#ids[i]!) ? undefined : this.#ids[i],
    };
  }

  /** Calls `visit` with the place and ref of each source not given yet. */
  #eachLeft(visit: (i: number, ref: SourceRef) => void): void {
    this.#refs.forEach((ref, i) => {
      if (ref !== undefined) visit(i, ref);
    });
  }
}
