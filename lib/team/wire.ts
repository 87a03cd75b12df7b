// A small PostgreSQL client for `search --team`, which a person waits for: the `postgres` driver
// costs every start about 70 ms of CPU to load (Node compatibility, its streams and crypto),
// more than the search itself. This one speaks the wire protocol over Deno's own TCP and takes
// the subset of the driver's API a team search uses (tagged queries and fragments, `unsafe`,
// `begin`, `savepoint`, `end`): one connection, text values, statements one after another.
// Where it cannot go (TLS or other URL options, a socket path, an authentication other than
// trust, a password or SCRAM-SHA-256), `connectQuick` says so and the caller takes the driver.

import type { Sql } from "postgres";
import { TEAM_SESSION } from "./db.ts";

/** PostgreSQL's answer to a statement: `code` is its SQLSTATE, as the driver's errors have it. */
export class WireError extends Error {
  override name = "PostgresError";
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/** What this client cannot do, for the caller to take the driver instead. */
class Unsupported extends Error {
  override name = "Unsupported";
}

/** Raw SQL text inside a query (the driver's `sql.unsafe(text)` used as a fragment). */
class Raw {
  constructor(readonly text: string) {}
}

type Row = Record<string, unknown>;

/** A tagged query: run when awaited, inlined (with its values) when inside another. */
class Query implements PromiseLike<Row[]> {
  constructor(
    private readonly conn: Connection,
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  then<A = Row[], B = never>(
    ok?: ((rows: Row[]) => A | PromiseLike<A>) | null,
    fail?: ((err: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    const params: string[] = [];
    const text = build(this, params);
    return this.conn.run(text, params).then(ok, fail);
  }
}

/** The SQL text of `query` with `$n` for each value, the values' text appended to `params`. */
function build(query: Query, params: (string | null)[]): string {
  let text = query.strings[0]!;
  query.values.forEach((value, i) => {
    text += inline(value, params) + query.strings[i + 1]!;
  });
  return text;
}

function inline(value: unknown, params: (string | null)[]): string {
  if (value instanceof Query) return build(value, params);
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value) && value.every((v) => v instanceof Query)) {
    return value.map((v) => build(v, params)).join(" ");
  }
  params.push(serialize(value));
  return `$${params.length}`;
}

function serialize(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  throw new TypeError(`Cannot send a value of type ${typeof value} to the team database`);
}

/** Type OIDs whose text is read as a number, a boolean or a time; the rest stay text. */
const NUMBERS = new Set([20, 21, 23, 26, 700, 701, 1700]);
const BOOL = 16;
const TIMES = new Set([1114, 1184]);

function parseValue(text: string, type: number): unknown {
  if (NUMBERS.has(type)) return Number(text);
  if (type === BOOL) return text === "t";
  if (TIMES.has(type)) return new Date(text.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));
  return text;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One message to the server: its type byte (none for the startup), length and body. */
function message(type: string | null, ...parts: (string | number | Uint8Array)[]): Uint8Array {
  const chunks = parts.map((part) => {
    if (typeof part === "number") {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setInt32(0, part);
      return b;
    }
    return typeof part === "string" ? encoder.encode(part) : part;
  });
  const size = chunks.reduce((n, c) => n + c.length, 4);
  const out = new Uint8Array(size + (type ? 1 : 0));
  let at = 0;
  if (type) out[at++] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(at, size);
  at += 4;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function int16(n: number): Uint8Array {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setInt16(0, n);
  return b;
}

/** The messages of one extended-protocol statement: parse, bind (text), describe, run, sync. */
function statement(text: string, params: (string | null)[]): Uint8Array {
  const values = params.flatMap((p) => {
    if (p === null) return [-1];
    const bytes = encoder.encode(p);
    return [bytes.length, bytes];
  });
  const parts = [
    message("P", "\0", text, "\0", int16(0)),
    message("B", "\0\0", int16(0), int16(params.length), ...values, int16(0)),
    message("D", "P\0"),
    message("E", "\0", 0),
    message("S"),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A connection: messages read from the socket in order, statements run one at a time. */
class Connection {
  // What was read and not yet taken: `#buffer[#start..#end]`, in a buffer that doubles as a
  // large row needs, so reading a row of megabytes copies it a few times, not once a chunk.
  #buffer = new Uint8Array(65536);
  #start = 0;
  #end = 0;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly socket: Deno.Conn) {}

  async send(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length;) at += await this.socket.write(bytes.subarray(at));
  }

  /** The next message: its type and body. */
  async next(): Promise<{ type: string; body: Uint8Array }> {
    while (true) {
      const held = this.#end - this.#start;
      let needed = 5;
      if (held >= 5) {
        const size = new DataView(this.#buffer.buffer).getInt32(this.#start + 1);
        if (held >= size + 1) {
          const type = String.fromCharCode(this.#buffer[this.#start]!);
          const body = this.#buffer.slice(this.#start + 5, this.#start + size + 1);
          this.#start += size + 1;
          return { type, body };
        }
        needed = size + 1;
      }
      if (this.#buffer.length - this.#start < Math.max(needed, held + 4096)) {
        const room = new Uint8Array(Math.max(this.#buffer.length, 2 * needed, held + 65536));
        room.set(this.#buffer.subarray(this.#start, this.#end));
        this.#buffer = room;
        this.#end = held;
        this.#start = 0;
      }
      const n = await this.socket.read(this.#buffer.subarray(this.#end));
      if (n === null) throw new Error("The team database closed the connection");
      this.#end += n;
    }
  }

  /** Runs one statement; its rows, each an object by column name. */
  run(text: string, params: (string | null)[]): Promise<Row[]> {
    const done = this.#queue.then(() => this.#run(text, params));
    this.#queue = done.catch(() => {});
    return done;
  }

  async #run(text: string, params: (string | null)[]): Promise<Row[]> {
    await this.send(statement(text, params));
    let columns: { name: string; type: number }[] = [];
    const rows: Row[] = [];
    let error: WireError | null = null;
    for (;;) {
      const { type, body } = await this.next();
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      if (type === "T") columns = rowDescription(body, view);
      else if (type === "D") rows.push(dataRow(body, view, columns));
      else if (type === "E") error = errorOf(body);
      else if (type === "Z") {
        if (error) throw error;
        return rows;
      }
    }
  }

  close(): void {
    try {
      this.socket.close();
    } catch (err) {
      if (!(err instanceof Deno.errors.BadResource)) throw err;
    }
  }
}

function cString(body: Uint8Array, at: number): [string, number] {
  const end = body.indexOf(0, at);
  return [decoder.decode(body.subarray(at, end)), end + 1];
}

function rowDescription(body: Uint8Array, view: DataView): { name: string; type: number }[] {
  const count = view.getInt16(0);
  const columns = [];
  let at = 2;
  for (let i = 0; i < count; i++) {
    const [name, after] = cString(body, at);
    columns.push({ name, type: view.getInt32(after + 6) });
    at = after + 18;
  }
  return columns;
}

function dataRow(body: Uint8Array, view: DataView, columns: { name: string; type: number }[]) {
  const row: Row = {};
  let at = 2;
  for (const column of columns) {
    const size = view.getInt32(at);
    at += 4;
    if (size < 0) row[column.name] = null;
    else {
      row[column.name] = parseValue(decoder.decode(body.subarray(at, at + size)), column.type);
      at += size;
    }
  }
  return row;
}

/** An ErrorResponse as an error with its message (and detail) and SQLSTATE. */
function errorOf(body: Uint8Array): WireError {
  const fields: Record<string, string> = {};
  for (let at = 0; body[at] !== 0 && at < body.length;) {
    const key = String.fromCharCode(body[at]!);
    const [value, after] = cString(body, at + 1);
    fields[key] = value;
    at = after;
  }
  return new WireError(fields.M ?? "unknown error", fields.C ?? "");
}

/** Where and as whom to connect, from a `postgres://` URL this client can take, else null. */
function target(url: string): {
  hostname: string;
  port: number;
  user: string;
  password: string;
  database: string;
} | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol) || parsed.search || !parsed.hostname) return null;
  const user = decodeURIComponent(parsed.username);
  if (!user) return null;
  const database = decodeURIComponent(parsed.pathname.slice(1)) || user;
  return {
    hostname: parsed.hostname.replace(/^\[|\]$/g, ""),
    port: parsed.port ? Number(parsed.port) : 5432,
    user,
    password: decodeURIComponent(parsed.password),
    database,
  };
}

/** Signs in: trust, a password in clear, or SCRAM-SHA-256; anything else is Unsupported. */
async function authenticate(conn: Connection, user: string, password: string): Promise<void> {
  let scram: Scram | null = null;
  for (;;) {
    const { type, body } = await conn.next();
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    if (type === "E") throw errorOf(body);
    if (type === "Z") return;
    if (type !== "R") continue;
    const code = view.getInt32(0);
    if (code === 0) continue;
    if (code === 3 && password) await conn.send(message("p", password, "\0"));
    else if (
      code === 10 && password && decoder.decode(body.subarray(4)).includes("SCRAM-SHA-256\0")
    ) {
      scram = new Scram(user, password);
      const first = encoder.encode(scram.clientFirst());
      await conn.send(message("p", "SCRAM-SHA-256\0", first.length, first));
    } else if (code === 11 && scram) {
      await conn.send(message("p", await scram.clientFinal(decoder.decode(body.subarray(4)))));
    } else if (code === 12 && scram) {
      if (!await scram.verify(decoder.decode(body.subarray(4)))) {
        throw new Error("The team database's SCRAM signature did not match");
      }
    } else throw new Unsupported(`authentication ${code}`);
  }
}

/** SCRAM-SHA-256 (RFC 5802, 7677) with Web Crypto: no channel binding, as over plain TCP. */
class Scram {
  #nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(18))));
  #firstBare = "";
  #auth = "";
  #salted: Uint8Array<ArrayBuffer> | null = null;

  constructor(_user: string, private readonly password: string) {}

  clientFirst(): string {
    this.#firstBare = `n=*,r=${this.#nonce}`;
    return `n,,${this.#firstBare}`;
  }

  async clientFinal(serverFirst: string): Promise<string> {
    const f = Object.fromEntries(serverFirst.split(",").map((kv) => [kv[0], kv.slice(2)]));
    if (!f.r?.startsWith(this.#nonce) || !f.s || !f.i) {
      throw new Error("The team database sent a malformed SCRAM message");
    }
    const key = await crypto.subtle.importKey(
      "raw",
      encoder.encode(this.password.normalize("NFKC")),
      "PBKDF2",
      false,
      ["deriveBits"],
    );
    this.#salted = new Uint8Array(
      await crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: "SHA-256", salt: base64(f.s), iterations: Number(f.i) },
        key,
        256,
      ),
    );
    const withoutProof = `c=biws,r=${f.r}`;
    this.#auth = `${this.#firstBare},${serverFirst},${withoutProof}`;
    const clientKey = await hmac(this.#salted, "Client Key");
    const stored = new Uint8Array(await crypto.subtle.digest("SHA-256", clientKey));
    const signature = await hmac(stored, this.#auth);
    const proof = clientKey.map((b, i) => b ^ signature[i]!);
    return `${withoutProof},p=${btoa(String.fromCharCode(...proof))}`;
  }

  async verify(serverFinal: string): Promise<boolean> {
    const expected = await hmac(await hmac(this.#salted!, "Server Key"), this.#auth);
    return serverFinal.trim() === `v=${btoa(String.fromCharCode(...expected))}`;
  }
}

async function hmac(key: Uint8Array, text: string): Promise<Uint8Array<ArrayBuffer>> {
  const k = await crypto.subtle.importKey(
    "raw",
    key as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(text)));
}

function base64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The driver's API over one connection, as far as a team search uses it. */
function sqlOf(conn: Connection): Sql {
  let savepoints = 0;
  const tag = (strings: TemplateStringsArray, ...values: unknown[]) =>
    new Query(conn, strings, values);
  const sql = tag as unknown as Sql;
  const api = tag as unknown as Record<string, unknown>;
  api.unsafe = (text: string) => new Raw(text);
  // `begin(fn)` or, as the driver takes it, `begin(options, fn)`: its letters and spaces only.
  api.begin = async (...args: [(tx: Sql) => unknown] | [string, (tx: Sql) => unknown]) => {
    const [options, fn] = args.length === 2 ? args : ["", args[0]];
    await conn.run(`BEGIN ${options.replace(/[^a-z ]/gi, "")}`.trim(), []);
    try {
      const result = await fn(sql);
      await conn.run("COMMIT", []);
      return result;
    } catch (err) {
      await conn.run("ROLLBACK", []).catch(() => {});
      throw err;
    }
  };
  api.savepoint = async (fn: (sp: Sql) => unknown) => {
    const name = `s${++savepoints}`;
    await conn.run(`SAVEPOINT ${name}`, []);
    try {
      const result = await fn(sql);
      await conn.run(`RELEASE SAVEPOINT ${name}`, []);
      return result;
    } catch (err) {
      await conn.run(`ROLLBACK TO SAVEPOINT ${name}`, []);
      throw err;
    }
  };
  api.end = async () => {
    await conn.send(message("X")).catch(() => {});
    conn.close();
  };
  return sql;
}

/**
 * Connects to the team database at `url` with this client, for a team search: null when it
 * cannot (see the file comment), and the caller connects with the driver instead. Throws what
 * the server answered (a wrong password, no such database) and what the network did.
 */
export async function connectQuick(url: string): Promise<Sql | null> {
  const to = target(url);
  if (!to) return null;
  const socket = await Deno.connect({ hostname: to.hostname, port: to.port });
  const conn = new Connection(socket);
  try {
    socket.setNoDelay(true);
    await conn.send(message(
      null,
      196608,
      `user\0${to.user}\0database\0${to.database}\0client_encoding\0UTF8\0`,
      "DateStyle\0ISO\0application_name\0logbook\0",
      ...Object.entries(TEAM_SESSION).map(([name, value]) => `${name}\0${value}\0`),
      "\0",
    ));
    await authenticate(conn, to.user, to.password);
    return sqlOf(conn);
  } catch (err) {
    conn.close();
    if (err instanceof Unsupported) return null;
    throw err;
  }
}
