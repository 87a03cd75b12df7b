// Memory between batches, for capture and push. A batch leaves its bytes behind as garbage, outside
// the JS heap (a backing store per line) and in it (a push's texts), which V8 frees only when its
// own heap next needs collecting: long after, so the peak grew with what was read. Where the
// runtime exposes `gc` (the tasks run with `--v8-flags=--expose-gc`), it is called once every
// `everyBytes` of committed bytes (or further apart, below), which keeps the peak to a few
// batches' worth.

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
  readonly #gc: (() => void) | undefined;
  readonly #heapUsed: () => number;
  readonly #everyBytes: number;
  #since = 0;
  #spacing: number;
  /** The heap at which to collect before `spacing` bytes pass: what survived, and a quarter more. */
  #ceiling = Infinity;

  constructor(
    everyBytes = 8 * 1024 * 1024,
    gc = (globalThis as { gc?: () => void }).gc,
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
    if (this.#since < this.#spacing && this.#heapUsed() < this.#ceiling) return;
    this.collect();
  }

  /**
   * Collects now: once a large pass's plan is made, all that its discovery held but the plan is
   * garbage (the 10 GB capture's heap held 98 MiB until its first collection, 43 after it).
   */
  collect(): void {
    if (!this.#gc) return;
    this.#since = 0;
    this.#gc();
    const survived = this.#heapUsed();
    this.#spacing = Math.max(this.#everyBytes, survived / 4);
    this.#ceiling = survived + Math.max(2 * this.#everyBytes, survived / 4);
  }
}
