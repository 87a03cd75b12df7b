// What a model call costs, offline: a dated table of list prices per model (USD per million
// tokens: input, output, cache write, cache read, with the higher tier some models charge past
// 200,000 input tokens), which config's `prices` overrides or extends. A model the table does not
// know is not priced: the report shows its tokens and names it.

/** The day the table's prices were last checked against the providers' own pricing pages. */
export const PRICES_AS_OF = "2026-12-03";

/** One model's prices, USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  /** Prices for a call whose input (cache included) is over `LONG_CONTEXT` tokens. */
  tier?: Omit<Price, "tier">;
}

/**
 * What may follow a known model's name in a name of the same model: a date (`-20250929`,
 * `-2025-08-07`) or `-latest`. Anything else is another model (`claude-opus-4-6` is not
 * `claude-opus-4`'s), which stays unpriced rather than priced as its elder.
 */
const DATED = /^-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * Input over this many tokens is billed at the long-context tier where a model has one. The
 * store's usage sums keep such calls apart at this very number (migration 0015's tier 1).
 */
export const LONG_CONTEXT = 200_000;

const claude = (input: number, output: number, long?: [number, number]): Price => ({
  input,
  output,
  // Claude Code writes 5-minute cache entries: 1.25 × input; reads are 0.1 × input.
  cacheWrite: input * 1.25,
  cacheRead: input / 10,
  ...(long
    ? {
      tier: {
        input: long[0],
        output: long[1],
        cacheWrite: long[0] * 1.25,
        cacheRead: long[0] / 10,
      },
    }
    : {}),
});

/** OpenAI and Google bill no cache write; a cached input token costs `cached`. */
const cached = (input: number, output: number, cachedInput: number): Price => ({
  input,
  output,
  cacheWrite: 0,
  cacheRead: cachedInput,
});

/**
 * List prices by model name (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`'s, see
 * `DATED`): the providers' published prices as of `PRICES_AS_OF`, equal to the offline table
 * ccusage 19.0.3 ships for every model both know (the conformance suite compares the two).
 */
export const PRICES: Readonly<Record<string, Price>> = {
  "claude-opus-4-7": claude(5, 25),
  "claude-opus-4-6": claude(5, 25),
  "claude-opus-4-5": claude(5, 25),
  "claude-opus-4-1": claude(15, 75),
  "claude-opus-4": claude(15, 75),
  "claude-sonnet-4-6": claude(3, 15),
  "claude-sonnet-4-5": claude(3, 15, [6, 22.5]),
  "claude-sonnet-4": claude(3, 15, [6, 22.5]),
  "claude-haiku-4-5": claude(1, 5),
  "claude-3-7-sonnet": claude(3, 15),
  "claude-3-5-sonnet": claude(3, 15),
  "claude-3-5-haiku": claude(0.8, 4),
  "claude-3-opus": claude(15, 75),
  "claude-3-haiku": claude(0.25, 1.25),
  "gpt-5.5": cached(5, 30, 0.5),
  "gpt-5.2-codex": cached(1.75, 14, 0.175),
  "gpt-5.2": cached(1.75, 14, 0.175),
  "gpt-5.1-codex-mini": cached(0.25, 2, 0.025),
  "gpt-5.1-codex": cached(1.25, 10, 0.125),
  "gpt-5.1": cached(1.25, 10, 0.125),
  "gpt-5-codex": cached(1.25, 10, 0.125),
  "gpt-5-mini": cached(0.25, 2, 0.025),
  "gpt-5-nano": cached(0.05, 0.4, 0.005),
  "gpt-5": cached(1.25, 10, 0.125),
  "gpt-4.1-mini": cached(0.4, 1.6, 0.1),
  "gpt-4.1-nano": cached(0.1, 0.4, 0.025),
  "gpt-4.1": cached(2, 8, 0.5),
  "gpt-4o-mini": cached(0.15, 0.6, 0.075),
  "gpt-4o": cached(2.5, 10, 1.25),
  "o4-mini": cached(1.1, 4.4, 0.275),
  "o3": cached(2, 8, 0.5),
  "gemini-2.5-pro": {
    ...cached(1.25, 10, 0.31),
    tier: cached(2.5, 15, 0.625),
  },
  "gemini-2.5-flash-lite": cached(0.1, 0.4, 0.025),
  "gemini-2.5-flash": cached(0.3, 2.5, 0.075),
};

const FREE: Price = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };

/** The tokens of one call, as the store holds them. */
export interface Tokens {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** Prices by model name: the table, and config's over it. */
export class PriceBook {
  readonly #prices: [string, Price][];
  readonly #memo = new Map<string, Price | null>();

  constructor(overrides: Readonly<Record<string, Partial<Price>>> = {}) {
    const given = Object.entries(overrides).map(([name, p]) => [name, { ...FREE, ...p }]);
    const all: Record<string, Price> = { ...PRICES, ...Object.fromEntries(given) };
    this.#prices = Object.entries(all).map(([name, price]) => [name.toLowerCase(), price]);
  }

  /** The prices of `model` (a provider prefix such as `anthropic/` ignored), or null. */
  of(model: string | null): Price | null {
    if (!model) return null;
    const known = this.#memo.get(model);
    if (known !== undefined) return known;
    const name = model.toLowerCase().replace(/^[\w.-]+\//, "");
    const found =
      this.#prices.find(([known]) =>
        name === known || (name.startsWith(known) && DATED.test(name.slice(known.length)))
      )?.[1] ?? null;
    this.#memo.set(model, found);
    return found;
  }

  /**
   * What a call of `model` with `tokens` costs in USD, or null when the model has no price; also
   * what calls of one tier cost together, `long` saying whether theirs is the long-context one.
   */
  cost(
    model: string | null,
    tokens: Tokens,
    long = tokens.input + tokens.cacheWrite + tokens.cacheRead > LONG_CONTEXT,
  ): number | null {
    const price = this.of(model);
    if (!price) return null;
    const p = price.tier && long ? price.tier : price;
    return (tokens.input * p.input + tokens.output * p.output + tokens.cacheWrite * p.cacheWrite +
      tokens.cacheRead * p.cacheRead) / 1_000_000;
  }
}
