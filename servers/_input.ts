// Reading request input with zod: query strings (empty values count as absent), JSON bodies,
// and ids, which must not carry path characters.

import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { MAX_ID_CHARS } from "../lib/store/conversations.ts";
import { ApiError, badRequest, fromZod } from "./_errors.ts";

/**
 * A conversation id as the dashboard takes it: `<agent>:<native id>`, a native id, or a unique
 * prefix. Path characters are refused: `\`, NUL and control characters, `..`, and `/` anywhere
 * except the one place real ids have it, a Claude subagent's `<sessionId>/agent-<agentId>`.
 */
export const conversationId = z.string()
  .min(1, "the id is empty")
  .max(MAX_ID_CHARS, "the id is too long")
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  .refine((id) => !/[\\\x00-\x1f\x7f]/.test(id), "an id cannot contain path characters")
  .refine((id) => !id.includes(".."), "an id cannot contain path characters")
  .refine(
    (id) => !id.includes("/") || /^[^/]+\/agent-[A-Za-z0-9_.-]+$/.test(id),
    "an id cannot contain path characters",
  );

/** A whole number in a query string, within bounds. */
export function queryInt(min: number, max: number) {
  return z.string()
    .regex(/^\d{1,12}$/, "expected a whole number")
    .transform(Number)
    .pipe(
      z.number().int().min(min, `expected at least ${min}`).max(max, `expected at most ${max}`),
    );
}

/** A yes/no flag in a query string: `1`, `true`, `0` or `false`. */
export const queryFlag = z.enum(["1", "true", "0", "false"], {
  error: 'expected "1", "true", "0" or "false"',
}).transform((v) => v === "1" || v === "true");

/**
 * The query string validated by `schema`. Empty values count as absent (a form's unset fields),
 * except those named in `keepEmpty`, so that an empty query gets its own message.
 */
export function parseQuery<S extends z.ZodType>(
  c: Context,
  schema: S,
  keepEmpty: readonly string[] = [],
): z.infer<S> {
  return parseFields(c.req.query(), schema, keepEmpty);
}

/** `fields` (a query string's, or a form's) validated by `schema`, as `parseQuery` does. */
export function parseFields<S extends z.ZodType>(
  fields: Record<string, string>,
  schema: S,
  keepEmpty: readonly string[] = [],
): z.infer<S> {
  const raw: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === "" && !keepEmpty.includes(key)) continue;
    raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw fromZod(parsed.error);
  return parsed.data;
}

/** The `:id` route parameter, checked with `conversationId`. */
export function parseId(c: Context, name = "id"): string {
  const parsed = conversationId.safeParse(c.req.param(name));
  if (!parsed.success) throw fromZod(parsed.error, name);
  return parsed.data;
}

/** A JSON body validated by `schema`; an empty body counts as `{}`. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text().catch(() => {
    throw unreadableBody();
  });
  let value: unknown = {};
  if (text.trim() !== "") {
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) {
      throw badRequest("body", 'The request body must be JSON ("Content-Type: application/json")');
    }
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest("body", "The request body is not valid JSON");
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZod(parsed.error);
  return parsed.data;
}

/**
 * hono's `bodyLimit`: a body over `maxSize` bytes is a 413. A body sent in chunks is read whole
 * here, and one that fails as it is read is answered as `parseBody` answers it.
 */
export function limitedBody(maxSize: number): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError(413, "too_large", `The request body is over ${maxSize} bytes`);
    },
  });
  return async (c, next) => {
    let read = false;
    try {
      return await limit(c, () => {
        read = true;
        return next();
      });
    } catch (err) {
      if (read || err instanceof ApiError) throw err;
      throw unreadableBody();
    }
  };
}

/**
 * A body that could not be read: the client went, or the dashboard is shutting down. The
 * request's failure, not the dashboard's: a 400, with nothing for its terminal.
 */
function unreadableBody(): ApiError {
  return badRequest("body", "The request body could not be read");
}
