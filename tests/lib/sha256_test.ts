// lib/sha256.ts gives the standard SHA-256 in each form its callers take: hex, bytes, in parts.

import assert from "node:assert/strict";
import { sha256, sha256Hash, sha256Hex } from "../../lib/sha256.ts";

// FIPS 180-4's examples, and a string hashed as its UTF-8 bytes.
const ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Deno.test("sha256Hex(), sha256() and sha256Hash() give the standard SHA-256", () => {
  assert.equal(sha256Hex("abc"), ABC);
  assert.equal(sha256Hex(""), EMPTY);
  assert.equal(sha256Hex(new TextEncoder().encode("abc")), ABC);
  assert.equal(sha256("abc").toHex(), ABC);
  assert.equal(sha256("abc").length, 32);
  assert.equal(sha256Hash().update("a").update(Uint8Array.of(0x62, 0x63)).digest("hex"), ABC);
  assert.equal(sha256Hex("é漢字🙂"), sha256Hex(new TextEncoder().encode("é漢字🙂")));
});
