// What was typed at logbook's prompts (`prompt-history.jsonl`: capped, consecutive duplicates
// collapsed, each entry with its time and project), which the chat prompt walks and searches.

import { assertNoSymlinkInside, SymlinkRefusedError, writeFileAtomic } from "../private_fs.ts";

/** How many entries the history keeps; the oldest go first. */
export const HISTORY_CAP = 1000;

/** One prompt as the history keeps it. Entries written before time or project were kept lack them. */
export interface HistoryEntry {
  text: string;
  /** When it was sent (ISO). */
  at?: string;
  /** The project root it was sent from. */
  project?: string;
}

/** An entry together with the exact line it was read from, so old lines are written back as they came. */
interface StoredLine {
  entry: HistoryEntry;
  line: string;
}

/** What `add` did, so a cancelled prompt can be taken back out exactly. */
export interface HistoryMark {
  entry: HistoryEntry;
  line: string;
  /** The entry a consecutive duplicate replaced, put back if the prompt is cancelled. */
  replaced?: StoredLine;
}

/** Options of a prompt history. */
export interface PromptHistoryOptions {
  /** `prompt-history.jsonl` in the data dir. */
  path: string;
  /** The data dir (files are written owner-only inside it, links refused). */
  root: string;
  /** The project root entries are tagged with. */
  project: string;
  /** Passes each prompt through the gate before it is written. */
  redact: (text: string) => string;
  /** With incognito nothing is written; the history is still read. */
  incognito?: boolean;
  now?: () => number;
  cap?: number;
}

/**
 * The prompt history file. Reading never fails: a missing, unreadable or corrupt file reads as
 * empty. Writes rewrite the file atomically from what is on disk at that moment, so two sessions
 * do not lose each other's prompts; they throw when the disk refuses.
 */
export class PromptHistory {
  readonly #o: Required<Omit<PromptHistoryOptions, "incognito">> & { incognito: boolean };

  constructor(options: PromptHistoryOptions) {
    this.#o = {
      incognito: false,
      now: Date.now,
      cap: HISTORY_CAP,
      ...options,
    };
  }

  /** Every entry, oldest first; empty when the file is missing or corrupt. */
  entries(): HistoryEntry[] {
    return this.#read().map((s) => s.entry);
  }

  /** The texts, oldest first, as the prompt's history walks them. */
  texts(): string[] {
    return this.entries().map((e) => e.text);
  }

  /**
   * Records a prompt (through the gate). A prompt equal to the newest entry replaces it rather
   * than adding a second one. Returns undefined, writing nothing, for a blank prompt or incognito.
   */
  add(text: string): HistoryMark | undefined {
    if (this.#o.incognito || text.trim() === "") return undefined;
    const entry: HistoryEntry = {
      text: this.#o.redact(text),
      at: new Date(this.#o.now()).toISOString(),
      project: this.#o.project,
    };
    const line = JSON.stringify(entry);
    const lines = this.#read();
    const last = lines.at(-1);
    let replaced: StoredLine | undefined;
    if (last && last.entry.text === entry.text) replaced = lines.pop();
    lines.push({ entry, line });
    this.#write(lines.slice(-this.#o.cap));
    return replaced ? { entry, line, replaced } : { entry, line };
  }

  /** Takes a cancelled prompt back out (and puts back the duplicate it collapsed, if any). */
  remove(mark: HistoryMark): void {
    if (this.#o.incognito) return;
    const lines = this.#read();
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i]!.line === mark.line) {
        lines.splice(i, 1, ...(mark.replaced ? [mark.replaced] : []));
        this.#write(lines);
        return;
      }
    }
  }

  #read(): StoredLine[] {
    let text: string;
    try {
      assertNoSymlinkInside(this.#o.path, this.#o.root);
      text = new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(this.#o.path));
    } catch (err) {
      if (
        err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied ||
        err instanceof Deno.errors.NotADirectory || err instanceof Deno.errors.IsADirectory ||
        err instanceof SymlinkRefusedError || err instanceof TypeError
      ) {
        return [];
      }
      throw err;
    }
    const out: StoredLine[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const entry = parseLine(line);
      // One unreadable line means the file is not what this build wrote: it reads as no history.
      if (entry === undefined) return [];
      out.push({ entry, line });
    }
    return out;
  }

  #write(lines: StoredLine[]): void {
    const text = lines.map((l) => l.line + "\n").join("");
    writeFileAtomic(this.#o.path, text, this.#o.root);
  }
}

/** An entry from one line: an object with a `text`, or (older histories) a bare JSON string. */
function parseLine(line: string): HistoryEntry | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof json === "string") return { text: json };
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  if (typeof o.text !== "string") return undefined;
  const entry: HistoryEntry = { text: o.text };
  if (typeof o.at === "string") entry.at = o.at;
  if (typeof o.project === "string") entry.project = o.project;
  return entry;
}
