// zstd in this runtime: whether `.jsonl.zst` sources can be read here (the Codex adapter skips
// them otherwise) and the decompressor capture reads them with. node:zlib is loaded on first use.

import { nodeZlib } from "../node_builtins.ts";

/** Makes a stream that decompresses zstd. */
export type ZstdDecompressor = () => NodeJS.ReadWriteStream;

/** The runtime's zstd decompressor, or undefined when it has none. */
export function zstdDecompressor(): ZstdDecompressor | undefined {
  return (nodeZlib() as { createZstdDecompress?: ZstdDecompressor }).createZstdDecompress;
}

/** True when this runtime can read `.jsonl.zst` sources. */
export function zstdAvailable(): boolean {
  return typeof zstdDecompressor() === "function";
}
