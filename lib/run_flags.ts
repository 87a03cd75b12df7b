// How Deno runs a logbook command: the V8 flags every command shares and the permissions each
// command's spec declares, written as `deno run` flags. deno.json's tasks, the commands' shebangs,
// the compile task and the README's install line are checked against these, and the tests run
// each command with exactly them.

/**
 * What a command may do, named as Deno names its permissions (`Deno.PermissionOptionsObject`):
 * `true` grants the whole kind, a list only those hosts, programs or values.
 */
export interface Permissions {
  read?: true | readonly string[];
  write?: true | readonly string[];
  env?: true | readonly string[];
  net?: true | readonly string[];
  run?: true | readonly string[];
  sys?: true | readonly string[];
}

/**
 * The V8 flags of every command. V8 takes a module's code cache only from a run with the same
 * flags, so a cron `reindex` run with other flags would make the next `search` compile afresh.
 */
export const V8_FLAGS = "--v8-flags=--expose-gc,--max-semi-space-size=1";

/**
 * What deno.json's tasks set before each command's `deno run`: glibc's malloc keeps at most two
 * arenas (the main thread's and one more), where it would keep one for each thread up to sixteen
 * on two cores, each holding freed memory of its own. A first capture of 10 GB peaked 5 to 9 MiB
 * lower with it, in two pairs (docs/performance_notes.md, "At 10 GB"); elsewhere than glibc it is
 * ignored. A shebang, an install's script and a compiled executable cannot carry it: a shebang's
 * line would pass the 127 bytes older kernels read of it. The programs a command runs inherit it.
 */
export const RUN_ENV = "GLIBC_TUNABLES=glibc.malloc.arena_max=2";

/** Each kind with its flag, in the order the flags are written. */
const KINDS = [
  ["read", "-R", "--allow-read"],
  ["write", "-W", "--allow-write"],
  ["env", "-E", "--allow-env"],
  ["net", "--allow-net", "--allow-net"],
  ["run", "--allow-run", "--allow-run"],
  ["sys", "--allow-sys", "--allow-sys"],
] as const;

/**
 * The flags that grant `permissions`, short where Deno has a short one.
 *
 * @example
 * permissionFlags({ read: true, run: ["git"] }); // ["-R", "--allow-run=git"]
 */
export function permissionFlags(permissions: Permissions): string[] {
  const flags: string[] = [];
  for (const [kind, short, long] of KINDS) {
    const grant = permissions[kind];
    if (grant === true) flags.push(short);
    else if (grant !== undefined) flags.push(`${long}=${grant.join(",")}`);
  }
  return flags;
}

/** Everything `deno run` needs before a command's file: the V8 flags, then the permissions. */
export function runFlags(permissions: Permissions): string[] {
  return [V8_FLAGS, ...permissionFlags(permissions)];
}

/**
 * The permissions that cover each of `all` (what the `logbook` dispatcher, which runs any
 * command, needs): a kind granted whole by one is granted whole, lists are joined.
 */
export function unionPermissions(all: readonly Permissions[]): Permissions {
  const union: Permissions = {};
  for (const [kind] of KINDS) {
    const grants = all.map((permissions) => permissions[kind]).filter((g) => g !== undefined);
    if (grants.length === 0) continue;
    union[kind] = grants.includes(true)
      ? true
      : [...new Set(grants.flatMap((grant) => grant === true ? [] : grant))];
  }
  return union;
}
