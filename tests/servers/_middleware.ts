// A bare Hono app around one middleware, answering errors in the dashboard's shape, for the
// middleware tests.

import { Hono, type MiddlewareHandler } from "hono";
import { errorJson, toApiError } from "../../servers/_errors.ts";

/** An app with `middleware` in front of `GET /` and `POST /` that answer "ok". */
export function around(middleware: MiddlewareHandler): Hono {
  const app = new Hono();
  app.use(middleware);
  app.get("/", (c) => c.text("ok"));
  app.post("/", (c) => c.text("ok"));
  app.onError((err, c) => errorJson(c, toApiError(err, () => {})));
  return app;
}
