// The MCP server of `logbook mcp`: the three history tools registered with the official SDK, each
// with a JSON schema and a description written for a model. Any failure inside a tool becomes a
// tool error with a plain message; the server keeps serving.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MAX_QUERY_CHARS } from "../../lib/filters.ts";
import {
  FILTER_NAMES,
  type FilterName,
  FILTERS,
  type FilterSpec,
} from "../../lib/filters_table.ts";
import { safeText } from "../../lib/safe_text.ts";
import { MAX_ID_CHARS } from "../../lib/store/conversations.ts";
import { VERSION } from "../../lib/version.ts";
import { AGENT_SPECS } from "../../lib/agents.ts";
import {
  type HistoryTools,
  type ListArgs,
  type ReadArgs,
  type SearchArgs,
  type ToolAnswer,
  ToolError,
} from "./tools.ts";

const allProjects = z.boolean().optional().describe("Look in every project instead.");
const limit = (max: number, fallback: number) =>
  z.number({ error: '"limit" must be a whole number' }).int().min(1, '"limit" must be at least 1')
    .max(max, `"limit" can be at most ${max}`).optional().describe(
      `How many to return (default ${fallback}, at most ${max}).`,
    );

/** A conversation id, or a prefix of one, in `field`: as long as the CLI and the dashboard take. */
const id = (field: string) =>
  z.string({ error: `"${field}" must be an id` }).min(1, `"${field}" is empty`).max(
    MAX_ID_CHARS,
    `"${field}" is too long: an id has at most ${MAX_ID_CHARS} characters`,
  );

/** A filter's schema as a model is told it, from its row in the filters' table. */
function filterSchema(name: FilterName) {
  const spec: FilterSpec = FILTERS[name];
  switch (spec.type) {
    case "choice":
      return z.enum(spec.values! as [string, ...string[]], {
        error: `"${name}" must be one of ${spec.values!.join(", ")}`,
      }).optional().describe(spec.mcp);
    case "flag":
      return z.boolean().optional().describe(spec.mcp);
    case "id":
      return id(name).optional().describe(spec.mcp);
    default:
      return z.string().min(1).optional().describe(spec.mcp);
  }
}

const { project, ...filters } = Object.fromEntries(
  FILTER_NAMES.map((name) => [name, filterSchema(name)]),
) as Record<FilterName, ReturnType<typeof filterSchema>>;

const SEARCH = {
  query: z.string({ error: '"query" must be text' }).max(
    MAX_QUERY_CHARS,
    `"query" is over ${MAX_QUERY_CHARS} characters: keep the most distinctive words`,
  ).describe(
    "Words to find. Words are matched whole; end a word with * for a prefix (cach*); " +
      'quote a phrase ("cache eviction"); OR, NOT and NEAR work as in SQLite FTS5.',
  ),
  project,
  all_projects: allProjects,
  ...filters,
  limit: limit(50, 10),
  team: z.boolean().optional().describe(
    "Search the team's shared history (conversations pushed from every machine) instead; " +
      "hits say which machine they came from. Needs a team database in logbook's config.",
  ),
  machine: z.string().min(1).optional().describe("With team: only what this machine pushed."),
};

const READ = {
  conversation: id("conversation").describe(
    "The conversation's id as search_history or list_conversations gives it " +
      "(for example claude:3f2a9c1e-…), or a unique prefix of it.",
  ),
  around: z.number({ error: '"around" must be a record number' }).int().min(1).optional()
    .describe(
      "Open the page at this record (the record number of a search hit), with the few " +
        "records before it, so the question before an answer is there.",
    ),
  cursor: z.string().optional().describe(
    'Continue where the previous page ended: pass that page\'s "next".',
  ),
};

const LIST = {
  project,
  all_projects: allProjects,
  agent: filterSchema("agent").describe("Only conversations of this agent."),
  subagents: z.boolean().optional().describe("Include subagent conversations (default false)."),
  limit: limit(100, 20),
};

// The SDK validated the arguments against these schemas before a handler runs.

/** An MCP server answering with `tools` (over a store the caller opens read-only). */
export function createMcpServer(tools: HistoryTools): McpServer {
  const server = new McpServer({ name: "logbook", version: VERSION });
  server.registerTool(
    "search_history",
    {
      title: "Search past agent conversations",
      description: "Full-text search over every conversation this machine's coding agents " +
        `(${
          AGENT_SPECS.map((spec) => spec.display).join(", ")
        }) have had, ranked by relevance, secrets redacted. ` +
        "Use it to recall what was decided, how an error was fixed before, or where a topic came " +
        "up. By default it searches the current project only; set all_projects to look " +
        "everywhere. Each hit gives the conversation id, title, agent, date, role, kind, record " +
        "number and a snippet; open one with read_conversation (conversation + around). Words " +
        "that find nothing are searched again as the first letters of longer words, then in " +
        "their other forms, then as the closest words the history holds; the answer says what " +
        "it searched instead, and each hit's matched says how its words matched.",
      inputSchema: SEARCH,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args: unknown) =>
      (args as SearchArgs).team
        ? answerAsync(() => tools.searchTeamHistory(args as SearchArgs))
        : answerAsync(() => tools.searchHistory(args as SearchArgs)),
  );
  server.registerTool("read_conversation", {
    title: "Read a past conversation",
    description: "Reads one captured conversation in order as plain text: user and assistant " +
      "messages in full, tool calls and results summarised, secrets redacted. A page holds " +
      "about 24,000 characters; when more follows, the answer ends with a cursor to pass back. " +
      "Give around (a record number from search_history) to open at a hit with the turns " +
      "just before it.",
    inputSchema: READ,
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, (args: unknown) => answer(() => tools.readConversation(args as ReadArgs)));
  server.registerTool(
    "list_conversations",
    {
      title: "List recent conversations",
      description: "Lists the most recent captured conversations of a project (default: the " +
        "current one), newest first, with id, title, agent, first and last dates and message " +
        "count. Use it to see what was worked on lately before searching or reading.",
      inputSchema: LIST,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args: unknown) => answer(() => tools.listConversations(args as ListArgs)),
  );
  return server;
}

/** `answer` for a tool that waits (the team database). */
async function answerAsync(run: () => Promise<ToolAnswer>) {
  try {
    const done = await run();
    return answer(() => done);
  } catch (err) {
    return answer(() => {
      throw err;
    });
  }
}

/**
 * A tool's answer in MCP's shape; a ToolError (or anything else) becomes a tool error. The text,
 * which an agent's terminal shows and its model reads, holds nothing a reader cannot see, as on
 * logbook's own terminal (`lib/safe_text.ts`): text a transcript hid in tag characters is spelt
 * out, not passed on unseen. The structured data keeps every character, as `--json` does.
 */
function answer(run: () => ToolAnswer) {
  try {
    const { text, data } = run();
    return {
      content: [{ type: "text" as const, text: safeText(text, { multiline: true }) }],
      ...(data ? { structuredContent: data } : {}),
    };
  } catch (err) {
    const message = err instanceof ToolError
      ? err.message
      : `logbook could not answer: ${(err as Error).message ?? String(err)}`;
    const text = safeText(message, { multiline: true });
    return { content: [{ type: "text" as const, text }], isError: true };
  }
}
