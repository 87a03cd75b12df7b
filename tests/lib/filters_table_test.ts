// The search filters are declared once, in `FILTERS`: every surface that takes a filter (the
// command's options and help, the dashboard's schema and form, the MCP tool's schema, the search
// box's inline filters, the SQL of a local and of a team search) has exactly the table's filters,
// as the table words them.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { main as search, spec } from "../../commands/search.ts";
import { captureIo } from "../_helpers.ts";
import {
  fieldOf,
  FILTER_NAMES,
  FILTERS,
  type FilterSpec,
  filterTerms,
  INLINE_FILTERS,
  type SearchFilters,
} from "../../lib/filters_table.ts";
import { filterInputOf, filterOptionClash, splitInline } from "../../lib/filters.ts";
import { searchInput } from "../../lib/filters_schema.ts";
import { searchQuery } from "../../servers/api/search.ts";
import { createMcpServer } from "../../servers/mcp/server.ts";
import type { HistoryTools } from "../../servers/mcp/tools.ts";
import { appFor, capturedWorld, request } from "../servers/_dashboard.ts";

/** Every filter set, resolved, as a search that uses them all would have them. */
const ALL: Required<SearchFilters> = {
  project: "/home/dev/src/app",
  agent: "codex",
  conversationId: 7,
  kind: "tool_call",
  role: "assistant",
  since: 1_000,
  until: 2_000,
  subagents: false,
};

Deno.test("search's options and --help rows are the filters' table's", async () => {
  const io = captureIo();
  assert.equal(await search(["--help"], io), 0);
  const help = io.stdout();
  for (const name of FILTER_NAMES) {
    const filter: FilterSpec = FILTERS[name];
    assert.ok(name in spec.options, `--${name}`);
    for (const [flag, text] of filter.help) {
      assert.ok(help.includes(flag), flag);
      assert.ok(help.replace(/\s+/g, " ").includes(text), text);
    }
    if (filter.type === "flag") assert.ok(`no-${name}` in spec.options);
    if (filter.without) assert.ok(filter.without in spec.options);
  }
  // The command line's values become the filters of a search input.
  assert.deepEqual(
    filterInputOf({ agent: "codex", "no-subagents": true, limit: "3", since: "7d" }),
    { agent: "codex", since: "7d", subagents: false },
  );
  assert.equal(
    filterOptionClash({ project: ".", "all-projects": true }),
    'Options "--project" and "--all-projects" cannot be used together',
  );
  assert.equal(
    filterOptionClash({ subagents: true, "no-subagents": true }),
    'Options "--subagents" and "--no-subagents" cannot be used together',
  );
  assert.equal(filterOptionClash({ agent: "codex", subagents: true }), null);
});

Deno.test("the dashboard's schema and the search box take the table's filters", () => {
  for (const name of FILTER_NAMES) {
    assert.ok(name in searchInput.shape, name);
    assert.ok(name in searchQuery.shape, name);
  }
  const flags = FILTER_NAMES.filter((name) => FILTERS[name].type === "flag");
  assert.deepEqual(flags, ["subagents"]);
  // A flag in a query string is a query-string flag.
  assert.deepEqual(searchQuery.parse({ q: "a", subagents: "0" }), { q: "a", subagents: false });
  assert.deepEqual(INLINE_FILTERS, FILTER_NAMES.filter((name) => FILTERS[name].inline));
  const box = INLINE_FILTERS.map((name) => `${name}:x`).join(" ");
  assert.deepEqual(Object.keys(splitInline(`${box} words`).inline), INLINE_FILTERS);
});

Deno.test("the MCP tool search_history takes the table's filters, described as it says", async () => {
  const server = createMcpServer({} as HistoryTools);
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(theirs);
  try {
    const { tools } = await client.listTools() as {
      tools: {
        name: string;
        inputSchema: { properties?: Record<string, { description?: string }> };
      }[];
    };
    const search = tools.find((tool) => tool.name === "search_history")!;
    const properties = search.inputSchema.properties ?? {};
    for (const name of FILTER_NAMES) {
      assert.equal(properties[name]?.description, FILTERS[name].mcp, name);
    }
  } finally {
    await client.close();
  }
});

Deno.test("the dashboard's form has a field for each filter the table puts in it", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const page = await (await request(app, "/")).text();
    for (const name of FILTER_NAMES) {
      const filter: FilterSpec = FILTERS[name];
      const field = new RegExp(`<label>${filter.form?.label}<(select|input) name="${name}"`);
      if (filter.form) assert.match(page, field, name);
      else assert.ok(!page.includes(`name="${name}"`), name);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("every filter set is a term of a local search and, but a conversation, of a team one", () => {
  const store = filterTerms(ALL, "store");
  assert.deepEqual(store.map((term) => term.name), FILTER_NAMES);
  assert.deepEqual(store.map((term) => term.field), FILTER_NAMES.map(fieldOf));
  const team = filterTerms(ALL, "team");
  assert.deepEqual(team.map((term) => term.name), FILTER_NAMES.filter((n) => n !== "session"));
  // A term takes the filter's value where it has a `?`; a message kind takes typed prompts.
  const byName = Object.fromEntries(store.map((term) => [term.name, term]));
  assert.deepEqual(byName.agent, {
    name: "agent",
    field: "agent",
    sql: "c.agent = ?",
    params: ["codex"],
  });
  assert.deepEqual(byName.subagents?.params, []);
  assert.deepEqual(filterTerms({ kind: "message" }, "store")[0]?.params, []);
  assert.deepEqual(filterTerms({ subagents: true }, "store"), []);
});
