// Sizes and durations as people read them, shared by the commands, the dashboard and the library
// modules that word their own messages (stage markers, session notes).

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

/** A count with thousands separators, as people read it: `1,214`. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A count with its noun, singular for one: `1 conversation`, `3 conversations`. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${formatCount(count)} ${count === 1 ? noun : nouns}`;
}
