// Refuses state-changing requests that a browser says come from another origin: a page on
// another local port is "same-site" and would carry the SameSite cookie, but not the same origin.

import type { MiddlewareHandler } from "hono";
import { ApiError } from "./_errors.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A middleware that answers 403 to a POST (or any unsafe method) whose `Origin` is not
 * `http://<one of hosts>`, or whose `Sec-Fetch-Site` is not `same-origin` or `none`. Requests
 * without those headers (curl, scripts with the bearer token) pass. `Origin: null` passes only
 * with `Sec-Fetch-Site: same-origin`: that is what a browser sends for the dashboard's own forms
 * under its `no-referrer` policy, and no page can set `Sec-Fetch-Site` itself.
 */
export function sameOrigin(hosts: readonly string[]): MiddlewareHandler {
  const origins = new Set(hosts.map((h) => `http://${h.toLowerCase()}`));
  return async (c, next) => {
    if (!SAFE.has(c.req.method)) {
      const origin = c.req.header("origin");
      const site = c.req.header("sec-fetch-site");
      const ownForm = origin === "null" && site === "same-origin";
      if (
        (origin !== undefined && !ownForm && !origins.has(origin.toLowerCase())) ||
        (site !== undefined && site !== "same-origin" && site !== "none")
      ) {
        throw new ApiError(403, "forbidden", "Cross-origin requests cannot change anything here");
      }
    }
    await next();
  };
}
