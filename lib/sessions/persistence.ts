// Where a session's files go (the session store and the prompt history), and the one warning a
// session gives when they cannot be written: a failed write never stops a session.

import type { PromptHistory } from "./prompt_history.ts";
import type { SessionStore } from "./records.ts";
import { messageOf } from "../format.ts";

/**
 * Where a session's files go: the session store and the prompt history. A write that fails does
 * not stop the session; the first failure becomes one warning, later ones are silent.
 */
export class Persistence {
  readonly store: SessionStore;
  readonly history: PromptHistory | undefined;
  #warned = false;
  #pending: string[] = [];

  constructor(store: SessionStore, history?: PromptHistory) {
    this.store = store;
    this.history = history;
  }

  /** True when nothing at all is written (it cannot be turned off). */
  get incognito(): boolean {
    return this.store.incognito;
  }

  /** Runs a write; a failure (other than a programming error) is turned into the one warning. */
  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) throw err;
      if (!this.#warned) {
        this.#warned = true;
        const reason = messageOf(err);
        this.#pending.push(
          `This session is not being saved: cannot write in the data dir "${this.store.root}": ${reason}`,
        );
      }
      return undefined;
    }
  }

  /** Queues a warning to show (every call is shown once). */
  note(warning: string): void {
    this.#pending.push(warning);
  }

  /** Warnings not yet shown; each is returned once. */
  takeWarnings(): string[] {
    const out = this.#pending;
    this.#pending = [];
    return out;
  }
}
