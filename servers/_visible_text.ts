// Nothing on a dashboard page is there without being seen: a browser, like a terminal, draws no
// zero-width character, lets bidi controls reorder a line ("Trojan Source") and shows nothing of
// text written in Unicode tag characters, and a page saved and read with cat or less reaches a
// terminal. Every HTML answer is shown as the terminal filter shows text (`lib/safe_text.ts`):
// controls and invisible characters as visible escapes, and a run of tag characters spelt out as
// `⟨tag text: …⟩`. A flag keeps its tags and an emoji its joiners.

import type { MiddlewareHandler } from "hono";
import { TAG_RUN, tagText } from "../lib/invisible.ts";
import { safeText } from "../lib/safe_text.ts";

const RUN = new RegExp(TAG_RUN, "gu");

/**
 * A middleware that makes what HTML answers hold visible. Tag text is spelt out first, as numeric
 * character references but for letters, digits and spaces, so whatever it says stays text
 * wherever in the page the run stood (an element, an attribute, a title); the escapes the filter
 * writes for the rest hold no character HTML gives a meaning to.
 */
export function visibleText(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get("content-type")?.startsWith("text/html") || !c.res.body) return;
    const page = await c.res.text();
    RUN.lastIndex = 0;
    const spelt = RUN.test(page)
      ? page.replace(RUN, (run, at: number) => {
        const text = tagText(page, at, run);
        return text === null ? run : `⟨tag text: ${text.replace(/[^A-Za-z0-9 ]/g, reference)}⟩`;
      })
      : page;
    const headers = new Headers(c.res.headers);
    headers.delete("content-length");
    c.res = new Response(safeText(spelt, { multiline: true }), {
      status: c.res.status,
      statusText: c.res.statusText,
      headers,
    });
  };
}

function reference(c: string): string {
  return `&#${c.charCodeAt(0)};`;
}
