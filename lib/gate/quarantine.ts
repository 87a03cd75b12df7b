// The quarantine: untrusted content (a fetched page, a tool's output) held in memory under a
// reference, and withheld wherever it would be written or shown.

import { mapStrings } from "./secrets.ts";

/** What `Quarantine.withhold` returns: the message with quarantined content replaced. */
export interface Withheld<T> {
  /** A copy of the message in which each quarantined content is replaced by its reference. */
  message: T;
  /** The references that replaced something, each once. */
  refs: string[];
}

interface QuarantineEntry {
  content: string;
  source: string | undefined;
}

/**
 * Untrusted content held in memory under references (`quarantine:1`, `quarantine:2`, …) from a
 * counter that only ever goes up. Nothing in it is ever serialised: `toJSON` gives only the count.
 *
 * @example
 * const ref = gate.quarantine.put(page, { source: "https://example.com" }); // "quarantine:1"
 * const { message } = gate.quarantine.withhold({ role: "tool", content: page });
 * // message.content === "quarantine:1"
 */
export class Quarantine {
  #entries = new Map<string, QuarantineEntry>();
  #counter = 0;

  /** Holds `content` and returns its new reference. */
  put(content: string, options: { source?: string } = {}): string {
    if (typeof content !== "string") {
      throw new TypeError(`Cannot quarantine content: expected a string, got ${typeof content}`);
    }
    this.#counter++;
    const ref = `quarantine:${this.#counter}`;
    this.#entries.set(ref, { content, source: options.source });
    return ref;
  }

  /** The content held under `ref`, or undefined. */
  get(ref: string): string | undefined {
    return this.#entries.get(ref)?.content;
  }

  /** Whether `ref` names held content. */
  has(ref: string): boolean {
    return this.#entries.has(ref);
  }

  /** Where the content under `ref` came from, as given to `put`. */
  sourceOf(ref: string): string | undefined {
    return this.#entries.get(ref)?.source;
  }

  /** How many contents are held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Replaces every quarantined content in `text` by its reference. */
  withholdText(text: string): Withheld<string> {
    const found = this.find(text);
    if (found.length === 0) return { message: text, refs: [] };
    const out: string[] = [];
    const refs = new Set<string>();
    let last = 0;
    for (const { start, end, refs: group } of found) {
      for (const ref of group) refs.add(ref);
      out.push(text.slice(last, start), group.join(" "));
      last = end;
    }
    out.push(text.slice(last));
    return { message: out.join(""), refs: [...refs] };
  }

  /**
   * Where quarantined content occurs in `text`, in order; overlapping contents are one stretch
   * with all their references, so no part of either survives when it is replaced.
   */
  find(text: string): { start: number; end: number; refs: string[] }[] {
    if (this.#entries.size === 0 || text.length === 0) return [];
    const hits: { start: number; end: number; ref: string }[] = [];
    const seen = new Set<string>();
    for (const [ref, { content }] of this.#entries) {
      // The same content put twice is withheld under its first reference.
      if (content.length === 0 || seen.has(content)) continue;
      seen.add(content);
      for (let i = text.indexOf(content); i !== -1; i = text.indexOf(content, i + content.length)) {
        hits.push({ start: i, end: i + content.length, ref });
      }
    }
    hits.sort((a, b) => a.start - b.start || b.end - a.end);
    const found: { start: number; end: number; refs: string[] }[] = [];
    let i = 0;
    while (i < hits.length) {
      const first = hits[i]!;
      let end = first.end;
      const refs = [first.ref];
      for (i++; i < hits.length && hits[i]!.start < end; i++) {
        const h = hits[i]!;
        end = Math.max(end, h.end);
        if (!refs.includes(h.ref)) refs.push(h.ref);
      }
      found.push({ start: first.start, end, refs });
    }
    return found;
  }

  /**
   * Replaces quarantined content by its reference in every string of a JSON-like message
   * (strings, arrays, plain objects), returning a copy; call it on anything about to be written.
   */
  withhold<T>(message: T): Withheld<T> {
    const refs = new Set<string>();
    const value = mapStrings(message, (s) => {
      const w = this.withholdText(s);
      for (const ref of w.refs) refs.add(ref);
      return w.message;
    });
    return { message: value, refs: [...refs] };
  }

  /** Only the count, so an accidental `JSON.stringify` cannot leak quarantined content. */
  toJSON(): { refs: number } {
    return { refs: this.#entries.size };
  }

  /** What `Deno.inspect` shows of it (printing it, say): the count only. */
  [Symbol.for("Deno.customInspect")](): string {
    return `Quarantine { refs: ${this.#entries.size} }`;
  }
}
