// `sameOrigin`: a state-changing request that a browser marks as cross-origin is refused.

import assert from "node:assert/strict";
import { sameOrigin } from "../../servers/_origin.ts";
import { around } from "./_middleware.ts";

Deno.test("sameOrigin() refuses a POST from another origin or site and lets reads through", async () => {
  const app = around(sameOrigin(["127.0.0.1:8787"]));
  const post = (headers: Record<string, string>) =>
    app.request("http://127.0.0.1:8787/", { method: "POST", headers });
  assert.equal((await post({})).status, 200, "no browser headers: a script with the token");
  assert.equal((await post({ Origin: "http://127.0.0.1:8787" })).status, 200);
  assert.equal((await post({ "Sec-Fetch-Site": "same-origin" })).status, 200);
  assert.equal((await post({ Origin: "http://127.0.0.1:3000" })).status, 403, "another port");
  assert.equal((await post({ Origin: "null" })).status, 403);
  assert.equal((await post({ "Sec-Fetch-Site": "same-site" })).status, 403);
  assert.equal((await post({ "Sec-Fetch-Site": "cross-site" })).status, 403);
  const read = await app.request("http://127.0.0.1:8787/", {
    headers: { Origin: "http://evil.example", "Sec-Fetch-Site": "cross-site" },
  });
  assert.equal(read.status, 200, "reads change nothing; CORS keeps their answer from the page");
});
