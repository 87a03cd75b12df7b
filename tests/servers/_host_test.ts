// `hostCheck`: only the loopback names the dashboard serves get through.

import assert from "node:assert/strict";
import { hostCheck } from "../../servers/_host.ts";
import { around } from "./_middleware.ts";

Deno.test("hostCheck() lets the served names through and refuses any other Host with a 403", async () => {
  const app = around(hostCheck(["127.0.0.1:8787", "localhost:8787"]));
  for (const host of ["127.0.0.1:8787", "localhost:8787", "LocalHost:8787"]) {
    const response = await app.request("http://127.0.0.1:8787/", { headers: { Host: host } });
    assert.equal(response.status, 200, host);
  }
  for (const host of ["attacker.example", "attacker.example:8787", "127.0.0.1", "0.0.0.0:8787"]) {
    const response = await app.request("http://127.0.0.1:8787/", { headers: { Host: host } });
    assert.equal(response.status, 403, host);
    const body = await response.json();
    assert.equal(body.error.code, "forbidden");
  }
});

Deno.test("hostCheck() falls back to the URL's host when there is no Host header", async () => {
  const app = around(hostCheck(["127.0.0.1:8787"]));
  assert.equal((await app.request("http://127.0.0.1:8787/")).status, 200);
  assert.equal((await app.request("http://localhost/")).status, 403);
});
