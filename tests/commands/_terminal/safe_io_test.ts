// Tests for commands/_terminal/safe_io.ts: an Io whose text always passes the terminal filter.

import assert from "node:assert/strict";
import { safeIo } from "../../../commands/_terminal/safe_io.ts";
import { captureIo } from "../../_helpers.ts";

Deno.test("safeIo() filters stdout and stderr text, keeps line ends, and turns colour off", () => {
  const io = captureIo();
  io.color = true;
  const safe = safeIo(io);
  assert.equal(safe.color, false);
  safe.out("title \x1b]0;pwned\x07\nnext\r\n");
  safe.err("error: \x9b2J\n");
  safe.outBytes(new Uint8Array([0x1b, 0x5b]));
  assert.equal(io.stdout(), "title ␛]0;pwned\\x07\nnext\n");
  assert.equal(io.stderr(), "error: \\x9b2J\n");
  assert.deepEqual([...io.bytes()], [0x1b, 0x5b]);
});
