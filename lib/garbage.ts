// Memory between batches, for capture, push and batched migrations. A batch leaves its bytes
// behind as garbage, outside the JS heap (a backing store per line) and in it (a push's texts),
// which V8 frees only when its own heap next needs collecting: long after, so the peak grew with
// what was read. Where the runtime exposes `gc` (the tasks run with `--v8-flags=--expose-gc`), it
// is called once every `everyBytes` of committed bytes (or further apart, below), which keeps the
// peak to a few batches' worth.

/** What `--expose-gc` gives: a full collection, or with these options one that gives back too. */
type Collector = (options?: GiveBack) => void;
interface GiveBack {
  type: "major";
  execution: "sync";
  flavor: "last-resort";
}
const GIVE_BACK: GiveBack = { type: "major", execution: "sync", flavor: "last-resort" };

/** Committed bytes after which a collection also gives back, once (see `giveBack`). */
const GIVE_BACK_AFTER = 16 * 1024 * 1024;

/**
 * Frees the garbage of committed batches where `gc` is exposed: every `everyBytes` of source, or
 * every quarter of the heap that survived the last collection when that is more, and sooner when
 * the heap has grown by that quarter (at least twice `everyBytes`) since: a database's rows leave
 * more garbage per source byte than transcript lines, and reading the 2.4 GB OpenCode database of
 * a 10 GB corpus took the heap from 120 to 190 MiB between collections. A collection marks
 * everything alive, so it costs in proportion to that heap: a pass over the 105,609 sources of a
 * 10 GB corpus holds 43 MiB, and each collection took 40 to 50 ms, so collections every 8 MiB
 * would take a tenth of the capture's time; spaced by the heap, their cost per byte captured stays
 * what it is in a small capture. Spaced by half of it (and 32 MiB), the heap grew from 43 to 70
 * MiB between collections, and the batches' bytes left outside it with it: the capture peaked at
 * 267 MiB, against 241 MiB spaced by a quarter, in 538 and 527 s.
 */
export class GarbageRelease {
  readonly #gc: Collector | undefined;
  readonly #heapUsed: () => number;
  readonly #everyBytes: number;
  #since = 0;
  #total = 0;
  #givenBack = false;
  #spacing: number;
  /** The heap at which to collect before `spacing` bytes pass: what survived, and a quarter more. */
  #ceiling = Infinity;

  constructor(
    everyBytes = 8 * 1024 * 1024,
    gc = (globalThis as { gc?: Collector }).gc,
    heapUsed = () => Deno.memoryUsage().heapUsed,
  ) {
    this.#everyBytes = everyBytes;
    this.#spacing = everyBytes;
    this.#gc = gc;
    this.#heapUsed = heapUsed;
  }

  /** Counts `bytes` committed (of source, or sent); collects garbage when enough has gone by. */
  committed(bytes: number): void {
    if (!this.#gc) return;
    this.#since += bytes;
    this.#total += bytes;
    if (this.#since < this.#spacing && this.#heapUsed() < this.#ceiling) return;
    if (!this.#givenBack && this.#total >= GIVE_BACK_AFTER) this.giveBack();
    else this.collect();
  }

  /**
   * Collects now: once a large pass's plan is made, all that its discovery held but the plan is
   * garbage (the 10 GB capture's heap held 98 MiB until its first collection, 43 after it).
   */
  collect(): void {
    this.#collect();
  }

  /**
   * Collects all it can and gives the pages that frees back to the system. V8 keeps the pages its
   * collections free for what it allocates next, and gives them back only when its memory reducer
   * runs, some seconds later: in the first ten seconds of migration 0008's verification, 30 MiB
   * more than after on the migration's thread and 20 MiB more on its scan worker's. `committed`
   * does it once, at its first collection `GIVE_BACK_AFTER` into a run (about 40 ms, where a
   * collection takes 10): they did not pile up again.
   */
  giveBack(): void {
    this.#givenBack = true;
    this.#collect(GIVE_BACK);
  }

  #collect(giveBack?: GiveBack): void {
    if (!this.#gc) return;
    this.#since = 0;
    // `gc(undefined)` is not `gc()`: a collection that left what the batches allocated alive.
    if (giveBack) this.#gc(giveBack);
    else this.#gc();
    const survived = this.#heapUsed();
    this.#spacing = Math.max(this.#everyBytes, survived / 4);
    this.#ceiling = survived + Math.max(2 * this.#everyBytes, survived / 4);
  }
}
