// zstd in this runtime: whether `.jsonl.zst` sources can be read here (the Codex adapter skips
// them otherwise) and the decompressor capture reads them with. node:zlib is loaded on first use.

type Zlib = typeof import("node:zlib");
/** Makes a stream that decompresses zstd. */
export type ZstdDecompressor = () => NodeJS.ReadWriteStream;

let zlibModule: Promise<Zlib> | undefined;

/** node:zlib, loaded on first use: it costs a command's start-up ~25 ms it rarely needs. */
function loadZlib(): Promise<Zlib> {
  zlibModule ??= import("node:zlib");
  return zlibModule;
}

/** The runtime's zstd decompressor, or undefined when it has none. */
export async function zstdDecompressor(): Promise<ZstdDecompressor | undefined> {
  const zlib = await loadZlib();
  return (zlib as { createZstdDecompress?: ZstdDecompressor }).createZstdDecompress;
}

/** True when this runtime can read `.jsonl.zst` sources. */
export async function zstdAvailable(): Promise<boolean> {
  return typeof (await zstdDecompressor()) === "function";
}
