// The search filters, declared once: each one's name, what its value is, its help on every
// surface and its SQL. The command's options and `--help` rows, the dashboard's zod schema and
// form, the MCP tool's schema, the filters typed in a search box (`agent:codex`), the checks of
// `parseSearchInput`, how a value is resolved, the SQL of a local and of a team search, and how
// a search that found nothing names it are all made from `FILTERS`: a new filter is a row here,
// and its resolved value a field of `SearchFilters` below.
// Plain data on purpose: the search command loads it at start-up, and zod is loaded only where
// a schema is made of it (`filters_schema.ts`, `servers/mcp/server.ts`).

import { type Agent, AGENTS } from "./agents.ts";
import { oneOf } from "./format.ts";
import { type Kind, KINDS, type Role, ROLES } from "./sources/adapter.ts";

/**
 * What a filter's value is, which says how it is checked and resolved: a directory naming a
 * project (`projectOfNamed`), a conversation id or prefix (`findConversation`), a time (`7d`,
 * `parseWhen`), one of a fixed list, or on/off.
 */
export type FilterType = "project" | "id" | "when" | "choice" | "flag";

/** A term of a search's WHERE over its record `r` and conversation `c`; `?` takes the value. */
export type FilterTerm = string | null;

/** One search filter. */
export interface FilterSpec {
  type: FilterType;
  /** For a `choice`: the values it takes. */
  values?: readonly string[];
  /** The field of `SearchFilters` the resolved value goes in (the filter's name, by default). */
  field?: keyof SearchFilters;
  /** `search --help`'s rows of this filter, in order: `[flag text, description]`. */
  help: readonly (readonly [string, string])[];
  /** A boolean option of `search` that means "no such filter" (`--all-projects`). */
  without?: string;
  /** What the MCP tool `search_history` says of it, to a model. */
  mcp: string;
  /** The dashboard's form field: its label and, for text, a placeholder; none: not in the form. */
  form?: { label: string; placeholder?: string };
  /** Whether it can be typed in a search box as `name:value`. */
  inline: boolean;
  /** The term of a local search (SQLite) for the resolved value; null: no term for it. */
  store: (value: never) => FilterTerm;
  /** The term of a team search (PostgreSQL), when the team database has the filter. */
  team?: (value: never) => FilterTerm;
  /** The team search's parameter for the resolved value (default: the value). */
  teamValue?: "date" | "shown";
  /**
   * How a search that found nothing names it (`no_match.ts`): what it keeps, from its value as
   * shown (`in project "~/app"`), and the matches leaving it out finds, as a word before
   * "matches" (`12 older matches`) or words after (`12 matches in other projects`).
   */
  words: { scope: (shown: string) => string; before?: string; after?: string };
}

/** Narrowing a search, with the filters resolved. Every field is optional. */
export interface SearchFilters {
  /** Canonical project root (see `projectOf`). */
  project?: string;
  agent?: Agent;
  /** Internal conversation row id (resolve user input with `findConversation`). */
  conversationId?: number;
  kind?: Kind;
  role?: Role;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** Include subagent conversations (default true). */
  subagents?: boolean;
}

const same = (term: string) => () => term;

const UNITS: Record<string, string> = { m: "minute", h: "hour", d: "day", w: "week" };

/** `7d` as `in the last 7 days`; any other time as `since <it>`. */
function sinceWords(value: string): string {
  const relative = /^(\d+)([mhdw])$/.exec(value.trim());
  if (!relative) return `since ${value}`;
  const n = Number(relative[1]);
  const unit = UNITS[relative[2]!]!;
  return n === 1 ? `in the last ${unit}` : `in the last ${n} ${unit}s`;
}

/** The search filters, in the order every surface lists them. */
export const FILTERS = {
  project: {
    type: "project",
    help: [
      [
        "--project DIR",
        "only this directory's project (`.` for yours; `app` for the one whose path ends so)",
      ],
      ["--all-projects", "every project (the default)"],
    ],
    without: "all-projects",
    mcp: "A directory of the project to look in; defaults to the directory this server runs in " +
      "(the agent's working directory).",
    form: { label: "Project directory", placeholder: "/home/me/src/app" },
    inline: true,
    store: same("c.project_root = ?"),
    // Projects are pushed as shown (through the gate): matched as shown.
    team: same("c.project = ?"),
    teamValue: "shown",
    words: { scope: (root) => `in project "${root}"`, after: "in other projects" },
  },
  agent: {
    type: "choice",
    values: AGENTS,
    help: [["--agent A", `only ${oneOf(AGENTS)}`]],
    mcp: `Only conversations of this agent: ${oneOf(AGENTS)}.`,
    form: { label: "Agent" },
    inline: true,
    store: same("c.agent = ?"),
    team: same("c.agent = ?"),
    words: { scope: (agent) => `from ${agent}`, after: "from other agents" },
  },
  session: {
    type: "id",
    field: "conversationId",
    help: [["--session ID", "only this conversation (full id, native id or unique prefix)"]],
    mcp: "Only this conversation (an id as search_history returns it, or a unique prefix).",
    form: { label: "Conversation", placeholder: "claude:3f2a…" },
    inline: true,
    // The record's own column: a search in one conversation needs no other.
    store: same("r.conversation_id = ?"),
    words: { scope: (id) => `in conversation "${id}"`, after: "in other conversations" },
  },
  kind: {
    type: "choice",
    values: KINDS,
    help: [[
      "--kind K",
      "message (typed prompts too), prompt, tool_call, tool_result, reasoning, summary, event " +
      "or meta",
    ]],
    mcp: `Only records of this kind: ${KINDS.join(", ")}.`,
    form: { label: "Kind" },
    inline: true,
    // A typed prompt is a message too.
    store: (kind: Kind) => kind === "message" ? "r.kind IN ('message', 'prompt')" : "r.kind = ?",
    team: (kind: Kind) => kind === "message" ? "r.kind IN ('message', 'prompt')" : "r.kind = ?",
    words: { scope: (kind) => `in ${kind} records`, after: "of other kinds" },
  },
  role: {
    type: "choice",
    values: ROLES,
    help: [["--role R", "user, assistant, system or developer"]],
    mcp: `Only records of this role: ${ROLES.join(", ")}.`,
    form: { label: "Role" },
    inline: true,
    store: same("r.role = ?"),
    team: same("r.role = ?"),
    words: { scope: (role) => `with role ${role}`, after: "with other roles" },
  },
  since: {
    type: "when",
    help: [["--since WHEN", "at or after WHEN: ISO date/time, 30m, 12h, 7d, 2w, today, yesterday"]],
    mcp: "At or after this time: an ISO date or time, or 30m, 12h, 7d, 2w, today, yesterday.",
    form: { label: "Since", placeholder: "7d, 2026-03-10" },
    inline: true,
    store: same("r.ts >= ?"),
    team: same("r.ts >= ?"),
    teamValue: "date",
    words: { scope: sinceWords, before: "older" },
  },
  until: {
    type: "when",
    help: [["--until WHEN", "before WHEN (same forms)"]],
    mcp: "Before this time (same forms as since).",
    form: { label: "Until", placeholder: "today" },
    inline: true,
    store: same("r.ts < ?"),
    team: same("r.ts < ?"),
    teamValue: "date",
    words: { scope: (until) => `before ${until}`, before: "later" },
  },
  subagents: {
    type: "flag",
    help: [[
      "--no-subagents",
      "leave out subagent conversations (--subagents keeps them, the default)",
    ]],
    mcp: "Include subagent conversations (default true); false leaves them out.",
    inline: false,
    store: (keep: boolean) => keep ? null : "c.subagent = 0",
    team: (keep: boolean) => keep ? null : "NOT c.subagent",
    words: { scope: () => "outside subagent conversations", after: "in subagent conversations" },
  },
} as const satisfies Record<string, FilterSpec>;

/** A search filter's name, as users give it (`--agent`, `agent:`, `"agent"`). */
export type FilterName = keyof typeof FILTERS;

/** The filters' names, in table order. */
export const FILTER_NAMES = Object.keys(FILTERS) as FilterName[];

/** The filters of `FILTERS` of one type. */
type OfType<T extends FilterType> = {
  [K in FilterName]: (typeof FILTERS)[K]["type"] extends T ? K : never;
}[FilterName];

/** Each filter's value as a user gives it (before it is resolved). */
export type FilterValues =
  & { [K in OfType<"project" | "id" | "when">]?: string | undefined }
  & { [K in OfType<"choice">]?: (typeof FILTERS)[K]["values"][number] | undefined }
  & { [K in OfType<"flag">]?: boolean | undefined };

/** The filters that are on or off (`subagents`). */
export type FlagFilter = OfType<"flag">;

/** The filters that take a value (all but the flags). */
type Valued = Exclude<FilterName, FlagFilter>;

/**
 * One option of `search` for a filter, as a command's spec declares it (`OptionSpec` in
 * commands/_command.ts): its value's name and help row, and the option it is the alternative of.
 */
interface FilterOption {
  type: "string" | "boolean";
  value?: string;
  help?: string;
  or?: string;
}

/** The options of `search` for the filters, as `parseArgs` takes them. */
export type FilterOptions =
  & { [K in Valued]: FilterOption & { type: "string" } }
  & {
    [
      K in FilterName as (typeof FILTERS)[K] extends { without: infer W extends string } ? W : never
    ]: FilterOption & { type: "boolean" };
  }
  & { [K in OfType<"flag">]: FilterOption & { type: "boolean" } }
  & { [K in OfType<"flag"> as `no-${K}`]: FilterOption & { type: "boolean" } };

/**
 * The command-line options of the filters, in table order, each with its help row: `--agent A`
 * for a filter with a value (and its `without`, `--all-projects`, the alternative of it), and for
 * a flag `--subagents` (no row of its own) and `--no-subagents`.
 */
export const FILTER_OPTIONS: FilterOptions = Object.fromEntries(
  FILTER_NAMES.flatMap((name): [string, FilterOption][] => {
    const spec: FilterSpec = FILTERS[name];
    const [first, second] = spec.help;
    if (spec.type === "flag") {
      return [[name, { type: "boolean" }], [`no-${name}`, {
        type: "boolean",
        or: name,
        help: first![1],
      }]];
    }
    const option: FilterOption = {
      type: "string",
      value: first![0].split(" ")[1]!,
      help: first![1],
    };
    if (!spec.without) return [[name, option]];
    return [[name, option], [spec.without, { type: "boolean", or: name, help: second![1] }]];
  }),
) as FilterOptions;

/** The filters that can be typed in a search box as `name:value` (the dashboard's, the screen's). */
export const INLINE_FILTERS = FILTER_NAMES.filter((name) => FILTERS[name].inline) as Valued[];

/** The field of `SearchFilters` a filter resolves into. */
export function fieldOf(name: FilterName): keyof SearchFilters {
  const spec: FilterSpec = FILTERS[name];
  return spec.field ?? (name as keyof SearchFilters);
}

/**
 * The terms of `filters` for a local search (`dialect` "store") or a team search ("team"), in
 * table order, each with its parameter (`[]` for a term that takes none).
 */
export function filterTerms(
  filters: SearchFilters,
  dialect: "store" | "team",
): { name: FilterName; field: keyof SearchFilters; sql: string; params: unknown[] }[] {
  const terms = [];
  for (const name of FILTER_NAMES) {
    const spec: FilterSpec = FILTERS[name];
    const field = fieldOf(name);
    const value = filters[field];
    const make = dialect === "store" ? spec.store : spec.team;
    if (value === undefined || !make) continue;
    const sql = (make as (value: unknown) => FilterTerm)(value);
    if (sql === null) continue;
    terms.push({ name, field, sql, params: sql.includes("?") ? [value] : [] });
  }
  return terms;
}
