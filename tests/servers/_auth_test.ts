// `tokenAuth`: the bearer header, the cookie, and the ?token= visit that sets the cookie.

import assert from "node:assert/strict";
import { sameOriginTarget, sameToken, tokenAuth } from "../../servers/_auth.ts";
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

Deno.test("tokenAuth() redirects a ?token= visit only to a path on the dashboard's own origin", async (t) => {
  const origin = "http://127.0.0.1:8787";
  // As the request line arrives: `//host` and `/\host` (which URL parsing turns into `//host`),
  // dot segments that collapse into `//`, a tab the parser drops, and a backslash host.
  const attacks = [
    "//evil.example/x",
    "/\\evil.example/x",
    "\\\\evil.example/x",
    "/..//evil.example/x",
    "/a/..//evil.example/x",
    "/./\\evil.example/x",
    "/\t/evil.example/x",
  ];
  for (const path of attacks) {
    await t.step(`${JSON.stringify(path)} goes to "/"`, async () => {
      const response = await app.request(`${origin}${path}?token=${TOKEN}`);
      assert.equal(response.status, 303);
      assert.equal(response.headers.get("location"), "/");
    });
  }
  await t.step("paths that only look odd stay as they are, on this origin", async () => {
    for (const path of ["/%2F%2Fevil.example/x", "/%5C%5Cevil.example", "/search?q=%2F%2Fx"]) {
      const response = await app.request(
        `${origin}${path}${path.includes("?") ? "&" : "?"}token=${TOKEN}`,
      );
      const location = response.headers.get("location")!;
      assert.equal(location, path);
      assert.equal(new URL(location, origin).origin, origin);
    }
  });
  await t.step("a request in absolute form for another host keeps only its path", async () => {
    const response = await app.request(`https://evil.example/x?token=${TOKEN}`);
    assert.equal(response.headers.get("location"), "/x");
  });
});

Deno.test("sameOriginTarget() keeps a path on this origin and turns anything else into /", () => {
  for (const target of ["/", "/status", "/?q=a&b=c", "/%2F%2Fevil", "/search?q=//x#//y"]) {
    assert.equal(sameOriginTarget(target), target);
  }
  for (
    const target of [
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "evil.example",
      "",
      "/a\\b",
      "/\tevil",
      "/ /evil",
    ]
  ) {
    assert.equal(sameOriginTarget(target), "/", JSON.stringify(target));
  }
});

Deno.test("sameToken() compares whole tokens of any length", () => {
  assert.equal(sameToken(TOKEN, TOKEN), true);
  assert.equal(sameToken("", TOKEN), false);
  assert.equal(sameToken(TOKEN + TOKEN, TOKEN), false);
  assert.throws(() => tokenAuth({ token: "short", cookieName: "c" }), RangeError);
});
