// `PieceRedactor`: a text that arrives in pieces is redacted piece by piece with its neighbours
// in view, so no piece shows part of a secret that crosses its edges. `LinePieces`: a streamed
// line's text, row by row, is indexed whole up to a size, and cut only past it.

import assert from "node:assert/strict";
import { createGate, redactorOf } from "../../../lib/gate/gate.ts";
import { LinePieces, PieceRedactor, type RedactedPiece } from "../../../lib/capture/pieces.ts";
import { fake } from "../_secret_shapes.ts";

Deno.test("a secret across three pieces is redacted in each, and the ids keep their order", () => {
  const key = "sk-" + "proj-" + fake(80);
  const text = `first words ${key} last words`;
  // The middle piece is shorter than the overlap: the first waits for the third.
  const cuts = [0, 20, 30, text.length];
  const pieces = new PieceRedactor(redactorOf(createGate()), 64);
  const out: RedactedPiece[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    out.push(...pieces.push(i + 1, text.slice(cuts[i], cuts[i + 1])));
  }
  out.push(...pieces.end());
  assert.deepEqual(out, [
    { id: 1, text: "first words [REDACTED:openai-key]" },
    { id: 2, text: "[REDACTED:openai-key]" },
    { id: 3, text: "[REDACTED:openai-key] last words" },
  ]);
});

Deno.test("pieces are released once the text after them is long enough", () => {
  const pieces = new PieceRedactor(redactorOf(createGate()), 10);
  assert.deepEqual(pieces.push(1, "  alpha  "), []);
  assert.deepEqual(pieces.push(2, "beta"), []);
  assert.deepEqual(pieces.push(3, "gamma delta"), [
    { id: 1, text: "alpha" },
    { id: 2, text: "beta" },
  ]);
  assert.deepEqual(pieces.push(4, ""), []);
  assert.deepEqual(pieces.end(), [{ id: 3, text: "gamma delta" }, { id: 4, text: "" }]);
  assert.deepEqual(pieces.end(), []);
});

Deno.test("a line's text is one piece at its first row, however many rows it spans", () => {
  const pieces = new LinePieces(redactorOf(createGate()), 1000);
  const rows = ["", "", "", "\nthe pasted ", "kestrel dia", "gram", ""];
  const out = rows.flatMap((text, i) => pieces.add(i + 1, text));
  out.push(...pieces.end());
  assert.deepEqual(out, [{ id: 1, text: "the pasted kestrel diagram" }]);
});

Deno.test("a line's text is cut only past the size, at a row with words", () => {
  const pieces = new LinePieces(redactorOf(createGate()), 10);
  const rows = ["short ", "words ", "  ", "then more words", " and the end"];
  const out = rows.flatMap((text, i) => pieces.add(i + 1, text));
  out.push(...pieces.end());
  // Past 10 characters after row 2; row 3 has no words, so the next piece starts at row 4.
  assert.deepEqual(out, [
    { id: 1, text: "short words" },
    { id: 4, text: "then more words" },
    { id: 5, text: "and the end" },
  ]);
});
