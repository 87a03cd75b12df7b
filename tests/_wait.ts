// Waiting in a test for what another process, a watcher or a timer does: the condition is checked
// until it holds, however long a busy machine takes. The bound only turns "never" into a failure
// that says what never happened; it is not a guess at how long anything takes.

/** How long a test waits for anything before it says what never happened. */
export const WAIT_MS = 120_000;

/** Not there yet: `undefined`, `null` or `false`. */
type NotYet = undefined | null | false;

/**
 * Waits until `probe` answers something (anything but undefined, null or false) and returns it;
 * probes every `every` ms; after `ms`, fails naming `what`.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  { ms = WAIT_MS, every = 25 }: { ms?: number; every?: number } = {},
): Promise<Exclude<T, NotYet>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) {
      return value as Exclude<T, NotYet>;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}
