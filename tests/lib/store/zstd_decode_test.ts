// lib/store/zstd_decode.ts reads what native zstd writes, byte for byte, and refuses what it
// cannot read with a ZstdFormatError (never a wrong result): stored chunks depend on it.

import assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { zstdDecompress, ZstdFormatError } from "../../../lib/store/zstd_decode.ts";
import { CORPUS, corpusPresent, FIXTURES } from "../../_helpers.ts";
import { bytesOf } from "./_bytes.ts";

/** Every file under `dir`, recursively. */
function filesIn(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...filesIn(path));
    else if (entry.isFile) out.push(path);
  }
  return out.sort();
}

const { ZSTD_c_compressionLevel: LEVEL, ZSTD_c_checksumFlag: CHECKSUM, ZSTD_c_windowLog: WINDOW } =
  zlib.constants;

function compress(bytes: Uint8Array, params: Record<number, number> = { [LEVEL]: 1 }): Uint8Array {
  return new Uint8Array(zlib.zstdCompressSync(bytes, { params }));
}

function sameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  assert.ok(Buffer.from(actual).equals(Buffer.from(expected)), `${what}: bytes differ`);
}

const fixtureFiles = filesIn(FIXTURES);
const fixtureText = new Uint8Array(
  fixtureFiles.flatMap((path) => [...Deno.readFileSync(path)]).slice(0, 3 * 1024 * 1024),
);

const CASES: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["one byte", Uint8Array.of(7)],
  ["fixtures, 100 bytes", fixtureText.slice(0, 100)],
  ["fixtures, 8 KiB", fixtureText.slice(0, 8192)],
  ["fixtures, 64 KiB", fixtureText.slice(0, 65536)],
  ["fixtures, 300 KiB", fixtureText.slice(0, 300 * 1024)],
  ["fixtures, whole (up to 3 MiB)", fixtureText],
  ["four letters, 100 KB", bytesOf(3, 100_000, 4)],
  ["printable noise, 200 KB", bytesOf(5, 200_000, 95)],
  ["every byte value, 150 KB", bytesOf(9, 150_000, 224)],
  ["zeros, 500 KB", new Uint8Array(500_000)],
  [
    "text, noise, text",
    new Uint8Array([
      ...fixtureText.slice(0, 50_000),
      ...bytesOf(1, 50_000, 95),
      ...fixtureText.slice(0, 50_000),
    ]),
  ],
];

Deno.test("zstdDecompress() reads every level and frame option native zstd writes", () => {
  const settings = [
    { [LEVEL]: 1 },
    { [LEVEL]: 3 },
    { [LEVEL]: 9 },
    { [LEVEL]: 19 },
    { [LEVEL]: -5 },
    { [LEVEL]: 1, [CHECKSUM]: 1 },
    { [LEVEL]: 3, [WINDOW]: 27 },
  ];
  for (const params of settings) {
    for (const [name, bytes] of CASES) {
      sameBytes(
        zstdDecompress(compress(bytes, params)),
        bytes,
        `${name} ${JSON.stringify(params)}`,
      );
    }
  }
});

Deno.test("zstdDecompress() reads every fixture in capture's 64 KiB chunks", () => {
  let chunks = 0;
  for (const path of fixtureFiles) {
    const bytes = Deno.readFileSync(path);
    for (let at = 0; at < bytes.length; at += 65536) {
      const chunk = bytes.subarray(at, at + 65536);
      sameBytes(zstdDecompress(compress(chunk)), chunk, `${path} @${at}`);
      chunks++;
    }
  }
  assert.ok(chunks > 50, `${chunks} chunks`);
});

Deno.test("zstdDecompress() reads the shared corpus's transcripts in 64 KiB chunks", () => {
  if (!corpusPresent()) {
    console.log("skipped: ../shared/corpus is not here");
    return;
  }
  let bytesRead = 0;
  for (const path of filesIn(CORPUS).filter((p) => /\.jsonl$/.test(p))) {
    const bytes = Deno.readFileSync(path);
    for (let at = 0; at < bytes.length && at < 1024 * 1024; at += 65536) {
      const chunk = bytes.subarray(at, at + 65536);
      sameBytes(zstdDecompress(compress(chunk)), chunk, `${path} @${at}`);
      bytesRead += chunk.length;
    }
  }
  assert.ok(bytesRead > 100_000, `${bytesRead} bytes`);
});

/**
 * A single-segment frame of one raw block, its content size written with FCS flag `flag` (0: one
 * byte, 1: two bytes less 256, 2: four, 3: eight): node:zlib's frames leave the size out.
 */
function sizedFrame(flag: number, contentSize: number, block: Uint8Array): Uint8Array {
  const width = [1, 2, 4, 8][flag]!;
  const size = new Uint8Array(width);
  let rest = flag === 1 ? contentSize - 256 : contentSize;
  for (let i = 0; i < width; i++) {
    size[i] = rest % 256;
    rest = Math.floor(rest / 256);
  }
  const header = 1 | (block.length << 3); // last block, raw
  return new Uint8Array([
    0x28,
    0xb5,
    0x2f,
    0xfd,
    (flag << 6) | 0x20,
    ...size,
    header & 0xff,
    (header >> 8) & 0xff,
    header >> 16,
    ...block,
  ]);
}

Deno.test("zstdDecompress() reads frames back to back, skippable ones and unknown sizes", async () => {
  const a = fixtureText.slice(0, 20_000);
  const b = bytesOf(2, 30_000, 40);
  const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
  const joined = new Uint8Array([...compress(a), ...skippable, ...compress(b)]);
  sameBytes(zstdDecompress(joined), new Uint8Array([...a, ...b]), "two frames and a skippable one");

  // Frames that say their size, in each of its widths.
  const raw = bytesOf(4, 300, 90);
  sameBytes(
    zstdDecompress(sizedFrame(0, 200, raw.subarray(0, 200))),
    raw.subarray(0, 200),
    "1-byte size",
  );
  for (const flag of [1, 2, 3]) {
    sameBytes(zstdDecompress(sizedFrame(flag, 300, raw)), raw, `size flag ${flag}`);
  }
  // A stream's frame does not say its size up front.
  const streamed = await streamCompress(fixtureText.slice(0, 400_000));
  assert.equal(streamed[4]! >> 6, 0, "the streamed frame leaves its content size out");
  sameBytes(zstdDecompress(streamed), fixtureText.slice(0, 400_000), "streamed");
  // With a 1 KiB window the output starts that small and grows; a flush ends a block short of
  // the window, so later blocks grow it midway and must keep what they had written.
  for (const [name, bytes] of [["fixtures", fixtureText.slice(0, 300_000)], ...CASES.slice(7)]) {
    for (const flushAt of [undefined, 700]) {
      const small = await streamCompress(bytes as Uint8Array, { [WINDOW]: 10 }, flushAt);
      sameBytes(
        zstdDecompress(small),
        bytes as Uint8Array,
        `streamed, 1 KiB window${flushAt ? `, flushed at ${flushAt}` : ""}: ${name}`,
      );
    }
  }
});

/**
 * The bytes node:zlib's zstd stream writes for `bytes` (its frame has no content size), flushed
 * once after `flushAt` bytes when given.
 */
function streamCompress(
  bytes: Uint8Array,
  params: Record<number, number> = {},
  flushAt?: number,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const stream = zlib.createZstdCompress({ params });
    const parts: Uint8Array[] = [];
    stream.on("data", (part: Uint8Array) => parts.push(part));
    stream.on("end", () => resolve(new Uint8Array(Buffer.concat(parts))));
    stream.on("error", reject);
    if (flushAt === undefined) {
      stream.end(bytes);
      return;
    }
    stream.write(bytes.subarray(0, flushAt));
    stream.flush(() => stream.end(bytes.subarray(flushAt)));
  });
}

Deno.test("zstdDecompress() refuses damaged, truncated and dictionary frames with ZstdFormatError", () => {
  const bytes = fixtureText.slice(0, 100_000);
  const frame = compress(bytes);
  const refused = (data: Uint8Array, what: string) =>
    assert.throws(() => zstdDecompress(data), ZstdFormatError, what);
  refused(Uint8Array.of(1, 2, 3, 4, 5), "not a frame");
  refused(frame.subarray(0, 3), "cut in the magic number");
  for (let cut = 4; cut < frame.length; cut += Math.max(1, frame.length >> 6)) {
    refused(frame.subarray(0, cut), `cut at ${cut} of ${frame.length}`);
  }
  const withDictionary = frame.slice();
  withDictionary[4] = (withDictionary[4]! & ~3) | 1; // Dictionary_ID_flag: one byte follows
  refused(
    new Uint8Array([...withDictionary.subarray(0, 5), 42, ...withDictionary.subarray(5)]),
    "a dictionary",
  );
  // A content size no blocks could hold is refused before anything is allocated for it.
  refused(sizedFrame(3, 2 ** 40, Uint8Array.of(1, 2, 3, 4, 5)), "a content size of 1 TiB");
  // ...and one that is less than the blocks hold, or more.
  refused(sizedFrame(0, 4, Uint8Array.of(1, 2, 3, 4, 5)), "content larger than said");
  refused(sizedFrame(0, 6, Uint8Array.of(1, 2, 3, 4, 5)), "content smaller than said");
  // Flipped bits: refused, or (without a checksum to tell) some bytes, but never another error.
  for (let i = 6; i < frame.length; i += 97) {
    const damaged = frame.slice();
    damaged[i] = damaged[i]! ^ 0x24;
    try {
      zstdDecompress(damaged);
    } catch (err) {
      assert.ok(err instanceof ZstdFormatError, `flip at ${i}: ${err}`);
    }
  }
});
