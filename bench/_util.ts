// Small helpers of the benchmark: sizes, statistics, timing, the environment of child processes
// and the permission flags of `deno task` commands.

import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Shared with the tests, which run commands the same way.
export { childBaseEnv, taskEnv, taskFlags } from "../tests/command_env.ts";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  k: 1e3,
  m: 1e6,
  g: 1e9,
};

/** Bytes of a size such as `200MB`, `64MiB`, `1GiB` or `4096` (MB is 10^6, MiB is 2^20). */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new RangeError(`Expected a size such as "200MB" or "1GiB": got "${text}"`);
  }
  return Math.round(Number(match[1]) * unit);
}

/** `123.4 MB` for bytes (decimal units, as the figures are). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}

/** The q-quantile (0..1) of `values` by linear interpolation; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Rounds for printing and JSON: 2 decimals under 100, 1 under 10,000, else whole. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const digits = Math.abs(value) < 100 ? 100 : Math.abs(value) < 10_000 ? 10 : 1;
  return Math.round(value * digits) / digits;
}

/** Rounds every figure measured (`round`), in place; a figure not measured stays null. */
export function roundFigures<K extends string>(figures: Record<K, number | null>): void {
  for (const key of Object.keys(figures) as K[]) {
    const value = figures[key];
    if (value !== null) figures[key] = round(value);
  }
}

/** A figure for printing: rounded, or `n/a` when missing. */
export function num(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  return String(round(value));
}

/** `rows` as a text table, the first row its header, each column aligned left or right. */
export function table(rows: string[][], align: ("l" | "r")[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? "")].length)));
  return rows.map((row) =>
    row.map((cell, i) => {
      const pad = " ".repeat(widths[i]! - [...cell].length);
      return align[i] === "r" ? pad + cell : cell + pad;
    }).join("  ").trimEnd()
  ).join("\n");
}

/** Milliseconds `fn` took. */
export async function timed<T>(fn: () => T | Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** The total size of the regular files under `dir` (0 when missing). */
export function treeBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (path: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(path)];
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      if (entry.isDirectory) walk(full);
      else if (entry.isFile) {
        bytes += Deno.statSync(full).size;
        files++;
      }
    }
  };
  walk(dir);
  return { bytes, files };
}

/** Size of a file, 0 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
}

/** The first executable named `name` on PATH, or null. */
export function which(name: string): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      const info = Deno.statSync(path);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111)) return path;
    } catch {
      // Not in this directory.
    }
  }
  return null;
}
