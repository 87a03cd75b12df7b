// Security headers on every response, errors included: a content security policy that allows
// only this origin and the dashboard's own inline script and style, no framing, no referrer.

import type { MiddlewareHandler } from "hono";

/**
 * A middleware that sets the given content security policy and the fixed headers: no framing,
 * no referrer, no MIME sniffing, no caching (the pages hold private conversations).
 */
export function securityHeaders(csp: string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const headers = c.res.headers;
    headers.set("Content-Security-Policy", csp);
    headers.set("X-Frame-Options", "DENY");
    headers.set("Referrer-Policy", "no-referrer");
    headers.set("X-Content-Type-Options", "nosniff");
    headers.set("Cross-Origin-Opener-Policy", "same-origin");
    headers.set("Cross-Origin-Resource-Policy", "same-origin");
    headers.set("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
    headers.set("Cache-Control", "no-store");
  };
}
