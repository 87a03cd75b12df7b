// What a mistyped word was meant to be: a few letters off, or begun by it (anywhere in it when
// asked), closest first, and nothing from far away.

import assert from "node:assert/strict";
import { closeTo, editDistance } from "../../lib/edit_distance.ts";

Deno.test("editDistance() counts a swap of two neighbours as one edit", () => {
  assert.equal(editDistance("search", "search"), 0);
  assert.equal(editDistance("serach", "search"), 1);
  assert.equal(editDistance("cleekly", "cleekely"), 1);
  assert.equal(editDistance("", "abc"), 3);
});

Deno.test("closeTo() lists the close candidates, closest first, inside ones when asked", () => {
  const names = ["cleekely", "clerk", "alpha", "cleekely-web"];
  assert.deepEqual(closeTo("cleekly", names), ["cleekely"]);
  assert.deepEqual(closeTo("cleek", names), ["cleekely", "clerk", "cleekely-web"]);
  assert.deepEqual(closeTo("ekely", names), []);
  assert.deepEqual(closeTo("ekely", names, { inside: true }), ["cleekely", "cleekely-web"]);
  assert.deepEqual(closeTo("zzz", names), []);
});
