// The usage page (`/usage`): tokens and cost per day over the last 30 days as a stacked bar chart
// by agent or by model, drawn as inline SVG on the server (no script needed to read it, colours
// from the page's theme), with the same numbers in a table below it; the cost per project; the
// five-hour block still running. A day's bar and row link to that day's sessions.

import { Hono } from "hono";
import { html } from "hono/html";
import { formatCount } from "../../lib/format.ts";
import { PriceBook, PRICES_AS_OF } from "../../lib/usage/prices.ts";
import { type UsageLine, type UsageReport, usageReport } from "../../lib/usage/report.ts";
import { type AppEnv, type Route, withStore } from "../_deps.ts";
import { type Html, layout } from "./layout.ts";

/** How many days the chart covers. */
const DAYS = 30;
/** Series drawn apart in the chart; the rest are summed as "other". */
const SERIES = 6;
const DAY_MS = 86_400_000;

/** The route. */
export const usagePageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/usage", (c) => {
    const by = c.req.query("by") === "model" ? "model" : "agent";
    const asked = c.req.query("day") ?? "";
    const day = /^\d{4}-\d{2}-\d{2}$/.test(asked) ? asked : null;
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const now = svc.now();
    const prices = new PriceBook(svc.ctx.config.prices);
    const { daily, projects, block, sessions } = withStore(svc, "usage", (store) => ({
      daily: usageReport(store, {
        period: "daily",
        timeZone,
        since: now - DAYS * DAY_MS,
        breakdown: true,
        by,
      }, prices),
      projects: usageReport(store, { period: "project", timeZone }, prices),
      block: usageReport(store, { period: "blocks", timeZone, since: now - DAY_MS, now }, prices),
      sessions: day === null
        ? null
        : usageReport(store, { period: "session", timeZone, day }, prices),
    }));
    const body = html`
      <h1>Usage</h1>
      <p class="muted">Tokens and cost of every model call captured, by local day in ${timeZone};
        list prices as of ${PRICES_AS_OF} where an agent recorded no cost.
        By <a href="/usage?by=agent" ${by === "agent" ? html`aria-current="true"` : ""}>agent</a>
        or <a href="/usage?by=model" ${by === "model"
          ? html`aria-current="true"`
          : ""}>model</a>.</p>
      ${activeBlock(block)}
      ${daily.lines.length
        ? chart(daily, by, lastDays(now, timeZone))
        : html`<p role="status">No model calls in the last
        ${DAYS} days. Capture runs from the status page, or <code>logbook reindex</code>.</p>`}
      ${sessions && day ? daySessions(day, sessions) : ""}
      <h2>By project</h2>
      ${table(projects, "Project")}
      ${unpriced(daily)}
    `;
    return c.html(layout("Usage", "usage", body));
  });

/** The local dates (`2026-11-30`) of the `DAYS` days up to `now`'s, oldest first. */
function lastDays(now: number, timeZone: string): string[] {
  const format = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  });
  const days = new Set<string>();
  // Hours apart, not days: a day of 23 or 25 hours is still met.
  for (let at = now - (DAYS - 1) * DAY_MS; at <= now; at += 3_600_000) {
    days.add(format.format(at));
  }
  return [...days];
}

/** `$12.34`, or `—` with no priced call. */
function money(cost: number | null): string {
  return cost === null ? "—" : `$${cost.toFixed(2)}`;
}

/** The series of the chart: the biggest `SERIES` parts, the rest as "other". */
function seriesOf(report: UsageReport): string[] {
  const sums = new Map<string, number>();
  for (const line of report.lines) {
    for (const part of line.breakdown ?? []) {
      sums.set(part.model, (sums.get(part.model) ?? 0) + (part.cost ?? 0) + part.total / 1e9);
    }
  }
  const ranked = [...sums.entries()].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  return ranked.length > SERIES ? [...ranked.slice(0, SERIES - 1), "other"] : ranked;
}

/** A line's value per series: its cost (tokens where none is priced). */
function valuesOf(line: UsageLine, series: string[], costs: boolean): Map<string, number> {
  const values = new Map<string, number>(series.map((name) => [name, 0]));
  for (const part of line.breakdown ?? []) {
    const name = series.includes(part.model) ? part.model : "other";
    values.set(name, (values.get(name) ?? 0) + (costs ? part.cost ?? 0 : part.total));
  }
  return values;
}

/** The stacked bars, then the table with their numbers. */
function chart(report: UsageReport, by: "agent" | "model", days: readonly string[]): Html {
  const series = seriesOf(report);
  const costs = report.totals.cost !== null;
  const unit = costs ? "cost (USD)" : "tokens";
  const rows = report.lines.map((line) => ({ line, values: valuesOf(line, series, costs) }));
  // One slot per day of the period, so a day without calls is a gap.
  const slots = days.map((key) => rows.find((r) => r.line.key === key) ?? null);
  const max = Math.max(...rows.map((r) => [...r.values.values()].reduce((a, b) => a + b, 0)), 1e-9);
  const width = 720, height = 200, left = 0, bottom = 2;
  const step = (width - left) / slots.length;
  const bar = Math.max(2, step * 0.7);
  const bars = slots.map((slot, i) => {
    if (!slot) return "";
    const { line, values } = slot;
    let y = height - bottom;
    const x = left + i * step;
    const parts = series.map((name, s) => {
      const value = values.get(name) ?? 0;
      const h = (value / max) * (height - bottom - 8);
      y -= h;
      return h > 0
        ? html`
          <rect class="series-${s}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(
            1,
          )}"
            height="${h.toFixed(1)}"></rect>
        `
        : "";
    });
    return html`<a href="/usage?day=${line.key}"><title>${line.key}: ${
      costs ? money(line.cost) : formatCount(line.total)
    }</title>${parts}</a>`;
  });
  const first = days[0]!, last = days.at(-1)!;
  return html`
    <figure class="usage-chart">
      <svg role="group" aria-labelledby="chart-title" viewBox="0 0 ${width} ${height}"
        preserveAspectRatio="none">
        <title id="chart-title">Daily ${unit} by ${by}, ${first} to ${last}; the table below
          has the numbers</title>
        <line class="axis" x1="${left}" y1="${height - bottom}" x2="${width}" y2="${height -
          bottom}"></line>
        ${bars}
      </svg>
      <div class="axis-labels" aria-hidden="true"><span>${first}</span><span>${last}</span></div>
      <figcaption>${series.map((name, s) =>
        html`
          <span class="key"><span class="swatch series-${s}"></span>${name}</span>
        `
      )}</figcaption>
    </figure>
    <div class="table-wrap">
      <table>
        <caption>Daily ${unit} by ${by}</caption>
        <thead>
          <tr><th scope="col">Day</th>${series.map((name) =>
            html`<th scope="col">${name}</th>`
          )}<th scope="col">Tokens</th><th scope="col">Cost</th></tr>
        </thead>
        <tbody>${rows.map(({ line, values }) =>
          html`<tr><th scope="row"><a href="/usage?day=${line.key}">${line.key}</a></th>${
            series.map((name) =>
              html`<td>${
                costs
                  ? `$${(values.get(name) ?? 0).toFixed(2)}`
                  : formatCount(values.get(name) ?? 0)
              }</td>`
            )
          }<td>${formatCount(line.total)}</td><td>${money(line.cost)}</td></tr>`
        )}</tbody>
        <tfoot>
          <tr><th scope="row">Total</th>${series.map(() => html`<td></td>`)}<td>${formatCount(
            report.totals.total,
          )}</td><td>${money(report.totals.cost)}</td></tr>
        </tfoot>
      </table>
    </div>
  `;
}

/** Input, output, cache and cost per line (a project, a session). */
function table(report: UsageReport, first: string): Html {
  if (!report.lines.length) return html`<p class="muted">None yet.</p>`;
  return html`
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${first}</th>
            <th scope="col">Input</th>
            <th scope="col">Output</th>
            <th scope="col">Cache write</th>
            <th scope="col">Cache read</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>${report.lines.map((line) =>
          html`
            <tr>
              <th scope="row">${line.label
                ? html`${line.label} <span class="muted">${line.key}</span>`
                : line.key}</th>
              <td>${formatCount(line.input)}</td>
              <td>${formatCount(line.output)}</td>
              <td>${formatCount(line.cacheWrite)}</td>
              <td>${formatCount(line.cacheRead)}</td>
              <td>${money(line.cost)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    </div>
  `;
}

/** The sessions of one day, most expensive first. */
function daySessions(day: string, report: UsageReport): Html {
  return html`
    <h2 id="day">Sessions on ${day}</h2>
    ${table(report, "Session")}
  `;
}

/** The five-hour block running now, if one is. */
function activeBlock(report: UsageReport): Html {
  const active = report.active;
  if (!active) return html`<p class="muted">No five-hour block is running.</p>`;
  const hours = Math.floor(active.minutesLeft / 60);
  return html`<p class="notice" role="status">The five-hour block from ${active.key} is running:
    ${hours} h ${active.minutesLeft % 60} min left, ${
    formatCount(Math.round(active.tokensPerMinute))
  } tokens a minute${
    active.costPerHour === null
      ? ""
      : html`, ${money(active.costPerHour)} an hour, about ${
        money(active.projectedCost)
      } by its end`
  }.</p>`;
}

/** The models no price was found for. */
function unpriced(report: UsageReport): Html {
  if (!report.unpriced.length) return html``;
  return html`<p class="muted">Not priced (add them to config <code>prices</code>): ${
    report.unpriced.map((u) => `${u.model} (${formatCount(u.calls)})`).join(", ")
  }.</p>`;
}
