// Whether something is at a path, the two ways the code asks it.

/** True when something is at `path`; false when nothing is, and any other failure is thrown. */
export function isPresent(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** True when `path` can be stat'ed: any failure means no (as node's `existsSync`). */
export function canStat(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
