// Whether something is at a path, and what: the ways the code asks it.

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

/** What `lstat` says of `path` (a link itself, not its target), or undefined where nothing is. */
export function lstatOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (err) {
    // A file where a directory on the way should be: nothing is at the path either.
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}
