// Ctrl-C as `deno task` delivers it to a dashboard: twice, once from the terminal and once
// forwarded by the task runner, the second while the first is still being handled. A request the
// dashboard is still reading holds its shutdown open, so the second signal lands in that moment
// every time rather than by chance.

/** Sends `pid` SIGINT twice, the second while the dashboard on `port` is shutting down. */
export async function ctrlCTwice(pid: number, port: number, token: string): Promise<void> {
  const held = await heldRequest(port, token);
  Deno.kill(pid, "SIGINT");
  await untilClosed(port);
  Deno.kill(pid, "SIGINT");
  await held.finish();
}

/**
 * A POST the dashboard has begun reading (it answered `100 Continue`) and that lasts until
 * `finish` sends its body. Its answer is not read: the shutdown may cut it short.
 */
async function heldRequest(port: number, token: string): Promise<{ finish(): Promise<void> }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const encoder = new TextEncoder();
  await conn.write(encoder.encode(
    `POST /api/forget HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n",
  ));
  const answer = new Uint8Array(256);
  let read = "";
  while (!read.includes("\r\n\r\n")) {
    const n = await conn.read(answer);
    if (n === null) throw new Error(`The dashboard closed the request: ${JSON.stringify(read)}`);
    read += new TextDecoder().decode(answer.subarray(0, n));
  }
  if (!read.startsWith("HTTP/1.1 100 ")) {
    throw new Error(`The dashboard did not start reading the request: ${JSON.stringify(read)}`);
  }
  return {
    async finish() {
      await conn.write(encoder.encode("{}")).catch(() => 0);
      conn.close();
    },
  };
}

/** Resolves once nothing accepts connections on `port`: the server began shutting down. */
async function untilClosed(port: number): Promise<void> {
  while (true) {
    let conn: Deno.Conn;
    try {
      conn = await Deno.connect({ hostname: "127.0.0.1", port });
    } catch {
      return;
    }
    conn.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
