// Path operations, as node:path gives them, without loading node:path on POSIX systems: its
// Node compatibility set-up (shared with node:buffer) costs every command ~9 ms of start-up,
// a tenth of a search. On Windows these are node:path's own; `win32()` is node:path's win32
// half, for the Windows paths transcripts recorded on other machines hold.

import { nodePath } from "./node_builtins.ts";

const WINDOWS = Deno.build.os === "windows";

/** The separator between path segments. */
export const sep: string = WINDOWS ? "\\" : "/";

/** node:path's win32 functions (loaded on first use), for Windows paths on any system. */
export function win32(): ReturnType<typeof nodePath>["win32"] {
  return nodePath().win32;
}

/** `path` with `.` and `..` segments resolved and repeated separators made one (`path.normalize`). */
export function normalize(path: string): string {
  if (WINDOWS) return nodePath().normalize(path);
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  const body = resolveSegments(path, !absolute);
  if (body === "" && !absolute) return trailing ? "./" : ".";
  return (absolute ? "/" : "") + body + (trailing && body !== "" ? "/" : "");
}

/** The paths joined by the separator, then normalized (`path.join`). */
export function join(...paths: string[]): string {
  if (WINDOWS) return nodePath().join(...paths);
  const joined = paths.filter((path) => path !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/**
 * The absolute path the paths name, read right to left until one is absolute and then against
 * the current directory; without a trailing separator (`path.resolve`).
 */
export function resolve(...paths: string[]): string {
  if (WINDOWS) return nodePath().resolve(...paths);
  let resolved = "";
  let absolute = false;
  for (let i = paths.length - 1; i >= -1 && !absolute; i--) {
    const path = i >= 0 ? paths[i]! : Deno.cwd();
    if (path === "") continue;
    resolved = `${path}/${resolved}`;
    absolute = path.startsWith("/");
  }
  return `/${resolveSegments(resolved, false)}`;
}

/** True when `path` is absolute (`path.isAbsolute`). */
export function isAbsolute(path: string): boolean {
  return WINDOWS ? nodePath().isAbsolute(path) : path.startsWith("/");
}

/** The directory part of `path` (`path.dirname`). */
export function dirname(path: string): string {
  if (WINDOWS) return nodePath().dirname(path);
  if (path === "") return ".";
  const rooted = path.startsWith("/");
  let end = -1;
  let inTrailingSlashes = true;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path[i] === "/") {
      if (!inTrailingSlashes) {
        end = i;
        break;
      }
    } else {
      inTrailingSlashes = false;
    }
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

/** The last segment of `path`, without `suffix` when it ends so (`path.basename`). */
export function basename(path: string, suffix?: string): string {
  if (WINDOWS) return nodePath().basename(path, suffix);
  // node:path's two odd answers, kept so that the two never differ: the suffix alone is "", and
  // a path of slashes only stays whole.
  if (suffix && suffix.length <= path.length) {
    if (suffix === path) return "";
    if (/^\/+$/.test(path)) return path;
  }
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  const name = path.slice(path.lastIndexOf("/", end - 1) + 1, end);
  if (suffix !== undefined && suffix !== name && name.endsWith(suffix)) {
    return name.slice(0, name.length - suffix.length);
  }
  return name;
}

/** The path from `from` to `to`, both resolved first; "" when they are the same (`path.relative`). */
export function relative(from: string, to: string): string {
  if (WINDOWS) return nodePath().relative(from, to);
  const a = resolve(from).split("/").filter(Boolean);
  const b = resolve(to).split("/").filter(Boolean);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}

/**
 * The segments of `path` with `.` and `..` resolved, joined by "/" without a leading or
 * trailing one. `..` above the start is kept when `keepAbove` (a relative path), else dropped
 * (nothing is above the root).
 */
function resolveSegments(path: string, keepAbove: boolean): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (keepAbove) out.push("..");
      continue;
    }
    out.push(segment);
  }
  return out.join("/");
}
