// SHA-256, computed one way everywhere: node:crypto's, loaded on the first hash
// (lib/node_builtins.ts). Its set-up costs a command's start about 35 ms, so `search` and `show`
// hash nothing on their way to an answer: a project's key, a hash of its path, is computed only
// when read (lib/paths.ts).

import type { Hash } from "node:crypto";
import { nodeCrypto } from "./node_builtins.ts";

/** A SHA-256 fed in parts (`update`), then read once (`digest`). */
export function sha256Hash(): Hash {
  return nodeCrypto().createHash("sha256");
}

/** The SHA-256 of `data` (a string as UTF-8): its 32 bytes. */
export function sha256(data: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(sha256Hash().update(data).digest());
}

/** The SHA-256 of `data` (a string as UTF-8), as 64 lowercase hex digits. */
export function sha256Hex(data: string | Uint8Array): string {
  return sha256Hash().update(data).digest("hex");
}
