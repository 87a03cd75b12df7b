// `deno task conformance [--latest]`: runs the conformance suite against the pinned agents (or
// the newest published versions) and prints a table: agent, version, record types seen, new
// types (drift logbook reported), and what failed or why the agent was skipped. Exits with the
// suite's status; Deno's own summary line is printed as the suite ends.

import { parseArgs } from "node:util";
import { join } from "node:path";
import type { ReportLine } from "./_harness.ts";

const USAGE = `Usage: deno task conformance [--latest]

Runs tests/conformance/suite.ts: the real Claude Code, Codex and OpenCode, installed from npm
into a cache outside the repository, driven against a local model server; then checks what
logbook captured of them.

Options:
  --latest   run the newest published version of each agent instead of the pinned ones
  -h, --help print this help

Example:
  deno task conformance --latest
`;

async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { latest: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
    }));
  } catch (err) {
    console.error(`error: ${(err as Error).message}\nhint: see --help`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const dir = await Deno.makeTempDir({ prefix: "logbook-conformance-report-" });
  const report = join(dir, "report.jsonl");
  try {
    const suite = new URL("./suite.ts", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", suite],
      env: {
        LOGBOOK_CONFORMANCE_REPORT: report,
        ...(values.latest ? { LOGBOOK_CONFORMANCE_VERSIONS: "latest" } : {}),
      },
      stdin: "null",
    }).spawn();
    const status = await child.status;
    const lines = readReport(report);
    console.log("");
    console.log(table(lines));
    return status.code;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function readReport(path: string): ReportLine[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as ReportLine);
}

/** The canary's table, one agent a block: types seen wrap onto further lines. */
export function table(lines: ReportLine[]): string {
  const rows: string[][] = [["agent", "version", "record types seen", "new types", "failed"]];
  for (const l of lines) {
    rows.push([
      l.agent,
      l.version,
      l.skipped ? "-" : String(l.types.length),
      l.skipped ? "-" : l.newTypes.join("; ") || "none",
      l.skipped ? `skipped: ${l.skipped}` : l.failed.join("; ") || "nothing",
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const out = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  out.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  for (const l of lines) {
    if (l.types.length) out.push("", `${l.agent} ${l.version} record types: ${l.types.join(", ")}`);
  }
  return out.join("\n");
}

if (import.meta.main) Deno.exit(await main(Deno.args));
