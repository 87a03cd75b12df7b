// `securityHeaders`: the policy and the fixed headers on every response, errors included.

import assert from "node:assert/strict";
import { securityHeaders } from "../../servers/_security_headers.ts";
import { CSP, SCRIPT, STYLE } from "../../servers/pages/assets.ts";
import { createHash } from "node:crypto";
import { around } from "./_middleware.ts";

Deno.test("securityHeaders() sets the policy and headers on answers and on errors", async () => {
  const app = around(securityHeaders("default-src 'self'"));
  app.get("/fail", () => {
    throw new Error("boom");
  });
  for (const path of ["/", "/fail", "/missing"]) {
    const response = await app.request(`http://127.0.0.1/${path.slice(1)}`);
    await response.body?.cancel();
    assert.equal(response.headers.get("content-security-policy"), "default-src 'self'", path);
    assert.equal(response.headers.get("x-frame-options"), "DENY");
    assert.equal(response.headers.get("referrer-policy"), "no-referrer");
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    assert.equal(response.headers.get("cache-control"), "no-store");
  }
});

Deno.test("the dashboard's policy allows only its own inline script and style, by hash", () => {
  const hash = (text: string) => createHash("sha256").update(text).digest("base64");
  assert.ok(CSP.includes(`script-src 'sha256-${hash(SCRIPT)}'`));
  assert.ok(CSP.includes(`style-src 'sha256-${hash(STYLE)}'`));
  assert.match(CSP, /^default-src 'self';/);
  assert.match(CSP, /frame-ancestors 'none'/);
  assert.doesNotMatch(CSP, /unsafe|\*|https?:/);
});
