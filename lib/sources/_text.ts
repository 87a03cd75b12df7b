// Small text helpers the adapters share: base64 detection, titles, flattening tool input.

const BASE64_RUN = /^[A-Za-z0-9+/=_-]{200,}$/;

/** True for a long run of base64 characters with no spaces: a payload, not text. */
export function looksLikeBase64(text: string): boolean {
  if (text.length < 200) return false;
  if (text.startsWith("data:") && text.includes(";base64,")) return true;
  return BASE64_RUN.test(text.length > 4096 ? text.slice(0, 4096) : text);
}

/** The first non-empty line of `text`, cut (at a word where possible) to at most `max` characters. */
export function titleFrom(text: string, max = 80): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0) ?? "";
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

/**
 * The string leaves of a JSON value, joined by newlines: tool inputs become searchable as the
 * commands, paths and patterns they carry, without JSON punctuation. Base64 payloads and the
 * values of `skipKeys` are left out.
 */
export function stringLeaves(value: unknown, skipKeys: ReadonlySet<string>, out: string[] = []) {
  if (typeof value === "string") {
    if (!looksLikeBase64(value)) out.push(value);
  } else if (typeof value === "number" || typeof value === "boolean") {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const item of value) stringLeaves(item, skipKeys, out);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (!skipKeys.has(key)) stringLeaves(item, skipKeys, out);
    }
  }
  return out;
}

/** Epoch milliseconds of an ISO string or a number, or null. */
export function toEpochMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) {
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** The value as a non-empty string, or null. */
export function str(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** The value as a plain object, or null. */
export function obj(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
}
