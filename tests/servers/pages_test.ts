// The dashboard's pages through `app.request()`: search with marked snippets and links to the
// hit, the conversation with folds, raw views, paging, the resume command and the fork button,
// status, escaping, the gate, and an inline script and style that the content security policy
// really allows.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { appFor, capturedWorld, PLANTED, request, SECRET } from "./_dashboard.ts";

const FIXTURE_ID = "claude:f332cca8-0b9a-4244-835f-c44f31385301";

function hashOf(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

Deno.test("the search page marks matches, links each hit to its place, and escapes everything", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("without a query: the form, focused by / and labelled", async () => {
      const html = await (await request(app, "/")).text();
      assert.match(html, /<form class="search" method="get" action="\/" role="search"/);
      assert.match(html, /<label for="q"><span>Search text/);
      assert.match(html, /<input id="q" name="q" type="search"/);
      assert.match(html, /<a class="skip" href="#main">Skip to content<\/a>/);
      assert.match(html, /accesskey="s"/);
      for (const name of ["project", "agent", "kind", "role", "since", "until"]) {
        assert.match(html, new RegExp(`<label>[^<]+<(input|select) name="${name}"`), name);
      }
      assert.doesNotMatch(html, /class="hits"/);
    });

    await t.step("hits with <mark>, a link to the conversation at the hit", async () => {
      const html = await (await request(app, `/?q=${PLANTED.phrase}&agent=claude`)).text();
      assert.match(html, /<p role="status">Matches 1 to 2<\/p>/);
      assert.match(html, /<mark>walrus<\/mark>-<mark>sprocket<\/mark>/);
      const link = /href="(\/conversations\/[^"]+)"/.exec(html);
      assert.ok(link);
      assert.match(
        link[1]!,
        new RegExp(`^/conversations/${encodeURIComponent(PLANTED.id)}\\?after=\\d+#r\\d+$`),
      );
      assert.match(html, /<option value="claude" selected>claude<\/option>/);
      const only = /href="([^"]+)" class="muted">\(only this project\)/.exec(html);
      assert.ok(only);
      const narrowed = await (await request(app, only[1]!.replaceAll("&amp;", "&"))).text();
      assert.match(narrowed, /<p role="status">Matches 1 to 2<\/p>/);
      assert.match(narrowed, /name="project" value="\/home\/dev\/src\/secretive"/);
    });

    await t.step("the planted secret is redacted and the planted HTML escaped", async () => {
      const html = await (await request(app, `/?q=${PLANTED.phrase}`)).text();
      assert.ok(!html.includes(SECRET));
      assert.ok(html.includes("[REDACTED:openai-key]"));
      assert.ok(!html.includes("<script>alert"), "no live markup from a transcript");
      assert.ok(html.includes("&lt;script&gt;alert(&#39;<mark>walrus</mark>&#39;)"));
    });

    await t.step("a bad filter keeps the form and says which field", async () => {
      const response = await request(app, "/?q=export&since=the-other-day");
      assert.equal(response.status, 400);
      const html = await response.text();
      assert.match(html, /role="alert">Invalid value for &quot;since&quot;/);
      assert.match(html, /<input id="q"/);
    });

    await t.step("more results are one link away", async () => {
      const html = await (await request(app, "/?q=the&limit=20")).text();
      const first = [...html.matchAll(/<li class="hit">/g)].length;
      assert.equal(first, 20);
      const more = /href="([^"]+)" rel="next">More results/.exec(html);
      assert.ok(more);
      const next = await (await request(app, more[1]!.replaceAll("&amp;", "&"))).text();
      assert.match(next, /<p role="status">Matches 21 to/);
      assert.match(next, /rel="prev">← Previous/);
    });

    await t.step("the inline script and style are exactly what the policy allows", async () => {
      const response = await request(app, "/");
      const csp = response.headers.get("content-security-policy") ?? "";
      const html = await response.text();
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1];
      assert.ok(script && style);
      assert.ok(csp.includes(`script-src ${hashOf(script)}`), "the script's hash is allowed");
      assert.ok(csp.includes(`style-src ${hashOf(style)}`), "the style's hash is allowed");
      assert.equal([...html.matchAll(/<script/g)].length, 1, "no other script");
      assert.doesNotMatch(html, /\sstyle="|\son[a-z]+="|(src|href)="(https?:)?\/\//);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the conversation page folds tool calls, shows raw bytes escaped, pages, and offers resume", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("roles, folded tool calls, raw views, the resume command", async () => {
      const html = await (await request(app, `/conversations/${encodeURIComponent(FIXTURE_ID)}`))
        .text();
      assert.match(html, /<h1>tundra-mosaic: nightly export batching<\/h1>/);
      assert.match(html, /class="rec kind-message role-user"/);
      assert.match(html, /class="rec kind-message role-assistant"/);
      assert.match(html, /<details class="fold">\s*<summary>▸ /);
      assert.match(html, /<details class="fold">\s*<summary>◂ /);
      assert.match(html, /<details class="raw">\s*<summary>Raw bytes \(\d+ bytes at offset 0\)/);
      assert.match(
        html,
        /<code class="cmd" id="resume-cmd">cd \/home\/dev\/src\/alpha &amp;&amp; claude --resume f332cca8-0b9a-4244-835f-c44f31385301<\/code>/,
      );
      assert.match(
        html,
        /<button type="button" data-copy="cd \/home\/dev\/src\/alpha &amp;&amp; claude/,
      );
      assert.match(
        html,
        /<form method="post"\s+action="\/sessions\/claude%3Af332cca8-0b9a-4244-835f-c44f31385301\/fork\?project=%2Fhome%2Fdev%2Fsrc%2Falpha"[^>]*>\s*<button type="submit"[^>]*>Fork into a logbook session<\/button>/,
        "a fork button that posts to the sessions of its project",
      );
      assert.match(html, /End of the conversation/);
    });

    await t.step("control characters in raw bytes are shown escaped", async () => {
      const html = await (await request(app, "/conversations/938af529")).text();
      assert.match(html, /<span class="esc">\\x0d<\/span>/);
    });

    await t.step("paging by 10 to the end", async () => {
      let path: string | null = `/conversations/${encodeURIComponent(FIXTURE_ID)}?limit=10`;
      const ids: number[] = [];
      let pages = 0;
      while (path) {
        const html: string = await (await request(app, path)).text();
        ids.push(
          ...[...html.matchAll(/<article class="[^"]*" id="r(\d+)"/g)].map((m) => Number(m[1])),
        );
        const next: RegExpExecArray | null = /href="([^"]+)" rel="next">Next page/.exec(html);
        path = next ? next[1]!.replaceAll("&amp;", "&") : null;
        if (!path) assert.match(html, /End of the conversation/);
        pages++;
      }
      assert.equal(pages, 4);
      assert.equal(ids.length, 40);
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      assert.equal(new Set(ids).size, 40);
    });

    await t.step("the planted conversation: title, text and raw bytes redacted", async () => {
      const html = await (await request(app, `/conversations/${encodeURIComponent(PLANTED.id)}`))
        .text();
      assert.ok(!html.includes(SECRET));
      assert.match(
        html,
        /<title>walrus-sprocket rotation \[REDACTED:openai-key\] · logbook<\/title>/,
      );
      assert.match(html, /secrets redacted\)<\/summary>/);
      assert.ok(!html.includes("<script>alert"));
    });

    await t.step("a path-like id is a 400 page", async () => {
      const response = await request(app, "/conversations/..%2F..%2Fetc%2Fpasswd");
      assert.equal(response.status, 400);
      assert.match(await response.text(), /<h1>Bad request<\/h1>/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the status page shows the store, drift and snapshots, and its button starts a capture", async (t) => {
  const world = await capturedWorld();
  try {
    const { app, services } = appFor(world);
    await t.step("sections", async () => {
      const html = await (await request(app, "/status")).text();
      assert.match(html, /Capture is on\. Phase: <strong>idle<\/strong>/);
      assert.match(html, /<th scope="row">Size on disk<\/th>/);
      assert.match(html, /unknown type &quot;hologram-sync&quot;/);
      assert.match(html, /0 snapshots, 0 B/);
      assert.match(html, /No unclosed steps/);
      assert.match(html, /<form method="post" action="\/status\/reindex">/);
      assert.match(html, /data-running="0"/);
    });
    await t.step("Capture now starts one and comes back", async () => {
      const response = await request(app, "/status/reindex", {
        method: "POST",
        headers: { Origin: "http://127.0.0.1:8787", "Sec-Fetch-Site": "same-origin" },
      });
      assert.equal(response.status, 303);
      assert.equal(response.headers.get("location"), "/status");
      assert.ok(services.capture.current, "a run was started");
      await services.capture.idle();
      const html = await (await request(app, "/status")).text();
      assert.match(html, /The last capture started here\s+finished/);
    });
  } finally {
    await world.cleanup();
  }
});
