// A search hit's snippet for the terminal: the matched words marked (bold yellow on a colour
// terminal), the text between them passed through the filter, overlapping matches merged.

/** Applies `mark` to each `[start, end)` range of `text`, and `plain` to the text between them. */
export function markRanges(
  text: string,
  ranges: readonly [number, number][],
  mark: (text: string) => string,
  plain: (text: string) => string = (text) => text,
): string {
  let out = "";
  let at = 0;
  for (const [a, b] of mergeRanges(ranges)) {
    out += plain(text.slice(at, a)) + mark(text.slice(a, b));
    at = b;
  }
  return out + plain(text.slice(at));
}

function mergeRanges(ranges: readonly [number, number][]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [a, b] of [...ranges].sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}
