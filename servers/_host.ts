// Refuses requests whose `Host` is not one of the loopback names the dashboard serves, so a web
// page that rebinds its own domain name to 127.0.0.1 (DNS rebinding) cannot reach it.

import type { MiddlewareHandler } from "hono";
import { ApiError } from "./_errors.ts";

/**
 * A middleware that answers 403 unless the request's `Host` header (or, without one, the host
 * of its URL) is one of `hosts`, compared case-insensitively.
 *
 * @example
 * app.use(hostCheck(["127.0.0.1:8787", "localhost:8787"]));
 */
export function hostCheck(hosts: readonly string[]): MiddlewareHandler {
  const allowed = new Set(hosts.map((h) => h.toLowerCase()));
  const names = [...allowed].map((h) => `"${h}"`).join(" and ");
  return async (c, next) => {
    const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
    if (!allowed.has(host)) {
      // The offending name is not echoed back: it is whatever the requester chose.
      throw new ApiError(
        403,
        "forbidden",
        `This dashboard answers only to ${names}: the request named another host`,
      );
    }
    await next();
  };
}
