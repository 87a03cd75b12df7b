// A time zone's offsets from UTC over a span of time (Temporal's transitions), turned into SQL: the
// store groups calls by local day itself, so a report reads a few hundred sums, not every call.

const DAY_MS = 86_400_000;

/** A zone's offsets over a span: `offsets[i]` holds before `changes[i]`, the last after all. */
export interface ZoneSteps {
  offsets: number[];
  /** Epoch ms at which the offset changes, ascending. */
  changes: number[];
}

/** The offsets of `timeZone` (ms to add to UTC) from `from` to `to` (epoch ms), exactly. */
export function zoneSteps(timeZone: string, from: number, to: number): ZoneSteps {
  let at = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(timeZone);
  const offsets = [at.offsetNanoseconds / 1e6];
  const changes: number[] = [];
  for (;;) {
    const next = at.getTimeZoneTransition("next");
    if (!next || next.epochMilliseconds > to) break;
    changes.push(next.epochMilliseconds);
    offsets.push(next.offsetNanoseconds / 1e6);
    at = next;
  }
  return { offsets, changes };
}

/**
 * True when every offset and every change of `steps` falls on a whole step of `ms` (a quarter hour:
 * true of every zone since the 1970s; an hour: of most), so all the calls of a step share their
 * local day.
 */
export function wholeSteps(steps: ZoneSteps, ms: number): boolean {
  return [...steps.offsets, ...steps.changes].every((at) => at % ms === 0);
}

/** SQL for the local day (days since 1970-01-01, local) of the epoch ms `x` (SQL). */
export function localDaySql(x: string, steps: ZoneSteps): string {
  const offset = steps.changes.length
    ? `CASE ${
      steps.changes.map((at, i) => `WHEN ${x} < ${at} THEN ${steps.offsets[i]}`).join(" ")
    } ELSE ${steps.offsets.at(-1)} END`
    : `${steps.offsets[0]}`;
  return floorDiv(`(${x} + ${offset})`, DAY_MS);
}

/** SQL for `n` divided by `by`, rounded down (SQLite rounds toward zero). */
export function floorDiv(n: string, by: number): string {
  return `(${n} / ${by} - (${n} % ${by} < 0))`;
}

/** The date (`YYYY-MM-DD`) of a local day number. */
export function dateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The local day number of a date (`YYYY-MM-DD`). */
export function dayOfDate(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}
