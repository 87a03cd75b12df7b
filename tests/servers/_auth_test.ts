// `tokenAuth`: the bearer header, the cookie, and the ?token= visit that sets the cookie.

import assert from "node:assert/strict";
import { sameToken, tokenAuth } from "../../servers/_auth.ts";
import { around } from "./_middleware.ts";

const TOKEN = "a-token-of-at-least-sixteen-chars";
const app = around(tokenAuth({ token: TOKEN, cookieName: "logbook_token_8787" }));
const get = (path: string, headers: Record<string, string> = {}) =>
  app.request(`http://127.0.0.1:8787${path}`, { headers });

Deno.test("tokenAuth() accepts the bearer token and refuses a missing or wrong one", async () => {
  assert.equal((await get("/", { Authorization: `Bearer ${TOKEN}` })).status, 200);
  assert.equal((await get("/", { Authorization: `bearer  ${TOKEN}` })).status, 200);
  for (
    const headers of [
      {},
      { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { Authorization: `Bearer ${TOKEN}X` },
      { Authorization: TOKEN },
      { Cookie: `logbook_token_8787=${TOKEN}x` },
      { Cookie: `other_cookie=${TOKEN}` },
    ]
  ) {
    const response = await get("/", headers);
    assert.equal(response.status, 401, JSON.stringify(headers));
    assert.equal((await response.json()).error.code, "unauthorized");
  }
});

Deno.test("tokenAuth() trades ?token= for a strict cookie and a redirect without the token", async () => {
  const response = await get(`/?a=1&token=${TOKEN}&b=2`);
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), "/?a=1&b=2");
  const cookie = response.headers.get("set-cookie")!;
  assert.equal(cookie, `logbook_token_8787=${TOKEN}; Path=/; HttpOnly; SameSite=Strict`);
  assert.equal((await get("/", { Cookie: cookie.split(";")[0]! })).status, 200);
  assert.equal((await get(`/?token=wrong`)).status, 401);
  const post = await app.request(`http://127.0.0.1:8787/?token=${TOKEN}`, { method: "POST" });
  assert.equal(post.status, 401, "a POST cannot log in through the URL");
});

Deno.test("sameToken() compares whole tokens of any length", () => {
  assert.equal(sameToken(TOKEN, TOKEN), true);
  assert.equal(sameToken("", TOKEN), false);
  assert.equal(sameToken(TOKEN + TOKEN, TOKEN), false);
  assert.throws(() => tokenAuth({ token: "short", cookieName: "c" }), RangeError);
});
