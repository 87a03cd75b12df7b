// What tells a file's writes apart without reading it, for the row adapters' fingerprints.

/** Size, mtime and inode of a file, or `-` when it cannot be stated (gone, unreadable). */
export function fileSignature(path: string): string {
  try {
    const stat = Deno.statSync(path);
    return `${stat.size}:${stat.mtime?.getTime() ?? ""}:${stat.ino ?? ""}`;
  } catch {
    return "-";
  }
}
