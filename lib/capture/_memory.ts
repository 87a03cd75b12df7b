// Capture's memory between batches. A batch leaves its lines' bytes behind as garbage outside the
// JS heap (a backing store per line), which V8 frees only when its own heap next needs collecting:
// long after, so the peak of a capture grew with the corpus. Where the runtime exposes `gc` (the
// reindex and start tasks run with `--v8-flags=--expose-gc`), it is called once every
// `everyBytes` of committed source bytes, which keeps the peak to a few batches' worth.

/** Frees the garbage of committed batches every `everyBytes` of source, where `gc` is exposed. */
export class GarbageRelease {
  readonly #gc = (globalThis as { gc?: () => void }).gc;
  readonly #everyBytes: number;
  #since = 0;

  constructor(everyBytes = 8 * 1024 * 1024) {
    this.#everyBytes = everyBytes;
  }

  /** Counts `bytes` of source committed; collects garbage when enough has gone by. */
  committed(bytes: number): void {
    if (!this.#gc) return;
    this.#since += bytes;
    if (this.#since < this.#everyBytes) return;
    this.#since = 0;
    this.#gc();
  }
}
