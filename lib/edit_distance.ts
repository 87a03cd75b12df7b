// How far apart two words are, for guessing what a mistyped name meant (an option, a command, a
// project).

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidates close enough to a mistyped `word` to be what was meant, closest first: a few
 * letters off, or begun by it (anywhere in it, with `inside`), else none.
 *
 * @example
 * closeTo("serch", ["search", "show"]); // ["search"]
 */
export function closeTo(
  word: string,
  candidates: readonly string[],
  { inside = false }: { inside?: boolean } = {},
): string[] {
  const allowed = Math.max(1, Math.min(3, Math.floor(word.replace(/^-+/, "").length / 3)));
  const found = (candidate: string) =>
    word.length >= 3 && (inside ? candidate.includes(word) : candidate.startsWith(word));
  return candidates
    .map((candidate) => ({
      candidate,
      distance: found(candidate) ? 1 : editDistance(word, candidate),
    }))
    .filter(({ distance }) => distance <= allowed)
    .sort((a, b) => a.distance - b.distance)
    .map(({ candidate }) => candidate);
}
