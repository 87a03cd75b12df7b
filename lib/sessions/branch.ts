// The Git branch a session runs on, read from the files of the work tree (no `git` process).

import { dirname, join, resolve } from "../path.ts";

/**
 * The Git branch checked out in `dir`'s work tree (read from the files, no `git` process), a
 * short commit id when HEAD is detached, or null outside Git.
 */
export function currentBranch(dir: string): string | null {
  for (let current = resolve(dir);; current = dirname(current)) {
    const dotGit = join(current, ".git");
    let gitDir: string | undefined;
    try {
      const info = Deno.statSync(dotGit);
      if (info.isDirectory) gitDir = dotGit;
      else if (info.isFile) {
        const m = /^gitdir:[ \t]*(.*?)\s*$/m.exec(Deno.readTextFileSync(dotGit));
        if (m?.[1]) gitDir = resolve(current, m[1]);
      }
    } catch {
      // No .git here (or not readable): look further up.
    }
    if (gitDir !== undefined) {
      try {
        const head = Deno.readTextFileSync(join(gitDir, "HEAD")).trim();
        const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
        if (ref) return ref[1]!;
        if (/^[0-9a-f]{7,}$/i.test(head)) return head.slice(0, 12);
      } catch {
        // A .git without a readable HEAD is not a repository Git would use either.
      }
    }
    if (dirname(current) === current) return null;
  }
}
