// Joining byte pieces: a line's chunks, or the pieces read of one, into one buffer.

/** `parts` (of `length` bytes in all) as one buffer; the part itself when there is one. */
export function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
