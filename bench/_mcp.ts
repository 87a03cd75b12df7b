// `mcp_search_ms`: a search over an open MCP session, as an agent makes it: a real `logbook mcp`
// subprocess, the SDK's own client over stdio, every term searched across all projects. The
// first round warms the server; the rest are timed from the request to the parsed answer.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { commandArgs, commandEnv } from "./_measure.ts";
import { quantile, taskFlags } from "./_util.ts";

export interface McpSearchReport {
  p50: number;
  p95: number;
  calls: number;
  errors: number;
  /** Timed calls answered with the hits a search had when its budget ran out. */
  stopped: number;
}

/** Searches each of `terms` `rounds` times (after one warm-up round) over one MCP session. */
export async function measureMcpSearch(
  vars: Record<string, string>,
  terms: string[],
  rounds: number,
): Promise<McpSearchReport> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: commandArgs(taskFlags("mcp"), "mcp.ts", []),
    env: commandEnv(vars),
    stderr: "ignore",
  });
  const client = new Client({ name: "logbook-bench", version: "1.0.0" });
  await client.connect(transport);
  const times: number[] = [];
  let errors = 0;
  let stopped = 0;
  try {
    for (let round = 0; round <= rounds; round++) {
      for (const term of terms) {
        const t = performance.now();
        const result = await client.callTool({
          name: "search_history",
          arguments: { query: term, all_projects: true, limit: 10 },
        });
        const ms = performance.now() - t;
        if (result.isError) errors++;
        if (round > 0) times.push(ms);
        const data = result.structuredContent as { stopped?: boolean } | undefined;
        if (round > 0 && data?.stopped) stopped++;
      }
    }
  } finally {
    await client.close();
  }
  return {
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    calls: times.length,
    errors,
    stopped,
  };
}
