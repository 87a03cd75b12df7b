// The search filters as a zod schema, for the dashboard, which extends it with its query-string
// forms, made from the filters' table (`filters_table.ts`): the same rules as `parseSearchInput`
// in filters.ts (a test holds the two together), kept apart so that the search command never
// loads zod.

import { z } from "zod";
import {
  type InputIssue,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  oneOf,
  type SearchInput,
} from "./filters.ts";
import {
  FILTER_NAMES,
  type FilterName,
  FILTERS,
  type FilterSpec,
  type FilterValues,
} from "./filters_table.ts";
import { MAX_ID_CHARS } from "./store/conversations.ts";
import { FORGIVE_MODES, SEARCH_SORTS } from "./store/search.ts";

/** The zod schema of a filter, from its row in `FILTERS`. */
function filterSchema(spec: FilterSpec) {
  switch (spec.type) {
    case "choice":
      return z.enum(spec.values! as [string, ...string[]]);
    case "flag":
      return z.boolean();
    case "id":
      return z.string().min(1).max(MAX_ID_CHARS);
    default:
      return z.string().min(1);
  }
}

/** Each filter's zod schema, optional, by name. */
export const filterShape = Object.fromEntries(
  FILTER_NAMES.map((name) => [name, filterSchema(FILTERS[name]).optional()]),
) as unknown as {
  [K in FilterName]-?: z.ZodOptional<z.ZodType<Exclude<FilterValues[K], undefined>>>;
};

/** A search request as a user writes it. */
export const searchInput = z.object({
  q: z.string().trim().min(1, "the query is empty").max(
    MAX_QUERY_CHARS,
    `the query is over ${MAX_QUERY_CHARS} characters`,
  ),
  ...filterShape,
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  sort: z.enum(SEARCH_SORTS).optional(),
  forgive: z.enum(FORGIVE_MODES).optional(),
}) satisfies z.ZodType<SearchInput>;

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
