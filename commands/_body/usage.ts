// `usage`: what your agents used and cost, per day, week, month, session or project, answered
// from the store's `usage` table (filled by capture), so it covers history the agents deleted.
// This is the command; `commands/usage.ts` runs it, from its bundle while that is fresh
// (commands/_launch.ts).

import { loadContext, openStore } from "../../lib/context.ts";
import type { Env } from "../../lib/env.ts";
import { AGENTS } from "../../lib/agents.ts";
import { formatCount, oneOf } from "../../lib/format.ts";
import { projectOfUserPath } from "../../lib/paths.ts";
import { safeJson } from "../../lib/safe_json.ts";
import { PriceBook, PRICES_AS_OF } from "../../lib/usage/prices.ts";
import {
  type ActiveBlock,
  isTimeZone,
  localTimeZone,
  type Period,
  PERIODS,
  type UsageLine,
  type UsageReport,
  usageReport,
  type UsageTotals,
} from "../../lib/usage/report.ts";
import { parseWhen } from "../../lib/when.ts";
import { defineCommand, EXIT, run, shared, UsageError } from "../_command.ts";
import { type Io, stdio, styler } from "../_terminal/io.ts";
import { safeIo } from "../_terminal/safe_io.ts";
import { terminalColumns, wrapText } from "../_terminal/wrap.ts";

export const spec = defineCommand({
  name: "usage",
  summary: "tokens and cost per day, week, month, session, project or 5-hour block",
  arguments: "[daily|weekly|monthly|session|project|blocks]",
  argumentHelp: [
    ["PERIOD", "how calls are grouped (default daily); blocks: Claude's 5-hour windows"],
  ],
  options: {
    agent: { type: "string", value: "A", help: `only ${oneOf(AGENTS)}` },
    ...shared({ project: "only this directory's project (`.` for yours)" }),
    since: { type: "string", value: "WHEN", help: "from this date or age (2026-11-01, 7d)" },
    until: { type: "string", value: "WHEN", help: "before this date or age" },
    model: { type: "string", value: "M", help: "only calls of this model" },
    breakdown: { type: "boolean", help: "one line per model inside each period" },
    tz: {
      type: "string",
      value: "ZONE",
      help: "the time zone dates are in (default this machine's: Europe/Berlin, UTC…)",
    },
    ...shared({ json: "print the report as one JSON object" }),
  },
  examples: [
    "logbook usage",
    "logbook usage monthly --breakdown",
    "logbook usage blocks --agent claude --since 1d",
  ],
  maxPositionals: 1,
  permissions: { read: true, write: true, env: true },
  embed: ["commands/_body/usage.ts"],
});

/** Runs `usage` with `args`; returns the exit status. */
export async function main(
  args: string[],
  io: Io = stdio(),
  env: Env = Deno.env,
  now: () => number = Date.now,
): Promise<number> {
  return await run(spec, args, safeIo(io), ({ values, positionals }) => {
    const period = (positionals[0] ?? "daily") as Period;
    if (!PERIODS.includes(period)) {
      throw new UsageError(`Expected a period, ${oneOf(PERIODS)}, got "${positionals[0]}"`);
    }
    if (values.agent !== undefined && !(AGENTS as readonly string[]).includes(values.agent)) {
      throw new UsageError(
        `Option "--agent" expects ${oneOf(AGENTS)}, got "${values.agent}"`,
      );
    }
    const timeZone = values.tz ?? localTimeZone();
    if (!isTimeZone(timeZone)) {
      throw new UsageError(`Option "--tz" expects a time zone such as UTC, got "${timeZone}"`);
    }
    const when = (value: string, name: string): number => {
      try {
        return parseWhen(value, now());
      } catch (err) {
        throw new UsageError(`Option "--${name}": ${(err as Error).message}`);
      }
    };
    const ctx = loadContext({ env, onStall: io.err, onWarning: io.err });
    const store = openStore(ctx, { readOnly: true });
    let report: UsageReport;
    try {
      report = usageReport(store, {
        period,
        timeZone,
        ...(values.agent ? { agent: values.agent } : {}),
        ...(values.project ? { project: projectOfUserPath(values.project, env).root } : {}),
        ...(values.model ? { model: values.model } : {}),
        ...(values.since ? { since: when(values.since, "since") } : {}),
        ...(values.until ? { until: when(values.until, "until") } : {}),
        breakdown: values.breakdown === true,
        now: now(),
      }, new PriceBook(ctx.config.prices));
    } finally {
      store.close();
    }
    if (values.json) {
      io.out(safeJson({ ...report, pricesAsOf: PRICES_AS_OF }) + "\n");
      return EXIT.ok;
    }
    if (!report.lines.length) {
      io.err(
        (values.agent || values.project || values.model || values.since || values.until)
          ? "No model calls match these filters; try without them\n"
          : "No model calls are captured yet: run logbook reindex\n",
      );
      return EXIT.failure;
    }
    const width = io.outIsTerminal ? Math.max(40, terminalColumns(env)) : 80;
    io.out(renderReport(report, width, styler(io.color)));
    return EXIT.ok;
  });
}

type Styler = ReturnType<typeof styler>;

/** The report as a table in `width` columns; narrower than 80, only tokens in all and cost. */
export function renderReport(report: UsageReport, width: number, s: Styler): string {
  const wide = width >= 80;
  const first = report.period === "daily"
    ? "Date"
    : report.period === "weekly"
    ? "Week of"
    : report.period === "monthly"
    ? "Month"
    : report.period === "session"
    ? "Session"
    : report.period === "blocks"
    ? "Block from"
    : "Project";
  const heads = wide
    ? [first, "Input", "Output", "Cache write", "Cache read", "Total", "Cost"]
    : [first, "Total", "Cost"];
  const numbers = (t: UsageTotals) =>
    wide
      ? [
        formatCount(t.input),
        formatCount(t.output),
        formatCount(t.cacheWrite),
        formatCount(t.cacheRead),
        formatCount(t.total),
        money(t),
      ]
      : [formatCount(t.total), money(t)];
  const rows: string[][] = [];
  for (const line of report.lines) {
    rows.push([keyOf(line), ...numbers(line)]);
    for (const b of line.breakdown ?? []) rows.push([`  ${b.model}`, ...numbers(b)]);
  }
  const total = ["Total", ...numbers(report.totals)];
  const widths = heads.map((h, i) =>
    Math.max(h.length, ...[...rows, total].map((r) => r[i]!.length))
  );
  // The first column gives way when the table is too wide.
  const rest = widths.slice(1).reduce((n, w) => n + w + 2, 0);
  widths[0] = Math.max(8, Math.min(widths[0]!, width - rest));
  const cell = (text: string, i: number) =>
    i === 0
      ? (text.length > widths[0]! ? text.slice(0, widths[0]! - 1) + "…" : text.padEnd(widths[0]!))
      : text.padStart(widths[i]!);
  const lineOf = (cells: string[]) => cells.map(cell).join("  ").trimEnd();
  const out = [s.bold(lineOf(heads)), ...rows.map(lineOf), s.bold(lineOf(total))];
  const notes: string[] = [];
  if (report.unpriced.length) {
    const names = report.unpriced.slice(0, 5).map((u) => `${u.model} (${formatCount(u.calls)})`);
    notes.push(
      `Not priced (cost counts the rest; add them to config "prices"): ${names.join(", ")}${
        report.unpriced.length > 5 ? ", …" : ""
      }`,
    );
  }
  if (report.active) notes.unshift(activeLine(report.active));
  notes.push(`Dates in ${report.timeZone}; list prices as of ${PRICES_AS_OF} unless recorded.`);
  const wrapped = notes.map((n) => wrapText(n, width).split("\n").map(s.dim).join("\n"));
  return out.join("\n") + "\n\n" + wrapped.join("\n") + "\n";
}

/** The running block: time left and pace. */
function activeLine(active: ActiveBlock): string {
  const left = `${Math.floor(active.minutesLeft / 60)} h ${active.minutesLeft % 60} min left`;
  const pace = `${formatCount(Math.round(active.tokensPerMinute))} tokens a minute`;
  const cost = active.costPerHour === null
    ? ""
    : `, $${active.costPerHour.toFixed(2)} an hour, about $${
      active.projectedCost!.toFixed(2)
    } by its end`;
  return `Block ${active.key} is running: ${left}; ${pace}${cost}.`;
}

function keyOf(line: UsageLine): string {
  return line.label ? `${line.key} ${line.label}` : line.key;
}

/** `$12.34`, or `—` when no call of these was priced. */
function money(t: UsageTotals): string {
  if (t.cost === null) return "—";
  return `$${t.cost.toFixed(2)}`;
}
