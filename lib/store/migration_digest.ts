// Digests of a migration's target for its verification: a target that cannot be read back row by
// row in id order (a text index is read term by term) is checked as a multiset of items, each
// item tagged with the source row it came from. Items are hashed one by one and summed per block
// (a run of consecutive batches), so the order they are read in does not matter: the target as
// scanned and the target as derived again from the source give the same sums when they hold the
// same items. An item is a text at a position (a term where the index holds it): a text index
// gives its items term by term, so a text is hashed once for the run of items that share it.

/** Most blocks a migration's digests are kept for; each is a run of consecutive batches. */
export const DIGEST_BLOCKS = 64;

/**
 * How items are hashed: a verification begun by a build that hashed them otherwise starts again
 * (its sums so far would never agree with this build's).
 */
export const DIGEST_VERSION = 2;

/** Where a target item goes: the id of the source row it came from, its position and its text. */
export type ItemSink = (id: number, position: number, text: string) => void;

/**
 * Per block: the item count and two independent 32-bit sums of the items' hashes, wrapping
 * (a 64-bit multiset hash). An item that is missing, extra or different changes its block's
 * sums but for a chance of 2^-64; this finds damage, not an adversary who can write the store.
 */
export class BlockDigests {
  readonly #lanes: Uint32Array;
  /** The last text hashed, and its hash so far in each lane. */
  #text: string | null = null;
  #textHash1 = 0;
  #textHash2 = 0;

  constructor(readonly blocks: number, hex?: string) {
    this.#lanes = new Uint32Array(blocks * 3);
    if (hex) {
      if (hex.length !== this.#lanes.length * 8) {
        throw new RangeError(`Expected ${this.#lanes.length * 8} hex digits: got ${hex.length}`);
      }
      for (let i = 0; i < this.#lanes.length; i++) {
        this.#lanes[i] = parseInt(hex.slice(i * 8, i * 8 + 8), 16);
      }
    }
  }

  /** Adds one item of source row `id` to `block`: `text` at `position`. */
  add(block: number, id: number, position: number, text: string): void {
    if (text !== this.#text) {
      this.#text = text;
      this.#textHash1 = textHash(0x9747b28c, text);
      this.#textHash2 = textHash(0x5bd1e995, text);
    }
    const at = block * 3;
    this.#lanes[at] = this.#lanes[at]! + 1;
    this.#lanes[at + 1] = this.#lanes[at + 1]! + itemHash(this.#textHash1, id, position);
    this.#lanes[at + 2] = this.#lanes[at + 2]! + itemHash(this.#textHash2, id, position);
  }

  /** Items added to `block`. */
  count(block: number): number {
    return this.#lanes[block * 3]!;
  }

  /** Items added in all. */
  total(): number {
    let n = 0;
    for (let b = 0; b < this.blocks; b++) n += this.count(b);
    return n;
  }

  /** The blocks whose sums differ from `other`'s. */
  differing(other: BlockDigests): number[] {
    const out: number[] = [];
    for (let b = 0; b < this.blocks; b++) {
      const at = b * 3;
      if (
        this.#lanes[at] !== other.#lanes[at] || this.#lanes[at + 1] !== other.#lanes[at + 1] ||
        this.#lanes[at + 2] !== other.#lanes[at + 2]
      ) out.push(b);
    }
    return out;
  }

  toHex(): string {
    return Array.from(this.#lanes, (v) => v.toString(16).padStart(8, "0")).join("");
  }
}

/**
 * A 32-bit hash (MurmurHash3's mixing, seeded) of an item is its text's UTF-16 code units and
 * length, then its source id and its position, each as two 32-bit halves: a sequence whose
 * length gives the text's, so no two different items are the same input. `textHash` mixes the
 * text, shared by the items that have it; `itemHash` goes on from there.
 */
function textHash(seed: number, text: string): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = mix(h, text.charCodeAt(i));
  return mix(h, text.length);
}

function itemHash(textHashed: number, id: number, position: number): number {
  let h = mix(textHashed, id >>> 0);
  h = mix(h, Math.floor(id / 0x1_0000_0000) >>> 0);
  h = mix(h, position >>> 0);
  h = mix(h, Math.floor(position / 0x1_0000_0000) >>> 0);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mix(h: number, value: number): number {
  let k = Math.imul(value, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}
