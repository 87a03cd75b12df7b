// The dashboard as a Hono app: security headers, text in tag characters spelt out, the loopback
// Host check, token auth and the same-origin check in front of routes that call the same library
// functions as the commands.

import { Hono } from "hono";
import { conversationsApi } from "./api/conversations.ts";
import { forgetApi } from "./api/forget.ts";
import { reindexApi } from "./api/reindex.ts";
import { searchApi } from "./api/search.ts";
import { sessionsApi } from "./api/sessions.ts";
import { stageMarkersApi } from "./api/stage_markers.ts";
import { statusApi } from "./api/status.ts";
import { teamApi } from "./api/team.ts";
import { tokenAuth } from "./_auth.ts";
import { type AppDeps, type AppEnv, type Route, type Services, services } from "./_deps.ts";
import { ApiError, errorJson, isApi, toApiError } from "./_errors.ts";
import { hostCheck } from "./_host.ts";
import { limitedBody } from "./_input.ts";
import { sameOrigin } from "./_origin.ts";
import { securityHeaders } from "./_security_headers.ts";
import { visibleText } from "./_visible_text.ts";
import { CSP } from "./pages/assets.ts";
import { errorPage } from "./pages/layout.ts";
import { conversationPageRoute } from "./pages/conversation.ts";
import { exportPageRoute } from "./pages/export.ts";
import { projectsPageRoute } from "./pages/projects.ts";
import { searchPageRoute } from "./pages/search.ts";
import { sessionsPageRoute } from "./pages/sessions.ts";
import { statusPageRoute } from "./pages/status.ts";
import { usagePageRoute } from "./pages/usage.ts";

export type { AppDeps } from "./_deps.ts";

/** Every route file, mounted in order. A new route is one file and one line here. */
export const ROUTES: readonly Route[] = [
  searchApi,
  conversationsApi,
  sessionsApi,
  statusApi,
  reindexApi,
  stageMarkersApi,
  forgetApi,
  teamApi,
  searchPageRoute,
  conversationPageRoute,
  exportPageRoute,
  projectsPageRoute,
  sessionsPageRoute,
  usagePageRoute,
  statusPageRoute,
];

/** Largest request body accepted (the JSON of `POST /api/forget` and friends). */
const MAX_BODY = 64 * 1024;

/** The dashboard app and the services behind it (tests wait on `services.capture`). */
export interface DashboardApp {
  app: Hono<AppEnv>;
  services: Services;
}

/**
 * Builds the dashboard app. Every request needs the token (see `tokenAuth`) and a `Host` among
 * `deps.hosts`; errors are `{"error": {"code", "message", "field"?}}` under `/api/` and an HTML
 * page elsewhere, never with a stack trace.
 *
 * @example
 * const { app } = createApp({ ctx, token, hosts: ["127.0.0.1:8787", "localhost:8787"] });
 * Deno.serve({ hostname: "127.0.0.1", port: 8787 }, app.fetch);
 */
export function createApp(deps: AppDeps): DashboardApp {
  const svc = services(deps);
  const app = new Hono<AppEnv>();
  app.use(securityHeaders(CSP));
  app.use(visibleText());
  app.use(hostCheck(svc.hosts));
  app.use(tokenAuth({ token: svc.token, cookieName: svc.cookieName }));
  app.use(sameOrigin(svc.hosts));
  app.use(limitedBody(MAX_BODY));
  for (const route of ROUTES) app.route("/", route(svc));

  app.notFound((c) => {
    const err = new ApiError(404, "not_found", "There is nothing at this address");
    return isApi(c.req.path) ? errorJson(c, err) : c.html(errorPage(404, err.message), 404);
  });
  app.onError((thrown, c) => {
    const err = toApiError(thrown, svc.onError);
    if (err.status === 401) c.header("WWW-Authenticate", 'Bearer realm="logbook dashboard"');
    return isApi(c.req.path)
      ? errorJson(c, err)
      : c.html(errorPage(err.status, err.message), err.status);
  });
  return { app, services: svc };
}
