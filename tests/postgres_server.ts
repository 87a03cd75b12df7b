// A real PostgreSQL server for the team tests and the bench: its own cluster in a temp dir
// (initdb, pg_ctl) on a free loopback port, run as the `postgres` user when running as root.
// `startPostgres` returns the reason instead when the machine has no PostgreSQL, so tests skip
// and the bench leaves its team figures out, saying why.

import { join } from "node:path";

export interface Postgres {
  /** A superuser URL for the database `team`. */
  url: string;
  port: number;
  /** `postgres://<role>@127.0.0.1:<port>/<database>` (trust authentication on loopback). */
  urlAs(role: string, database?: string): string;
  /** Creates an empty database (owned by the superuser); returns its superuser URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs a program of PostgreSQL's bin dir (psql, pg_dump) against the server. */
  run(program: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

/** The role whose login takes a password (SCRAM-SHA-256) where every other is trusted. */
export const SCRAM_ROLE = "logbook_scram";

/** Where `initdb` is, or null. */
function binDir(): string | null {
  for (const version of ["17", "16", "15", "14", "13"]) {
    const dir = `/usr/lib/postgresql/${version}/bin`;
    try {
      Deno.statSync(join(dir, "initdb"));
      return dir;
    } catch {
      // try the next
    }
  }
  return null;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function sh(
  argv: string[],
  asPostgres: boolean,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, ...args] = asPostgres ? ["runuser", "-u", "postgres", "--", ...argv] : argv;
  const out = await new Deno.Command(cmd!, { args, stdout: "piped", stderr: "piped" }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** Starts a throw-away cluster, or returns the reason it cannot. */
export async function startPostgres(): Promise<Postgres | string> {
  const bin = binDir();
  if (!bin) return "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)";
  const root = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "logbook-pg-" });
  const data = join(dir, "data");
  const port = freePort();
  try {
    if (root) {
      const chown = await sh(["chown", "-R", "postgres:postgres", dir], false);
      if (chown.code !== 0) return `cannot hand ${dir} to the postgres user: ${chown.stderr}`;
    }
    const init = await sh(
      [
        join(bin, "initdb"),
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
      ],
      root,
    );
    if (init.code !== 0) return `initdb failed: ${init.stderr.trim().slice(0, 300)}`;
    // One role signs in with a password over SCRAM-SHA-256, for the clients that must speak it.
    const hba = join(data, "pg_hba.conf");
    await Deno.writeTextFile(
      hba,
      `host all ${SCRAM_ROLE} 127.0.0.1/32 scram-sha-256\n${await Deno.readTextFile(hba)}`,
    );
    const start = await sh([
      join(bin, "pg_ctl"),
      "-D",
      data,
      "-l",
      join(dir, "log"),
      "-w",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "start",
    ], root);
    if (start.code !== 0) return `pg_ctl start failed: ${start.stderr.trim().slice(0, 300)}`;
  } catch (err) {
    return `cannot start PostgreSQL: ${(err as Error).message}`;
  }
  const psql = async (args: string[]) =>
    await sh(
      [join(bin, "psql"), "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", ...args],
      false,
    );
  const created = await psql(["-d", "postgres", "-c", "CREATE DATABASE team"]);
  if (created.code !== 0) return `CREATE DATABASE failed: ${created.stderr}`;
  const urlAs = (role: string, database = "team") =>
    `postgres://${role}@127.0.0.1:${port}/${database}`;
  return {
    url: urlAs("postgres"),
    port,
    urlAs,
    createDatabase: async (name) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new RangeError(`Not a plain name: "${name}"`);
      const made = await psql(["-d", "postgres", "-c", `CREATE DATABASE ${name}`]);
      if (made.code !== 0) throw new Error(`CREATE DATABASE ${name} failed: ${made.stderr}`);
      return urlAs("postgres", name);
    },
    run: async (program, args) =>
      await sh([
        join(bin, program),
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        ...args,
      ], false),
    stop: async () => {
      await sh([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], root);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
