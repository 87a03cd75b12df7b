// Token auth for every request: `Authorization: Bearer <token>`, or the cookie that a first
// visit with `?token=<token>` sets (then redirects to the same URL without the token).

import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { ApiError } from "./_errors.ts";
import { sha256 } from "../lib/sha256.ts";

/** Compares two tokens in time that does not depend on where they differ (or their lengths). */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/**
 * A middleware that lets a request through only with the token: a bearer header, the cookie
 * `cookieName`, or (GET and HEAD only) `?token=` in the URL, which sets that cookie (HttpOnly,
 * SameSite=Strict, Path=/) and redirects (303) to the URL without it, so the token does not stay
 * in the address bar or the history. Anything else is a 401.
 */
export function tokenAuth(options: { token: string; cookieName: string }): MiddlewareHandler {
  const { token, cookieName } = options;
  if (token.length < 16) throw new RangeError("The dashboard token must be at least 16 characters");
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
      if (!bearer || !sameToken(bearer[1]!, token)) throw unauthorized("wrong");
      return await next();
    }
    const url = new URL(c.req.url);
    const query = url.searchParams.get("token");
    if (query !== null && (c.req.method === "GET" || c.req.method === "HEAD")) {
      if (!sameToken(query, token)) throw unauthorized("wrong");
      setCookie(c, cookieName, token, { httpOnly: true, sameSite: "Strict", path: "/" });
      url.searchParams.delete("token");
      return c.redirect(sameOriginTarget(`${url.pathname}${url.search}`), 303);
    }
    const cookie = getCookie(c, cookieName);
    if (cookie === undefined) throw unauthorized("missing");
    if (!sameToken(cookie, token)) throw unauthorized("wrong");
    await next();
  };
}

/**
 * `target` when a browser reads it as a path on this origin, else `/`. A path that starts with
 * `//` (or `/\`, which browsers read the same) is a link to another host: the request line
 * `GET //evil.example/x?token=…` must not send the visitor there.
 */
export function sameOriginTarget(target: string): string {
  if (!target.startsWith("/") || /^\/[/\\]/.test(target)) return "/";
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  return /[\\\x00-\x20\x7f]/.test(target) ? "/" : target;
}

function unauthorized(why: "missing" | "wrong"): ApiError {
  return new ApiError(
    401,
    "unauthorized",
    why === "missing"
      ? 'This dashboard needs its access token: open the URL it printed when it started, or send "Authorization: Bearer <token>"'
      : "The access token is wrong: open the URL the dashboard printed when it started",
  );
}
