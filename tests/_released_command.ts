// Starts several commands as real subprocesses and releases them at the same moment, as a user's
// cron, editor and terminal may: each child loads its command (with the permissions its
// `deno task` grants), says "ready" on stderr and waits for its stdin to close, so that what the
// commands do first (opening a new store) overlaps as closely as processes can.

import { fileURLToPath } from "node:url";
import { childBaseEnv, type RunResult, taskFlags } from "./_helpers.ts";

/** One command to run: `commands/<file>.ts` with `args`. */
export interface ReleasedCommand {
  file: string;
  args: string[];
}

const READY = "ready\n";

/**
 * Runs `commands` at once with `vars` as their environment: every child is started and loaded,
 * then all are released together; returns what each did, in order.
 */
export async function runReleased(
  commands: readonly ReleasedCommand[],
  vars: Record<string, string>,
): Promise<RunResult[]> {
  const decoder = new TextDecoder();
  const flags = await Promise.all(commands.map(({ file }) => taskFlags(file)));
  const children = commands.map(({ file, args }, i) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...flags[i]!,
        "--quiet",
        fileURLToPath(import.meta.url),
        file,
        ...args,
      ],
      env: { ...childBaseEnv(), NO_COLOR: "1", ...vars },
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => markReady = resolve);
    const stderr = (async () => {
      const chunks = new TextDecoder();
      let text = "";
      for await (const chunk of child.stderr) {
        text += chunks.decode(chunk, { stream: true });
        if (text.startsWith(READY)) markReady();
      }
      // A child that failed before it was ready is not waited for.
      markReady();
      return text.startsWith(READY) ? text.slice(READY.length) : text;
    })();
    const stdout = new Response(child.stdout).bytes();
    return { child, ready, stderr, stdout };
  });
  await Promise.all(children.map((c) => c.ready));
  await Promise.all(children.map((c) => c.child.stdin.close()));
  return await Promise.all(children.map(async (c) => {
    const [status, stderr, stdoutBytes] = await Promise.all([c.child.status, c.stderr, c.stdout]);
    return { code: status.code, stdout: decoder.decode(stdoutBytes), stderr, stdoutBytes };
  }));
}

if (import.meta.main) {
  const [file, ...args] = Deno.args;
  const url = new URL(`../commands/${file}.ts`, import.meta.url);
  const { main } = await import(url.href) as { main: (args: string[]) => Promise<number> };
  await Deno.stderr.write(new TextEncoder().encode(READY));
  for await (const _ of Deno.stdin.readable) {
    // Released when the test closes stdin.
  }
  Deno.exit(await main(args));
}
