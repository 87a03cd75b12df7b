// The event-loop turn that capture, push and the usage fill take in the middle of long work.

import assert from "node:assert/strict";
import { yieldToEventLoop } from "../../lib/event_loop.ts";

Deno.test("yieldToEventLoop() lets a due timer run, and within its gap turns no more", async () => {
  let ran = false;
  setTimeout(() => ran = true, 0);
  await yieldToEventLoop(0);
  assert.equal(ran, true, "a timer due before the turn ran");

  let again = false;
  const timer = setTimeout(() => again = true, 0);
  // A minute has not gone by since the turn above: no turn now.
  await yieldToEventLoop(60_000);
  assert.equal(again, false, "no turn within the gap");
  await yieldToEventLoop(0);
  assert.equal(again, true, "the next turn runs it");
  clearTimeout(timer);
});
