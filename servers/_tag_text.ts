// Text written in Unicode tag characters is invisible in a browser too: on every HTML page the
// dashboard sends, a run of them is spelt out as `⟨tag text: …⟩`, as the terminal filter does,
// so an instruction hidden in a transcript is there to read. A subdivision flag keeps its tags.

import type { MiddlewareHandler } from "hono";
import { TAG_RUN, tagText } from "../lib/invisible.ts";

const RUN = new RegExp(TAG_RUN, "gu");

/**
 * A middleware that spells out the tag characters of HTML answers. The spelt text is written as
 * numeric character references but for letters, digits and spaces, so whatever it says stays
 * text wherever in the page the run stood (an element, an attribute, a title).
 */
export function tagTextShown(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get("content-type")?.startsWith("text/html") || !c.res.body) return;
    const page = await c.res.text();
    RUN.lastIndex = 0;
    const shown = RUN.test(page)
      ? page.replace(RUN, (run, at: number) => {
        const spelt = tagText(page, at, run);
        return spelt === null ? run : `⟨tag text: ${spelt.replace(/[^A-Za-z0-9 ]/g, reference)}⟩`;
      })
      : page;
    const headers = new Headers(c.res.headers);
    headers.delete("content-length");
    c.res = new Response(shown, { status: c.res.status, statusText: c.res.statusText, headers });
  };
}

function reference(c: string): string {
  return `&#${c.charCodeAt(0)};`;
}
