// Sizes, durations, ages and paths as people read them, shared by the commands, the dashboard and
// the library modules that word their own messages (stage markers, session notes).

/** Human-readable byte size: `532 B`, `1.4 MB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Human-readable duration: `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  const minutes = Math.floor(total / 60);
  return `${minutes} min ${String(total % 60).padStart(2, "0")} s`;
}

/** A moment as local date and time to the minute, `2026-03-04 14:22`; `-` for none. */
export function formatLocalTime(when: string | number | null): string {
  if (when === null) return "-";
  const date = new Date(when);
  if (Number.isNaN(date.getTime())) return "-";
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${
    two(date.getHours())
  }:${two(date.getMinutes())}`;
}

/** How many of a unit make the next one: 60 seconds a minute, …, 12 months a year. */
const AGE_STEPS: [size: number, next: Intl.RelativeTimeFormatUnit][] = [
  [60, "minute"],
  [60, "hour"],
  [24, "day"],
  [30, "month"],
  [12, "year"],
];

/** The terminal's short words for the units it shows; from a month on it shows the date. */
const SHORT_UNITS: Partial<Record<Intl.RelativeTimeFormatUnit, string>> = {
  minute: "min",
  hour: "h",
  day: "d",
};

let longAges: Intl.RelativeTimeFormat | undefined;

/**
 * How long ago `then` was at `now` (both epoch ms), in its largest whole unit. `long`, for the
 * dashboard: `just now`, `5 minutes ago`, `1 day ago`, `2 months ago`. `short`, for a terminal's
 * column of at most 10: `just now`, `5 min ago`, `3 h ago`, `2 d ago`, and the date (`2026-03-04`,
 * UTC) from 30 days on. A time after `now` (another machine's clock) is `just now`.
 *
 * @example
 * timeAgo(Date.parse("2026-03-01"), Date.parse("2026-03-04")); // "3 days ago"
 */
export function timeAgo(then: number, now: number, style: "long" | "short" = "long"): string {
  let value = Math.floor(Math.max(0, now - then) / 1000);
  let unit: Intl.RelativeTimeFormatUnit = "second";
  for (const [size, next] of AGE_STEPS) {
    if (value < size) break;
    value = Math.floor(value / size);
    unit = next;
  }
  if (unit === "second") return "just now";
  if (style === "long") {
    longAges ??= new Intl.RelativeTimeFormat("en", { numeric: "always" });
    return longAges.format(-value, unit);
  }
  const short = SHORT_UNITS[unit];
  return short === undefined ? new Date(then).toISOString().slice(0, 10) : `${value} ${short} ago`;
}

/** What a thrown value says: an `Error`'s message, anything else as a string. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `path` with the home directory shown as `~` (`~/src/app`); `-` for none. */
export function tilde(path: string | null, home: string | undefined): string {
  if (!path) return "-";
  if (home && (path === home || path.startsWith(home + "/"))) return "~" + path.slice(home.length);
  return path;
}

/** A count with thousands separators, as people read it: `1,214`. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A count with its noun, singular for one: `1 conversation`, `3 conversations`. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${formatCount(count)} ${count === 1 ? noun : nouns}`;
}

/** A list as a sentence says it: `claude, codex, opencode or logbook`. */
export function oneOf(values: readonly string[]): string {
  if (values.length < 2) return values.join("");
  return `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}
