// Reproducible bytes for the tests of stored chunks (raw_test.ts, zstd_decode_test.ts).

/** A deterministic byte source (xorshift), so a failure names a reproducible case. */
export function bytesOf(seed: number, length: number, alphabet: number): Uint8Array {
  let x = seed | 1;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = 32 + ((x >>> 0) % alphabet);
  }
  return out;
}
