// The line that ends a page of search hits: what the page is and where the next one starts.

import { formatCount } from "../../lib/format.ts";

/**
 * `3 hits`, `21–40 of 1,214 hits · more: --offset 40`: the page's range, its total when counted
 * and not the page itself, and the next page's `--offset`; `where` after the noun (`in the team
 * database`).
 */
export function countLine(
  shown: number,
  offset: number,
  page: { next: number | null; total: number | null },
  noun: string,
  where = "",
): string {
  const range = offset > 0
    ? `${formatCount(offset + 1)}–${formatCount(offset + shown)}`
    : formatCount(shown);
  const total = page.total === null || (offset === 0 && page.total === shown)
    ? ""
    : ` of ${formatCount(page.total)}`;
  const plural = (page.total ?? shown) === 1 && offset === 0 ? noun : `${noun}s`;
  const more = page.next === null ? "" : ` · more: --offset ${page.next}`;
  return `${range}${total} ${plural}${where}${more}\n`;
}
