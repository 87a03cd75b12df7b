// The slice: a smaller corpus of the bench's seed that the costlier diagnostics run on at size
// (the capture's breakdown, the watch part, the migration, the count of the symbols' hits: the
// literal scans), so that a 10 GB run measures them where they cost a tenth. It is generated under
// the work folder and captured into a store of its own, each on first use, and removed with the
// work folder. At the bench's own size there is no slice: those parts run on the bench's corpus and
// store (bench/run.ts).

import { join } from "node:path";
import { type Context, loadContext, openStore, redactorFor } from "../lib/context.ts";
import { envFrom } from "../lib/env.ts";
import type { Redactor } from "../lib/gate/secrets.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { firstCapture } from "./_capture.ts";
import { type CorpusManifest, corpusVars, generateInChild, keptCorpus } from "./corpus.ts";
import { formatBytes } from "./_util.ts";

/** A corpus, and the environment the commands that capture it run with. */
export interface SliceCorpus {
  manifest: CorpusManifest;
  /** Its agents' folders, HOME and the config dir; LOGBOOK_DATA_DIR is the command's to set. */
  vars: Record<string, string>;
}

/** A corpus captured into a store. */
export interface SliceStore {
  ctx: Context;
  store: HistoryStore;
  redact: Redactor;
  /** The source bytes captured (of the agents captured). */
  bytes: number;
  /** The capture from empty that made the store, in ms. */
  captureMs: number;
}

/** The slice of one run: its corpus and its store, each made when first asked for. */
export class Slice {
  readonly size: number;
  readonly dir: string;
  #options: SliceOptions;
  #corpus: Promise<SliceCorpus> | null = null;
  #store: Promise<SliceStore> | null = null;

  constructor(options: SliceOptions) {
    this.#options = options;
    this.size = options.size;
    this.dir = join(options.work, "slice");
  }

  /** Whether a part asked for the slice. */
  get used(): boolean {
    return this.#corpus !== null;
  }

  /** The slice's corpus, generated in `work/slice/corpus` (or reused there) on first call. */
  corpus(): Promise<SliceCorpus> {
    return this.#corpus ??= this.#makeCorpus();
  }

  /** The slice's store, captured from empty in `work/slice/data` on first call. */
  store(): Promise<SliceStore> {
    return this.#store ??= this.#makeStore();
  }

  /** Closes the slice's store, if it was opened (the work folder's clean-up removes the files). */
  async close(): Promise<void> {
    const made = await this.#store?.catch(() => null);
    made?.store.close();
  }

  async #makeCorpus(): Promise<SliceCorpus> {
    const { seed, home, config, log } = this.#options;
    const dir = join(this.dir, "corpus");
    let manifest = keptCorpus(dir, this.size, seed);
    if (!manifest) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.mkdir(dir, { recursive: true });
      log(`generating the ${formatBytes(this.size)} slice (seed ${seed}) in ${dir}`);
      manifest = await generateInChild(dir, { size: this.size, seed, log });
    }
    return { manifest, vars: corpusVars(dir, home, config) };
  }

  async #makeStore(): Promise<SliceStore> {
    const { manifest, vars } = await this.corpus();
    const data = join(this.dir, "data");
    await Deno.remove(data, { recursive: true }).catch(() => {});
    await Deno.mkdir(data, { recursive: true });
    const withData = { ...vars, LOGBOOK_DATA_DIR: data };
    const ctx = loadContext({ env: envFrom(withData) });
    const store = openStore(ctx);
    const redact = redactorFor(ctx);
    const log = (message: string) => this.#options.log(`slice: ${message}`);
    try {
      const first = await firstCapture({ store, vars: withData, manifest, rounds: 1, log });
      return { ctx, store, redact, bytes: first.bytes, captureMs: first.ms };
    } catch (err) {
      store.close();
      throw err;
    }
  }
}

export interface SliceOptions {
  /** The slice corpus's target bytes. */
  size: number;
  seed: number;
  work: string;
  home: string;
  config: string;
  log: (message: string) => void;
}
