// The search filters as users give them (flags on the command line, query parameters in the
// dashboard), validated once with zod and resolved into what the store searches by.

import { z } from "zod";
import { type Context } from "./context.ts";
import { projectOfUserPath } from "./paths.ts";
import { AGENTS, KINDS, ROLES } from "./sources/adapter.ts";
import { HistoryStore } from "./store/db.ts";
import { findConversation } from "./store/conversations.ts";
import { SEARCH_SORTS, type SearchOptions } from "./store/search.ts";
import { parseWhen } from "./when.ts";

/** The most hits one search returns. */
export const MAX_SEARCH_LIMIT = 1000;

/** The longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 4096;

/** A search request as a user writes it. */
export const searchInput = z.object({
  q: z.string().trim().min(1, "the query is empty").max(
    MAX_QUERY_CHARS,
    `the query is over ${MAX_QUERY_CHARS} characters`,
  ),
  project: z.string().min(1).optional(),
  agent: z.enum(AGENTS).optional(),
  session: z.string().min(1).max(300).optional(),
  kind: z.enum(KINDS).optional(),
  role: z.enum(ROLES).optional(),
  since: z.string().min(1).optional(),
  until: z.string().min(1).optional(),
  subagents: z.boolean().optional(),
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  sort: z.enum(SEARCH_SORTS).optional(),
});
export type SearchInput = z.infer<typeof searchInput>;

/** A filter value that cannot be resolved (an unknown session, an unreadable date). */
export class FilterError extends Error {
  override name = "FilterError";
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

/** The first problem zod found: the field, a plain message and, when known, what it takes. */
export interface InputIssue {
  field: string;
  /** A plain phrase: `expected claude, codex, opencode or logbook`. */
  message: string;
  /** What the field takes, when the problem is the value's form: `a whole number from 1 to 1000`. */
  expected?: string;
}

/** The first problem zod found, in plain words (never zod's `received NaN` or `"a"|"b"`). */
export function describeIssue(error: z.ZodError): InputIssue {
  const issue = error.issues[0];
  const field = issue?.path.join(".") || "input";
  // The query's own messages are already plain sentences.
  const expected = issue && field !== "q" ? expectedOf(issue) : undefined;
  if (expected === undefined) return { field, message: issue?.message ?? "invalid" };
  return { field, message: `expected ${expected}`, expected };
}

function expectedOf(issue: z.core.$ZodIssue): string | undefined {
  if (issue.path.join(".") === "limit") return `a whole number from 1 to ${MAX_SEARCH_LIMIT}`;
  switch (issue.code) {
    case "invalid_value":
      return oneOf(issue.values.map(String));
    case "invalid_type":
      return issue.expected === "number" || issue.expected === "int"
        ? "a number"
        : `a ${issue.expected}`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "a value, not nothing";
      return issue.origin === "number" ? `a number of at least ${issue.minimum}` : undefined;
    case "too_big":
      if (issue.origin === "string") return `at most ${issue.maximum} characters`;
      return issue.origin === "number" ? `a number of at most ${issue.maximum}` : undefined;
    default:
      return undefined;
  }
}

/** `claude, codex, opencode or logbook`. */
export function oneOf(values: readonly string[]): string {
  if (values.length < 2) return values.join("");
  return `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

/** Resolves a search of the team database: the filters of `resolveSearch` but a session. */
export function resolveTeamSearch(input: SearchInput, ctx: Context): SearchOptions {
  return resolveSearch(input, ctx, null);
}

/**
 * Resolves a validated search input: `project` is a directory (relative to where the user
 * stands; `.` is this project) turned into its project identity, `session` a conversation id
 * or unique prefix, `since`/`until` ISO or relative times.
 */
export function resolveSearch(
  input: SearchInput,
  ctx: Context,
  store: HistoryStore | null,
): SearchOptions {
  const options: SearchOptions = { query: input.q };
  if (input.project !== undefined) {
    options.project = projectOfUserPath(input.project, ctx.env).root;
  }
  if (input.agent) options.agent = input.agent;
  if (input.kind) options.kind = input.kind;
  if (input.role) options.role = input.role;
  if (input.subagents !== undefined) options.subagents = input.subagents;
  if (input.limit !== undefined) options.limit = input.limit;
  if (input.sort !== undefined) options.sort = input.sort;
  if (input.session !== undefined) {
    if (!store) {
      throw new FilterError("session", "a session is looked up in the history store only");
    }
    try {
      options.conversationId = findConversation(store, input.session).id;
    } catch (err) {
      throw new FilterError("session", (err as Error).message);
    }
  }
  for (const field of ["since", "until"] as const) {
    const value = input[field];
    if (value === undefined) continue;
    try {
      options[field] = parseWhen(value, ctx.now());
    } catch (err) {
      throw new FilterError(field, (err as Error).message);
    }
  }
  return options;
}
