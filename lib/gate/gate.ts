// The gate every message passes before it is kept in a record, written, sent to a model or shown:
// it redacts secrets and labelled values, and withholds quarantined untrusted content. Each pass's
// decisions become a trail entry: gate names, labels and counts, never content.

import { Quarantine } from "./quarantine.ts";
import {
  applySpans,
  findAsSeen,
  findSecrets,
  LABEL_PATTERN,
  mapStrings,
  RANK_LABELLED,
  RANK_QUARANTINE,
  type Redactor,
  redactWindow,
  secretKeyLabel,
  secretLooking,
  type Span,
  type Tally,
} from "./secrets.ts";

/** Where a text is going. Allowed labels only ever apply to `"model"`. */
export type Destination = "disk" | "model" | "display";

/** The gates a pass can run, in the order a trail lists them. */
export const GATES = ["secrets", "labelled", "quarantine"] as const;

/** The name of one gate: built-in secret patterns, the user's labelled values, the quarantine. */
export type GateName = (typeof GATES)[number];

/** Labelled values shorter than this would redact ordinary words, so they are refused. */
export const MIN_LABELLED_LENGTH = 4;

/** What the gate does to a text it is given. */
export interface RedactOptions {
  /** Where the text is going (default `"disk"`, the strictest). */
  destination?: Destination;
}

/** The result of one pass of a text through the gate: the text, and what was decided. */
export interface Redaction {
  /** The text with secrets replaced by `[REDACTED:<label>]` and quarantined content withheld. */
  text: string;
  /** The labels that redacted something, each once, in the order first met. */
  labels: string[];
  /** How many times each label redacted something. */
  counts: Record<string, number>;
  /** Allowed labels let through unredacted to a model, with how many times. */
  passed: Record<string, number>;
  /** The quarantine references that replaced quarantined content, each once. */
  quarantined: string[];
  /** The gates that ran. */
  gates: GateName[];
  /** Where the text was going. */
  destination: Destination;
}

/** The result of one pass of a JSON-like value through the gate. */
export interface ValueRedaction<T> extends Omit<Redaction, "text"> {
  /** A copy of the value with every string redacted; the input is left untouched. */
  value: T;
}

/** A pass's decisions as a trail takes them: a `Redaction` is one, and so is a quarantine `put`. */
export interface GateDecision {
  /** The gates that ran. */
  gates?: Iterable<GateName>;
  /** Redactions per label. */
  counts?: Readonly<Record<string, number>>;
  /** Allowed labels let through to a model, per label. */
  passed?: Readonly<Record<string, number>>;
  /** Quarantine references involved (withheld or newly put). */
  quarantined?: Iterable<string>;
}

/** One line of a session's audit trail for one pass: gate names, labels and counts, no content. */
export interface TrailEntry {
  /** The gates that ran, in `GATES` order. */
  gates: GateName[];
  /** Redactions per label. */
  redacted: Record<string, number>;
  /** Allowed labels let through to a model, per label (present only when some were). */
  allowed?: Record<string, number>;
  /** How many distinct quarantine references were involved (present when the quarantine ran). */
  quarantined?: number;
}

/** The user's configuration of the gate. */
export interface GateOptions {
  /** Label to value: values to redact as `[REDACTED:<label>]` (config's `secrets`). */
  labelled?: Readonly<Record<string, string>>;
  /** Labels whose matches may be sent to a model (config's `allowedSecrets`). */
  allowed?: Iterable<string>;
}

interface Labelled {
  label: string;
  /** The value, and its JSON-escaped form when that differs. */
  needles: string[];
}

/**
 * The gate: built from the user's labelled values and allowed labels, it redacts texts and
 * JSON-like values and owns the quarantine. Build one with `createGate`.
 */
export class Gate {
  /** Untrusted content held in memory, never written. */
  readonly quarantine: Quarantine = new Quarantine();
  #labelled: Labelled[];
  #allowed: ReadonlySet<string>;

  /** Validates the options; see `createGate`. */
  constructor(options: GateOptions = {}) {
    const labelled: Labelled[] = [];
    for (const [label, value] of Object.entries(options.labelled ?? {})) {
      if (!LABEL_PATTERN.test(label)) {
        throw new RangeError(
          `Invalid secret label "${label}": expected 1 to 64 letters, digits, "_", "." or "-"`,
        );
      }
      if (typeof value !== "string") {
        throw new TypeError(`Invalid value for secret label "${label}": expected a string`);
      }
      if (value.length < MIN_LABELLED_LENGTH) {
        throw new RangeError(
          `Invalid value for secret label "${label}": expected at least ${MIN_LABELLED_LENGTH} characters`,
        );
      }
      const escaped = JSON.stringify(value).slice(1, -1);
      labelled.push({ label, needles: escaped === value ? [value] : [value, escaped] });
    }
    // Longer values first, so a value that contains another one is redacted whole.
    labelled.sort((a, b) => b.needles[0]!.length - a.needles[0]!.length);
    this.#labelled = labelled;
    const allowed = new Set<string>();
    for (const label of options.allowed ?? []) {
      if (typeof label !== "string" || !LABEL_PATTERN.test(label)) {
        throw new RangeError(
          `Invalid allowed label ${
            JSON.stringify(String(label))
          }: expected 1 to 64 letters, digits, "_", "." or "-"`,
        );
      }
      allowed.add(label);
    }
    this.#allowed = allowed;
  }

  /** The labels of the user's labelled values (never the values). */
  get labels(): string[] {
    return this.#labelled.map((l) => l.label);
  }

  /** The labels allowed to pass to a model. */
  get allowed(): string[] {
    return [...this.#allowed];
  }

  /**
   * Passes `text` through the gate. Secrets and labelled values become `[REDACTED:<label>]`
   * (allowed labels pass when the destination is `"model"`); for `"disk"` (the default) and
   * `"display"`, quarantined content is replaced by its reference first.
   *
   * @example
   * gate.redact(`key=${key}`).text; // "key=[REDACTED:openai-key]"
   */
  redact(text: string, options: RedactOptions = {}): Redaction {
    const destination = checkDestination(options.destination);
    const tally: Tally = { counts: new Map(), passed: new Map() };
    const quarantined = new Set<string>();
    const out = this.#pass(text, destination, tally, quarantined);
    return this.#result(destination, tally, quarantined, { text: out });
  }

  /** The fast path for derived text (destination `"disk"`): only the redacted text. */
  redactText(text: string): string {
    return this.#pass(text, "disk", undefined, undefined);
  }

  /**
   * Redacts `text` as the middle of `before + text + after`, for derived text as `redactText`
   * does: a secret running over an edge into a neighbour is still found, and its part inside
   * `text` is redacted. This is how a text cut in pieces (a long line's chunks) is redacted one
   * piece at a time without showing a secret in two halves.
   *
   * @example
   * gate.redactBetween("key sk-pro", "j-abc…", " done"); // "[REDACTED:openai-key]"
   */
  redactBetween(before: string, text: string, after: string): string {
    return redactWindow(before, text, after, (whole, spans) => {
      for (const { start, end, refs } of this.quarantine.find(whole)) {
        spans.push({
          start,
          end,
          label: refs[0]!,
          rank: RANK_QUARANTINE,
          replacement: refs.join(" "),
        });
      }
      this.#findAll(whole, spans);
    });
  }

  /**
   * Passes every string of a JSON-like value (a message, a tool call) through the gate and
   * returns a redacted copy. A string under a key that names a secret (`password`, `apiKey`,
   * `token`, …) is redacted whole unless it is empty or a placeholder.
   */
  redactValue<T>(value: T, options: RedactOptions = {}): ValueRedaction<T> {
    const destination = checkDestination(options.destination);
    const tally: Tally = { counts: new Map(), passed: new Map() };
    const quarantined = new Set<string>();
    const out = mapStrings(value, (s, key) => {
      const redacted = this.#pass(s, destination, tally, quarantined);
      const label = key === undefined ? undefined : secretKeyLabel(key);
      if (label === undefined || redacted.startsWith("[REDACTED:")) return redacted;
      if (!secretLooking(redacted) || /^quarantine:\d+$/.test(redacted)) return redacted;
      if (destination === "model" && this.#allowed.has(label)) {
        tally.passed.set(label, (tally.passed.get(label) ?? 0) + 1);
        return redacted;
      }
      tally.counts.set(label, (tally.counts.get(label) ?? 0) + 1);
      return `[REDACTED:${label}]`;
    });
    return this.#result(destination, tally, quarantined, { value: out });
  }

  #pass(
    text: string,
    destination: Destination,
    tally: Tally | undefined,
    quarantined: Set<string> | undefined,
  ): string {
    if (typeof text !== "string") {
      throw new TypeError(`Cannot redact: expected a string, got ${typeof text}`);
    }
    let input = text;
    if (destination !== "model" && this.quarantine.size > 0) {
      const w = this.quarantine.withholdText(input);
      input = w.message;
      if (quarantined !== undefined) { for (const ref of w.refs) quarantined.add(ref); }
    }
    const spans: Span[] = [];
    this.#findAll(input, spans);
    const allowed = destination === "model" && this.#allowed.size > 0 ? this.#allowed : undefined;
    return applySpans(input, spans, allowed, tally);
  }

  /** Collects the spans of built-in secrets and labelled values in `text`, as a reader sees it. */
  #findAll(text: string, spans: Span[]): void {
    findAsSeen(text, spans, (seen, found) => this.#findIn(seen, found));
  }

  #findIn(text: string, spans: Span[]): void {
    findSecrets(text, spans);
    for (const { label, needles } of this.#labelled) {
      for (const needle of needles) {
        for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) {
          spans.push({ start: i, end: i + needle.length, label, rank: RANK_LABELLED });
        }
      }
    }
  }

  #result<E extends object>(
    destination: Destination,
    tally: Tally,
    quarantined: Set<string>,
    extra: E,
  ): Omit<Redaction, "text"> & E {
    const gates: GateName[] = ["secrets"];
    if (this.#labelled.length > 0) gates.push("labelled");
    if (destination !== "model") gates.push("quarantine");
    return {
      ...extra,
      labels: [...tally.counts.keys()],
      counts: Object.fromEntries(tally.counts),
      passed: Object.fromEntries(tally.passed),
      quarantined: [...quarantined],
      gates,
      destination,
    };
  }

  /** Labels and counts only: never a labelled value or quarantined content. */
  toJSON(): { labelled: string[]; allowed: string[]; quarantine: { refs: number } } {
    return { labelled: this.labels, allowed: this.allowed, quarantine: this.quarantine.toJSON() };
  }

  /** What `Deno.inspect` shows of it (printing it, say): what `toJSON` shows. */
  [Symbol.for("Deno.customInspect")](): string {
    return `Gate ${JSON.stringify(this)}`;
  }
}

function checkDestination(destination: Destination | undefined): Destination {
  const d = destination ?? "disk";
  if (d !== "disk" && d !== "model" && d !== "display") {
    throw new RangeError(
      `Unknown destination ${JSON.stringify(String(d))}: expected "disk", "model" or "display"`,
    );
  }
  return d;
}

/**
 * Builds the gate from the user's labelled values and the labels allowed to reach a model.
 *
 * @example
 * const gate = createGate({ labelled: { "work-db": dbPassword }, allowed: ["work-db"] });
 * gate.redact(text, { destination: "model" });
 */
export function createGate(options: GateOptions = {}): Gate {
  return new Gate(options);
}

/**
 * A redaction of derived text: called on a text, or through `between` on a piece of a longer text
 * seen with its neighbours (see `Gate.redactBetween`).
/** The redaction of derived text by `gate` (destination `"disk"`), as a `Redactor`. */
export function redactorOf(gate: Gate): Redactor {
  return Object.assign((text: string) => gate.redactText(text), {
    between: (before: string, text: string, after: string) =>
      gate.redactBetween(before, text, after),
  });
}

/**
 * The audit trail's record of one pass: which gates ran and what they decided, as gate names,
 * labels and counts, never content. Takes `Redaction`s and other decisions, such as
 * `{ gates: ["quarantine"], quarantined: [ref] }` for content put in quarantine.
 *
 * @example
 * trailEntry([gate.redact(prompt), { gates: ["quarantine"], quarantined: [ref] }]);
 * // { gates: ["secrets", "quarantine"], redacted: { "openai-key": 1 }, quarantined: 1 }
 */
export function trailEntry(decisions: GateDecision | Iterable<GateDecision>): TrailEntry {
  const list: Iterable<GateDecision> = isIterable(decisions) ? decisions : [decisions];
  const ran = new Set<GateName>();
  const redacted = new Map<string, number>();
  const allowed = new Map<string, number>();
  const refs = new Set<string>();
  for (const d of list) {
    for (const g of d.gates ?? []) if ((GATES as readonly string[]).includes(g)) ran.add(g);
    addCounts(redacted, d.counts);
    addCounts(allowed, d.passed);
    for (const ref of d.quarantined ?? []) {
      if (typeof ref === "string" && /^quarantine:\d+$/.test(ref)) refs.add(ref);
    }
  }
  if (refs.size > 0) ran.add("quarantine");
  const entry: TrailEntry = {
    gates: GATES.filter((g) => ran.has(g)),
    redacted: sortedRecord(redacted),
  };
  if (allowed.size > 0) entry.allowed = sortedRecord(allowed);
  if (ran.has("quarantine")) entry.quarantined = refs.size;
  return entry;
}

function isIterable(v: unknown): v is Iterable<GateDecision> {
  return typeof v === "object" && v !== null && Symbol.iterator in v;
}

/** Adds counts, keeping only label-shaped keys so nothing else can reach a trail. */
function addCounts(
  into: Map<string, number>,
  counts: Readonly<Record<string, number>> | undefined,
) {
  if (counts === undefined) return;
  for (const [label, n] of Object.entries(counts)) {
    if (!Number.isSafeInteger(n) || n <= 0) continue;
    const key = LABEL_PATTERN.test(label) ? label : "invalid-label";
    into.set(key, (into.get(key) ?? 0) + n);
  }
}

function sortedRecord(map: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
