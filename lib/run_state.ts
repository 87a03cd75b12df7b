// What a command keeps from one run to the next in the data dir's run directory: a small JSON
// file each, written whole and atomically (0600), taken back only in the shape this build
// writes. Losing one costs the next run some time, never an answer.

import { join } from "./path.ts";
import type { DataPaths } from "./paths.ts";
import { writeFileAtomic } from "./private_fs.ts";

/** One kept file, `run/<name>`, holding values that `accepts` takes. */
export class RunState<T> {
  readonly #paths: Pick<DataPaths, "root" | "run">;
  readonly #file: string;
  readonly #accepts: (value: unknown) => value is T;

  constructor(
    paths: Pick<DataPaths, "root" | "run">,
    name: string,
    accepts: (value: unknown) => value is T,
  ) {
    this.#paths = paths;
    this.#file = join(paths.run, name);
    this.#accepts = accepts;
  }

  /** The data dir it is kept in. */
  get root(): string {
    return this.#paths.root;
  }

  /** The value kept, or null: none yet, or not one this build wrote. */
  read(): T | null {
    try {
      const value = JSON.parse(Deno.readTextFileSync(this.#file));
      return this.#accepts(value) ? value : null;
    } catch {
      return null;
    }
  }

  /**
   * Keeps `value` for the next run. Never creates the run directory (nothing ran here yet);
   * where it cannot be written (read-only), nothing is kept.
   */
  save(value: T): void {
    try {
      Deno.statSync(this.#paths.run);
      writeFileAtomic(this.#file, JSON.stringify(value), this.#paths.root);
    } catch {
      // Kept next time it can be.
    }
  }
}
