// The dashboard's one error shape, `{"error": {"code", "message", "field"?}}`, and the handlers
// that turn anything thrown into it: no stack trace or internal detail ever reaches the client.

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { FilterError } from "../lib/filters.ts";
import { describeIssue } from "../lib/filters_schema.ts";
import { ConversationNotFoundError } from "../lib/store/conversations.ts";
import {
  StoreDamagedError,
  StoreFullError,
  StoreLockedError,
  translateError,
} from "../lib/store/db.ts";
import { SearchLimitError, SearchStoppedError } from "../lib/store/search.ts";

/** The codes an error response can carry. */
export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "no_store"
  | "conflict"
  | "too_large"
  | "unavailable"
  | "internal";

/** The body of every error response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string };
}

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503;

/** An error a handler throws on purpose; its message is shown to the client as is. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }

  /** The response body. */
  body(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field === undefined ? {} : { field: this.field }),
      },
    };
  }
}

/** A 400 naming the input field that was wrong. */
export function badRequest(field: string, message: string): ApiError {
  return new ApiError(400, "bad_request", message, field);
}

/** A 400 for the first problem zod found; `name` names a value validated on its own. */
export function fromZod(error: z.ZodError, name?: string): ApiError {
  const issue = describeIssue(error);
  const { message } = issue;
  const field = name === undefined
    ? issue.field
    : issue.field === "input"
    ? name
    : `${name}.${issue.field}`;
  return badRequest(field, `Invalid value for "${field}": ${message}`);
}

/**
 * What a thrown value means for the client: an ApiError as it is, the library's expected
 * failures mapped to their status, anything else a 500 with a fixed message (`report` gets the
 * real error, for the dashboard's own terminal).
 */
export function toApiError(thrown: unknown, report: (err: unknown) => void): ApiError {
  if (thrown instanceof ApiError) return thrown;
  const err = translateError(thrown);
  if (err instanceof z.ZodError) return fromZod(err);
  if (err instanceof FilterError) return fromFilter(err);
  if (err instanceof ConversationNotFoundError) return new ApiError(404, "not_found", err.message);
  if (err instanceof StoreLockedError) {
    return new ApiError(503, "unavailable", "The history store is busy: try again in a moment");
  }
  if (err instanceof StoreDamagedError) {
    // What is damaged and how to recover, which the user can act on (never a stack).
    report(err);
    return new ApiError(500, "internal", err.message);
  }
  if (err instanceof StoreFullError) {
    return new ApiError(
      503,
      "unavailable",
      "The history store cannot be written: the disk is full",
    );
  }
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError(413, "too_large", "The request body is too large");
    if (err.status === 400) return badRequest("body", "The request body could not be read");
  }
  report(err);
  return new ApiError(500, "internal", "Internal error: the dashboard's terminal has the details");
}

/** A filter that could not be resolved: a 404 for an unknown session, else a 400. */
export function fromFilter(err: FilterError): ApiError {
  return err.field === "session"
    ? new ApiError(404, "not_found", `Unknown "session": ${lowerFirst(err.message)}`, "session")
    : badRequest(err.field, `Invalid value for "${err.field}": ${err.message}`);
}

/**
 * The 400 of a search stopped by its bounds or its budget (local or team), which is about the
 * query: what to change in it. Null for any other error.
 */
export function searchQueryError(err: unknown): ApiError | null {
  if (!(err instanceof SearchLimitError || err instanceof SearchStoppedError)) return null;
  return badRequest("q", `Invalid value for "q": ${lowerFirst(err.message)}`);
}

/** Sends `err` as the JSON error shape. */
export function errorJson(c: Context, err: ApiError): Response {
  return c.json(err.body(), err.status);
}

/** True for requests answered in JSON (the API); pages get HTML errors. */
export function isApi(path: string): boolean {
  return path === "/api" || path.startsWith("/api/");
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
