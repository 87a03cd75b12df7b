// node:fs, node:crypto, node:zlib, node:path and node:module, loaded on first use. Each costs a
// command's start-up 10 to 40 ms of Node compatibility set-up, which `search` and `show` (reading
// only) never need: the modules that write files, hash or compress call these instead of
// importing them, and lib/path.ts calls node:path only on Windows or for a Windows path.

import type * as Fs from "node:fs";
import type * as Crypto from "node:crypto";
import type * as Zlib from "node:zlib";
import type * as NodePath from "node:path";
import type * as NodeModule from "node:module";

interface NodeProcess {
  getBuiltinModule(id: string): unknown;
}

const loaded = new Set<string>();

function builtin<T>(id: string): T {
  // `process.getBuiltinModule` loads a built-in synchronously, where `import()` would be async.
  const process = (globalThis as unknown as { process: NodeProcess }).process;
  loaded.add(id);
  return process.getBuiltinModule(id) as T;
}

/** The built-ins loaded through this module so far, in the order they were first loaded. */
export function loadedBuiltins(): string[] {
  return [...loaded];
}

let fs: typeof Fs | undefined;
let crypto: typeof Crypto | undefined;
let zlib: typeof Zlib | undefined;
let path: typeof NodePath | undefined;
let moduleBuiltin: typeof NodeModule | undefined;

/** node:fs, loaded on the first call. */
export function nodeFs(): typeof Fs {
  return fs ??= builtin<typeof Fs>("node:fs");
}

/** node:crypto, loaded on the first call. */
export function nodeCrypto(): typeof Crypto {
  return crypto ??= builtin<typeof Crypto>("node:crypto");
}

/** node:zlib, loaded on the first call. */
export function nodeZlib(): typeof Zlib {
  return zlib ??= builtin<typeof Zlib>("node:zlib");
}

/** True once node:zlib is loaded: using it then costs nothing more. */
export function nodeZlibLoaded(): boolean {
  return loaded.has("node:zlib");
}

/** node:path, loaded on the first call (lib/path.ts uses it on Windows and for Windows paths). */
export function nodePath(): typeof NodePath {
  return path ??= builtin<typeof NodePath>("node:path");
}

/** node:module, loaded on the first call (`createRequire` loads an npm package synchronously). */
export function nodeModule(): typeof NodeModule {
  return moduleBuiltin ??= builtin<typeof NodeModule>("node:module");
}
