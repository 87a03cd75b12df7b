// Giving the event loop a turn in the middle of long synchronous work (a capture's batches, a
// push's reads, a fill's transactions), so timers, signals and a driver's replies are heard.

let lastYield = 0;

/**
 * Lets timers, signals (SIGTERM, a watch tick) and I/O callbacks run: at most once every
 * `everyMs` (20 by default, since each turn costs a timer tick); 0 turns every time.
 */
export function yieldToEventLoop(everyMs = 20): Promise<void> {
  const now = performance.now();
  if (now - lastYield < everyMs) return Promise.resolve();
  lastYield = now;
  return new Promise((resolve) => setTimeout(resolve, 0));
}
