// `GET /conversations/:id/export?format=md|html|json|text`: the whole conversation as a file to
// download, built from the records the conversation page shows (through the gate). HTML is the
// page's chat with its style and no script; Markdown, JSON and text are `show --format`'s own
// documents (lib/export.ts).

import { Buffer } from "node:buffer";
import { Hono } from "hono";
import { html, raw } from "hono/html";
import { z } from "zod";
import { EXPORT_FORMATS, exportConversation, type ExportFormat } from "../../lib/export.ts";
import type { ConversationJson } from "../../lib/store/records.ts";
import { conversationPage } from "../api/conversations.ts";
import type { AppEnv, Route, Services } from "../_deps.ts";
import { ApiError } from "../_errors.ts";
import { parseId, parseQuery } from "../_input.ts";
import type { ShownRecord } from "../_redact.ts";
import { chatRecords, pairTools, shapeOf, type ToolLookup, toolLookup } from "./_chat.ts";
import { markdownRenderer } from "./_markdown.ts";
import { STYLE } from "./assets.ts";

/** The formats offered: `show --format`'s. */
export { EXPORT_FORMATS, type ExportFormat };

/** The most raw bytes an export reads; a larger conversation is refused with a clear error. */
const MAX_EXPORT_BYTES = 64 * 1024 * 1024;

const exportQuery = z.object({ format: z.enum(EXPORT_FORMATS).default("md") });

/** The address of an export. */
export function exportHref(id: string, format: ExportFormat): string {
  return `/conversations/${encodeURIComponent(id)}/export?format=${format}`;
}

/** The route. */
export const exportPageRoute: Route = (svc) =>
  new Hono<AppEnv>().get("/conversations/:id/export", async (c) => {
    const id = parseId(c);
    const { format } = parseQuery(c, exportQuery);
    const { conversation, records } = wholeConversation(svc, id);
    const name = fileName(conversation.id, format);
    c.header("Content-Disposition", `attachment; filename="${name}"`);
    // The chat itself as a page; the other formats are `show --format`'s own documents.
    if (format === "html") {
      const lookup = toolLookup(svc.adapters, conversation.agent, svc.redact);
      return c.html(await toHtml(conversation, records, lookup));
    }
    const document = exportConversation(format, conversation, records);
    const type = format === "json"
      ? "application/json"
      : format === "md"
      ? "text/markdown; charset=utf-8"
      : "text/plain; charset=utf-8";
    return c.body(document, 200, { "Content-Type": type });
  });

/** Every record of conversation `id`, page by page, through the gate. */
export function wholeConversation(
  svc: Services,
  id: string,
): { conversation: ConversationJson; records: ShownRecord[] } {
  const records: ShownRecord[] = [];
  let after: number | undefined;
  let bytes = 0;
  let conversation: ConversationJson | undefined;
  while (true) {
    const page = conversationPage(svc, id, { limit: 1000, ...(after ? { after } : {}) });
    conversation ??= page.conversation;
    for (const rec of page.records) bytes += Buffer.byteLength(rec.raw, "base64");
    if (bytes > MAX_EXPORT_BYTES) {
      throw new ApiError(
        413,
        "too_large",
        `The conversation is over ${
          MAX_EXPORT_BYTES / 1024 / 1024
        } MiB: export it with "logbook show"`,
      );
    }
    records.push(...page.records);
    if (page.next === null) break;
    after = page.next;
  }
  return { conversation: conversation!, records };
}

function fileName(id: string, format: ExportFormat): string {
  const ext = format === "text" ? "txt" : format;
  return `${id.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 120)}.${ext}`;
}

function headLines(conv: ConversationJson): string[] {
  return [
    `- Conversation: ${conv.id}`,
    `- Agent: ${conv.agentVersion ? `${conv.agent} ${conv.agentVersion}` : conv.agent}`,
    ...(conv.project ? [`- Project: ${conv.project}`] : []),
    ...(conv.branch ? [`- Branch: ${conv.branch}`] : []),
    `- Time: ${conv.firstTimestamp ?? "-"} to ${conv.lastTimestamp ?? "-"}`,
    `- Messages: ${conv.messages}`,
  ];
}

async function toHtml(
  conv: ConversationJson,
  records: readonly ShownRecord[],
  lookup: ToolLookup,
): Promise<string> {
  const render = await markdownRenderer();
  // A file has no toggle to show meta records with: they are left out, as in Markdown and text.
  const shown = records.filter((rec) => shapeOf(rec) !== "quiet");
  const tools = pairTools(shown, lookup);
  const page = html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy"
          content="default-src 'none'; style-src 'unsafe-inline'">
        <title>${conv.title ?? conv.id}</title>
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <main id="main">
          <header class="conv-head file">
            <h1>${conv.title ?? conv.id}</h1>
            <ul class="facts">${headLines(conv).map((l) => html`<li>${l.slice(2)}</li>`)}</ul>
          </header>
          <section class="chat" aria-label="Messages">${chatRecords(shown, render, {
            raw: false,
            tools,
            agent: conv.agent,
          })}</section>
        </main>
      </body>
    </html>
  `;
  return (await page).toString();
}
