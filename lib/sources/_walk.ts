// Walks a source root for transcript files without following symbolic links inside it (a
// symlinked root itself is followed: dotfile managers link `~/.claude`).

import { join } from "../path.ts";

/**
 * Yields the paths of regular files under `root` whose names pass `accept`, depth first in
 * name order. A missing root yields nothing; symlinks and unreadable folders inside it are
 * counted in `skipped` by reason and passed over.
 */
export async function* walkFiles(
  root: string,
  accept: (name: string) => boolean,
  skipped: Map<string, number>,
  maxDepth = 8,
): AsyncIterable<string> {
  const count = (reason: string) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  while (stack.length) {
    const { dir, depth } = stack.pop()!;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
        continue;
      }
      if (err instanceof Deno.errors.PermissionDenied) {
        count("unreadable folder");
        continue;
      }
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      if (entry.isSymlink) {
        if (accept(entry.name)) count("symlink");
        continue;
      }
      if (entry.isDirectory) {
        if (depth < maxDepth) subdirs.push(join(dir, entry.name));
      } else if (entry.isFile && accept(entry.name)) {
        yield join(dir, entry.name);
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i--) {
      stack.push({ dir: subdirs[i]!, depth: depth + 1 });
    }
  }
}
