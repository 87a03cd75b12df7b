// Giving the event loop a turn between batches, so a long pass still hears timers and signals.

let lastYield = 0;

/**
 * Lets timers and signals (SIGTERM, a watch tick) run between batches: at most every 20 ms,
 * since each yield costs a timer tick.
 */
export function yieldToEventLoop(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < 20) return Promise.resolve();
  lastYield = now;
  return new Promise((resolve) => setTimeout(resolve, 0));
}
