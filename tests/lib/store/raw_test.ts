// Stored chunks read back exactly, for every shape capture stores, and a reading process decodes
// them with lib/store/zstd_decode.ts until loading native zstd pays (zstd_decode_test.ts holds
// that decoder to native zstd).

import assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { join } from "node:path";
import {
  DECODE_IN_JS_UP_TO,
  decodeOrNative,
  decodeRaw,
  encodeRaw,
} from "../../../lib/store/raw.ts";
import { zstdDecompress, ZstdFormatError } from "../../../lib/store/zstd_decode.ts";
import { FLAG_ZSTD } from "../../../lib/store/schema.ts";
import { childBaseEnv, FIXTURES, removeDir, ROOT, tempDir } from "../../_helpers.ts";
import { bytesOf } from "./_bytes.ts";

/** Transcript-like bytes: the fixtures' own lines repeated with a changing counter. */
function transcriptLike(length: number): Uint8Array {
  const text = Deno.readTextFileSync(join(FIXTURES, "claude", "MANIFEST.json"));
  let out = "";
  for (let i = 0; out.length < length; i++) out += `{"n":${i},"t":${JSON.stringify(text)}}\n`;
  return new TextEncoder().encode(out).slice(0, length);
}

/** Runs `script` in a fresh process (a process's reads share one JavaScript share): its JSON. */
async function runScript<T>(script: string): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--config", join(ROOT, "deno.json"), "-R", script],
    env: childBaseEnv(),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}

const CASES: [string, Uint8Array][] = [
  ["transcript lines, 8 KiB", transcriptLike(8192)],
  ["transcript lines, 300 KiB", transcriptLike(300 * 1024)],
  ["transcript lines, 3 MiB", transcriptLike(3 * 1024 * 1024)],
  ["four letters, 64 KiB", bytesOf(7, 64 * 1024, 4)],
  ["printable noise, 200 KiB", bytesOf(11, 200 * 1024, 95)],
  ["one byte repeated, 1 MiB", new Uint8Array(1024 * 1024).fill(0x41)],
  [
    "text then noise then text",
    new Uint8Array([
      ...transcriptLike(40_000),
      ...bytesOf(3, 40_000, 95),
      ...transcriptLike(40_000),
    ]),
  ],
];

Deno.test("decodeRaw() gives back every stored chunk exactly, as native zstd does", () => {
  for (const [name, bytes] of CASES) {
    const { stored, flag } = encodeRaw(bytes);
    if (flag !== FLAG_ZSTD) {
      assert.deepEqual(decodeRaw({ raw: stored, flags: flag }), bytes, name);
      continue;
    }
    assert.ok(stored.length < bytes.length, name);
    assert.deepEqual(decodeRaw({ raw: stored, flags: flag }), bytes, `${name}: decodeRaw`);
    assert.deepEqual(new Uint8Array(zlib.zstdDecompressSync(stored)), bytes, `${name}: native`);
  }
});

Deno.test("a frame the JavaScript decoder fails on is read by native zstd, which has the last word", () => {
  const bytes = transcriptLike(300 * 1024);
  const { stored, flag } = encodeRaw(bytes);
  assert.equal(flag, FLAG_ZSTD);
  assert.deepEqual(decodeOrNative(stored, zstdDecompress), bytes, "the decoder reads it");
  const refuses = () => {
    throw new ZstdFormatError("Invalid zstd data: refused");
  };
  const breaks = () => {
    throw new RangeError("offset is out of bounds");
  };
  assert.deepEqual(decodeOrNative(stored, refuses), bytes, "a frame it refuses");
  assert.deepEqual(decodeOrNative(stored, breaks), bytes, "a frame it fails on");
  // Damage neither can read is native zstd's error, not the decoder's.
  const damaged = stored.slice();
  damaged[0] = 0; // not a zstd frame
  assert.throws(() => decodeOrNative(damaged, zstdDecompress), (err: Error) => {
    assert.ok(!(err instanceof ZstdFormatError), err.message);
    return true;
  });
  // A truncated frame, which native zstd reads as nothing without a word, is damage where the
  // row holds its captured length.
  const truncated = stored.slice(0, stored.length >> 1);
  assert.throws(
    () => decodeRaw({ raw: truncated, flags: FLAG_ZSTD, length: bytes.length }),
    /A stored chunk is damaged: it decodes to \d+ of its 307200 bytes/,
  );
});

Deno.test("a reading process decodes in JavaScript, and loads native zstd past its share", async () => {
  const dir = await tempDir();
  try {
    const chunk = encodeRaw(transcriptLike(512 * 1024));
    assert.equal(chunk.flag, FLAG_ZSTD);
    const path = join(dir, "chunk.zst");
    Deno.writeFileSync(path, chunk.stored);
    // Enough reads of this chunk to pass the share decoded in JavaScript, and one more.
    const reads = Math.ceil(DECODE_IN_JS_UP_TO / chunk.stored.length) + 1;
    const script = join(dir, "read.ts");
    Deno.writeTextFileSync(
      script,
      `import { decodeRaw } from ${JSON.stringify(join(ROOT, "lib/store/raw.ts"))};
import { nodeZlibLoaded } from ${JSON.stringify(join(ROOT, "lib/node_builtins.ts"))};
const raw = Deno.readFileSync(${JSON.stringify(path)});
const seen = [];
let size = 0;
for (let i = 0; i < ${reads}; i++) {
  size = decodeRaw({ raw, flags: ${FLAG_ZSTD} }).length;
  seen.push(nodeZlibLoaded());
}
console.log(JSON.stringify({ size, seen }));
`,
    );
    const { size, seen } = await runScript<{ size: number; seen: boolean[] }>(script);
    assert.equal(size, 512 * 1024);
    assert.equal(seen[0], false, "the first read does not load node:zlib");
    assert.equal(seen.indexOf(true), reads - 1, "native zstd once the share is decoded");
  } finally {
    await removeDir(dir);
  }
});

Deno.test("a page whose chunks would pass the JavaScript share is decoded natively at once", async () => {
  const dir = await tempDir();
  try {
    // Two chunks, each within the share and together past it, as a long conversation's page.
    const chunks = [bytesOf(5, 200 * 1024, 95), bytesOf(6, 200 * 1024, 95)].map(encodeRaw);
    assert.ok(chunks.every((c) => c.flag === FLAG_ZSTD && c.stored.length < DECODE_IN_JS_UP_TO));
    assert.ok(chunks[0]!.stored.length + chunks[1]!.stored.length > DECODE_IN_JS_UP_TO);
    const paths = chunks.map((c, i) => {
      const path = join(dir, `chunk${i}.zst`);
      Deno.writeFileSync(path, c.stored);
      return path;
    });
    const script = join(dir, "read.ts");
    Deno.writeTextFileSync(
      script,
      `import { decodedInJavaScript, decodedRows, decodeRaw } from ${
        JSON.stringify(join(ROOT, "lib/store/raw.ts"))
      };
const rows = ${
        JSON.stringify(paths)
      }.map((path) => ({ raw: Deno.readFileSync(path), flags: ${FLAG_ZSTD} }));
// One chunk alone is read in JavaScript; the two together, as a page, natively.
const alone = decodeRaw(rows[0]).length;
const inJs = decodedInJavaScript();
const page = decodedRows([rows[1], rows[0]]).map((row) => row.raw.length);
console.log(JSON.stringify({ alone, inJs, page, after: decodedInJavaScript() }));
`,
    );
    const { alone, inJs, page, after } = await runScript<
      { alone: number; inJs: number; page: number[]; after: number }
    >(script);
    assert.equal(alone, 200 * 1024);
    assert.equal(inJs, chunks[0]!.stored.length, "a chunk alone is decoded in JavaScript");
    assert.deepEqual(page, [200 * 1024, 200 * 1024]);
    assert.equal(after, inJs, "the page is decoded natively, nothing of it in JavaScript");
  } finally {
    await removeDir(dir);
  }
});
