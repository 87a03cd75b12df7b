// `GET /api/conversations/:id?after&limit`: one page of a conversation, the object of
// `show --json`, with everything in it through the gate.

import { Hono } from "hono";
import { z } from "zod";
import { findConversation, pageConversation } from "../../lib/store/conversations.ts";
import type { HistoryStore } from "../../lib/store/db.ts";
import { type ConversationRow, TextDeriver } from "../../lib/store/records.ts";
import { type AppEnv, type Route, type Services, withStore } from "../_deps.ts";
import { parseId, parseQuery, queryInt } from "../_input.ts";
import { redactPage, type ShownPage } from "../_redact.ts";

/** The paging query of a conversation. */
export const pageQuery = z.object({
  after: queryInt(0, 1e12).optional(),
  limit: queryInt(1, 1000).optional(),
});
/** A validated paging query string. */
export type PageQuery = z.infer<typeof pageQuery>;

/** A page of conversation `id` (full id, native id or unique prefix), through the gate. */
export function conversationPage(svc: Services, id: string, query: PageQuery): ShownPage {
  return withStore(svc, "conversation", (store) => {
    const conversation = findConversation(store, id);
    return shownPage(
      svc,
      new TextDeriver(store, svc.adapters, svc.redact),
      store,
      conversation,
      query,
    );
  });
}

/** A page of `conversation` from an open store, through the gate. */
export function shownPage(
  svc: Services,
  deriver: TextDeriver,
  store: HistoryStore,
  conversation: ConversationRow,
  query: PageQuery,
): ShownPage {
  const page = pageConversation(store, deriver, conversation, {
    ...(query.after === undefined ? {} : { after: query.after }),
    ...(query.limit === undefined ? {} : { limit: query.limit }),
  });
  // A chunk's raw bytes are redacted with its neighbours' in view (see `redactBytes`).
  return redactPage(page, svc.redact, (record) => deriver.neighboursOf(record.id));
}

/** The route. */
export const conversationsApi: Route = (svc) =>
  new Hono<AppEnv>().get("/api/conversations/:id", (c) => {
    const id = parseId(c);
    const query = parseQuery(c, pageQuery);
    return c.json(conversationPage(svc, id, query));
  });
