// Parses the WHEN of `--since` / `--until` / `--before`: an ISO date or time, or a relative
// amount (`30m`, `12h`, `7d`, `2w`), `today` or `yesterday`, into epoch milliseconds.

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/**
 * Returns the instant `when` names, relative to `now` (epoch ms). `today` and `yesterday` are
 * local midnights; a bare ISO date (`2026-03-10`) is local midnight of that day.
 *
 * @example parseWhen("7d", Date.parse("2026-11-30T12:00:00Z")) // 2026-11-23T12:00:00Z
 */
export function parseWhen(when: string, now: number): number {
  const text = when.trim().toLowerCase();
  const relative = /^(\d+)\s*([smhdw])$/.exec(text);
  if (relative) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  if (text === "today" || text === "yesterday") {
    const midnight = new Date(now);
    midnight.setHours(0, 0, 0, 0);
    return midnight.getTime() - (text === "yesterday" ? UNIT_MS.d! : 0);
  }
  if (text === "now") return now;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (date) {
    const local = new Date(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    if (local.getMonth() === Number(date[2]) - 1) return local.getTime();
  } else if (/^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}/.test(text)) {
    const parsed = Date.parse(when.trim().replace(" ", "T"));
    if (!Number.isNaN(parsed)) return parsed;
  }
  throw new RangeError(
    `Cannot read the time "${when}": expected an ISO date or time, 30m, 12h, 7d, 2w, today or yesterday`,
  );
}
