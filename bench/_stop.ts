// What the benchmark undoes when it is stopped (Ctrl-C, SIGTERM) before it ends: the child
// processes it started are killed, then what was registered with `onStop` runs, last first (a
// PostgreSQL server stopped, appended corpus files truncated back, the work folder removed),
// and the process exits as a stopped one does (130, 143).

/** Undo steps, in the order they were registered. */
const steps: { what: string; undo: () => void | Promise<void> }[] = [];
/** The stop under way, once a signal came: it ends in `Deno.exit`. */
let stopping: Promise<never> | null = null;

/**
 * Registers `undo` to run if the run is stopped; returns the function that unregisters it (call
 * it once the thing is undone the ordinary way).
 */
export function onStop(what: string, undo: () => void | Promise<void>): () => void {
  const step = { what, undo };
  steps.push(step);
  return () => {
    const at = steps.indexOf(step);
    if (at >= 0) steps.splice(at, 1);
  };
}

/**
 * Listens for SIGINT and SIGTERM until the returned function is called. `log` is told what is
 * undone.
 */
export function stopOnSignals(log: (message: string) => void): () => void {
  const listeners = (["SIGINT", "SIGTERM"] as const).map((signal) => {
    const listener = () => void stop(signal, log);
    Deno.addSignalListener(signal, listener);
    return () => Deno.removeSignalListener(signal, listener);
  });
  return () => listeners.forEach((remove) => remove());
}

/**
 * Lets a signal that came while in-process work held the event loop stop the run now: a listener
 * runs only as the loop turns (one turn reads the signal, the next runs its listener), and work
 * that never waits on the loop would otherwise end, and exit 0, with the signal unheard. Call it
 * between parts and before the report.
 */
export async function heedSignals(): Promise<void> {
  for (let turn = 0; turn < HEED_TURNS && !stopping; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  if (stopping) await stopping;
}

/** The loop's turns `heedSignals` gives a signal: two are seen to suffice, on a loaded machine too. */
const HEED_TURNS = 4;

function stop(signal: "SIGINT" | "SIGTERM", log: (message: string) => void): Promise<never> {
  stopping ??= undo(signal, log);
  return stopping;
}

async function undo(signal: "SIGINT" | "SIGTERM", log: (message: string) => void): Promise<never> {
  log(`stopped (${signal}): cleaning up`);
  for (const pid of descendants(Deno.pid)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  for (const step of steps.toReversed()) {
    try {
      await step.undo();
    } catch (err) {
      log(`could not undo ${step.what}: ${(err as Error).message}`);
    }
  }
  return Deno.exit(signal === "SIGINT" ? 130 : 143);
}

/** The processes started by `pid`, and theirs, from /proc (none where there is no /proc). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid …": the name may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry.name));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}
