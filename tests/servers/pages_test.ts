// The dashboard's pages through `app.request()`: search with marked snippets and links to the
// hit, the conversation with folds, raw views, paging, the resume command and the fork button,
// status, escaping, the gate, and an inline script and style that the content security policy
// really allows.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { appFor, capturedWorld, PLANTED, request, SECRET, withVars } from "./_dashboard.ts";
import { HOSTILE_ID, hostileWorld } from "./_hostile.ts";
import { addToolHeavy, TOOL_HEAVY } from "../_tool_heavy.ts";
import { captureIo, makeWorld, runCli } from "../_helpers.ts";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { unescapeHtml } from "../commands/_show.ts";
import { addInvisible, INVISIBLE } from "../_invisible.ts";
import { isInvisible } from "../../lib/invisible.ts";
import { safeText } from "../../lib/safe_text.ts";
import { nearestExistingDir } from "../../lib/sessions/resume.ts";
import {
  leaks,
  placeSecretPathSession,
  SECRET_PATH_ID,
  SECRET_PATH_SESSION,
  SECRET_PATH_WORD,
  shownPath,
} from "../_secret_path.ts";

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
      assert.match(html, /<label for="q"[^>]*>Search text/);
      assert.match(html, /<input id="q" name="q" type="search"/);
      assert.match(html, /<a class="skip" href="#main">Skip to content<\/a>/);
      assert.match(html, /accesskey="s"/);
      assert.match(html, /<details class="filters">\s*<summary>Filters<\/summary>/, "folded");
      for (const name of ["project", "agent", "kind", "role", "since", "until"]) {
        assert.match(html, new RegExp(`<label>[^<]+<(input|select) name="${name}"`), name);
      }
      assert.doesNotMatch(html, /class="hits"/);
    });

    await t.step(
      "without a query: the recent conversations, as the search screen opens",
      async () => {
        const html = await (await request(app, "/")).text();
        assert.match(html, /<h2>Recent conversations<\/h2>/);
        const total = /<p role="status"\s+class="muted">(\d+) conversations, newest first/.exec(
          html,
        );
        assert.ok(total, "how many");
        const rows = html.slice(html.indexOf('<ol class="rows recent">'), html.indexOf("</ol>"));
        const titles = [
          ...rows.matchAll(/<a class="title" href="\/conversations\/[^"]+">([^<]*)</g),
        ];
        assert.equal(titles.length, Number(total[1]));
        assert.ok(titles.some((m) => /^walrus-sprocket rotation \[REDACTED/.test(m[1]!)), "gated");
        const times = [...rows.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]!);
        assert.deepEqual(times, [...times].sort().reverse(), "newest first");
        assert.doesNotMatch(html, /This is a demo/, "not a demo");
        const demo = await (await request(appFor(world, { demo: true }).app, "/")).text();
        assert.match(
          demo,
          /<strong>This is a demo<\/strong>: logbook's bundled\s+sample transcripts/,
        );
      },
    );

    await t.step("hits with <mark>, a link to the conversation at the hit", async () => {
      const html = await (await request(app, `/?q=${PLANTED.phrase}&agent=claude`)).text();
      assert.match(html, /<p role="status"><strong>2<\/strong> matches<\/p>/, "one total line");
      assert.match(html, /<mark>walrus<\/mark>-<mark>sprocket<\/mark>/);
      assert.match(html, /<a class="title" href="[^"]+">walrus-sprocket rotation \[REDACTED/);
      const link = /href="(\/conversations\/[^"]+)"/.exec(html);
      assert.ok(link);
      assert.match(
        link[1]!,
        new RegExp(`^/conversations/${encodeURIComponent(PLANTED.id)}\\?hit=\\d+#r\\d+$`),
      );
      assert.match(html, /<option value="claude" selected>claude<\/option>/);
      const only = /<a href="([^"]+)" title="\/home\/dev\/src\/secretive">/.exec(html);
      assert.ok(only, "a project among the counts narrows to it");
      const narrowed = await (await request(app, only[1]!.replaceAll("&amp;", "&"))).text();
      assert.match(narrowed, /<strong>2<\/strong> matches<\/p>/);
      assert.match(narrowed, /name="project" value="\/home\/dev\/src\/secretive"/);
    });

    await t.step("the planted secret is redacted and the planted HTML escaped", async () => {
      const html = await (await request(app, `/?q=${PLANTED.phrase}`)).text();
      assert.ok(!html.includes(SECRET));
      assert.ok(html.includes("[REDACTED:openai-key]"));
      assert.ok(!html.includes("<script>alert"), "no live markup from a transcript");
      assert.ok(html.includes("&lt;script&gt;alert(&#39;<mark>walrus</mark>&#39;)"));
    });

    await t.step("filters typed in the box; sorted newest; grouped by conversation", async () => {
      const q = (text: string) => `/?q=${encodeURIComponent(text)}`;
      // Nothing found says which filter kept every match out, and links to the search without it.
      const none = await (await request(app, q(`${PLANTED.phrase} agent:codex`))).text();
      assert.ok(
        none.includes(
          `<p role="status">No matches for &quot;${PLANTED.phrase}&quot; from codex; 2 matches ` +
            "from other agents: drop agent:codex</p>",
        ),
        none,
      );
      assert.ok(
        none.includes(`<a href="/?q=${PLANTED.phrase}">without agent:codex</a>`),
        "the search again without the filter",
      );
      const api = await (await request(app, `/api/search?q=${PLANTED.phrase}&since=7d`)).json();
      assert.deepEqual(api.hits, []);
      assert.equal(
        api.noMatch.text,
        `No matches for "${PLANTED.phrase}" in the last 7 days; 2 older matches: drop since:7d`,
      );
      // The words as typed (forgive=exact): a prefix they begin is offered as a link.
      const prefix = await (await request(app, `${q("walru since:3650d")}&forgive=exact`)).text();
      assert.match(prefix, /No matches\. Indexed words begin with it: try &quot;walru\*&quot;/);
      assert.ok(
        prefix.includes('<a href="/?q=since%3A3650d+walru*&amp;forgive=exact">walru*</a>'),
        prefix,
      );
      // Forgiving (the default): the prefix's hits, saying so, with the way back to the words.
      const forgiven = await (await request(app, q("walru since:3650d"))).text();
      assert.match(forgiven, /<mark>walrus<\/mark>/);
      assert.ok(
        forgiven.includes(
          '<p class="notice forgiven" role="note">No hits for &quot;walru&quot;; showing ' +
            '&quot;walru*&quot; · <a href="/?q=walru+since%3A3650d&amp;forgive=exact">' +
            'search for "walru" exactly</a>',
        ),
        forgiven,
      );
      // A project's last path component names it; a near miss offers the closest.
      const byName = await (await request(app, q("marmot project:alpha"))).text();
      assert.match(byName, /<strong>\d+<\/strong> match/);
      const near = await (await request(app, q("marmot project:alph"))).text();
      assert.match(
        near,
        /No matches: no conversation is in project &quot;[^&]*\/alph&quot;; the closest: &quot;\/home\/dev\/src\/alpha&quot;/,
      );
      assert.ok(
        near.includes(
          '<a href="/?q=marmot&amp;project=%2Fhome%2Fdev%2Fsrc%2Falpha">in /home/dev/src/alpha</a>',
        ),
        near,
      );
      const inline = await (await request(app, q(`agent:claude ${PLANTED.phrase} since:3650d`)))
        .text();
      assert.match(inline, /<strong>2<\/strong> matches/);
      const alone = await request(app, q("agent:claude since:7d"));
      assert.equal(alone.status, 400);
      assert.match(await alone.text(), /role="alert">Add words to search for/);
      const newest = await (await request(app, "/?q=export&sort=newest&limit=100")).text();
      const times = [...newest.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]!);
      assert.ok(times.length > 2);
      assert.deepEqual(times, [...times].sort().reverse(), "newest first");
      const grouped = await (await request(app, "/?q=export&group=1")).text();
      assert.match(
        grouped,
        /<section class="group" aria-label="tundra-mosaic: nightly export batching">/,
      );
    });

    await t.step(
      "fields left at their defaults are no filters: the panel stays folded",
      async () => {
        const empty = "project=&agent=&session=&kind=&role=&since=&until=";
        for (const rest of [empty, `${empty}&limit=20`, "limit=20", ""]) {
          const html = await (await request(app, `/?q=export&${rest}`)).text();
          assert.match(html, /<details class="filters">\s*<summary>Filters<\/summary>/, rest);
          assert.match(
            html,
            /<option value="" selected>20<\/option>|<option value="">20<\/option>/,
          );
        }
        const more = await (await request(app, "/?q=export&limit=50&agent=claude")).text();
        assert.match(more, /<details class="filters"\s+open\s*><summary>Filters \(2\)<\/summary>/);
        assert.match(more, /<option value="50" selected>50<\/option>/);
      },
    );

    await t.step(
      "hits say what they are in plain words, and nothing for a missing date",
      async () => {
        const html = await (await request(app, "/?q=marmot+keyring")).text();
        const metas = [...html.matchAll(/<div class="meta-line">([\s\S]*?)<\/div>/g)].map((m) =>
          m[1]!.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim()
        );
        assert.deepEqual(metas.map((m) => m.split(" · ").at(-1)), ["answer", "question"]);
        const list = html.slice(html.indexOf('<ol class="hits"'), html.indexOf("</ol>"));
        assert.doesNotMatch(list, /tool_call|message\/assistant|message\/user/);
        const undated = await (await request(app, "/?q=juniper-sextant")).text();
        const line = /<div class="meta-line">([\s\S]*?)<\/div>/.exec(undated)![1]!
          .replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();
        assert.equal(line, "claude · /home/dev/src/alpha · summary", "no date, no dash");
      },
    );

    await t.step(
      "grouped: a page of conversations, their best hits, the rest one link away",
      async () => {
        const html = await (await request(app, "/?q=export&group=1")).text();
        assert.match(
          html,
          /<p role="status"><strong>\d+<\/strong> conversations\s*· \d+ matches\s*<\/p>/,
        );
        const group =
          /<section class="group" aria-label="tundra-mosaic: nightly export batching">([\s\S]*?)<\/section>/
            .exec(html);
        assert.ok(group, html);
        const hits = Number(/· (\d+) hits<\/div>/.exec(group[1]!)![1]);
        assert.equal([...group[1]!.matchAll(/<li class="hit">/g)].length, 3, "its best three");
        const more = /<a href="([^"]+)">(\d+) more in this conversation<\/a>/.exec(group[1]!);
        assert.ok(more);
        assert.equal(Number(more[2]), hits - 3);
        const rest = await (await request(app, more[1]!.replaceAll("&amp;", "&"))).text();
        assert.match(rest, new RegExp(`<strong>${hits}</strong> matches</p>`), "every hit of it");
        assert.match(rest, /name="session" value="claude:f332cca8-0b9a-4244-835f-c44f31385301"/);
        assert.doesNotMatch(rest, /class="group"/);
        // Grouping spans every page of hits, not one: each conversation is one group.
        const all = await (await request(app, "/?q=the&group=1&limit=100")).text();
        const titles = [...all.matchAll(/<section class="group" aria-label="([^"]*)">/g)].map((m) =>
          m[1]
        );
        assert.ok(titles.length > 5);
        const conversations = [...all.matchAll(/<h3><a href="\/conversations\/([^?"]+)/g)].map((
          m,
        ) => m[1]);
        assert.equal(new Set(conversations).size, conversations.length, "one group each");
      },
    );

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
      assert.match(next, /<p role="status">21–40 of <strong>\d+<\/strong> matches<\/p>/);
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

Deno.test("/search/results answers a search's results alone, as the page shows them below its box", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const region = '<div id="results" aria-live="polite" aria-busy="false">';
    const both = async (query: string) => {
      const page = await request(app, `/?${query}`);
      const results = await request(app, `/search/results?${query}`);
      return { page, results, pageHtml: await page.text(), html: await results.text() };
    };

    await t.step(
      "hits: the page's own, in the region the page holds them in, and its title",
      async () => {
        const { page, results, pageHtml, html } = await both(`q=${PLANTED.phrase}&agent=claude`);
        assert.equal(results.status, 200);
        assert.match(html, /<p role="status"><strong>2<\/strong> matches<\/p>/);
        assert.match(html, /<mark>walrus<\/mark>-<mark>sprocket<\/mark>/);
        assert.doesNotMatch(html, /<html|<form|<script/, "the results alone");
        assert.ok(pageHtml.includes(`${region}${html}</div>`), "the page's results, byte for byte");
        assert.equal(
          decodeURIComponent(results.headers.get("x-logbook-title") ?? ""),
          `Search: ${PLANTED.phrase} · logbook`,
        );
        assert.match(pageHtml, new RegExp(`<title>Search: ${PLANTED.phrase} · logbook</title>`));
        assert.equal(page.headers.get("x-logbook-title"), null, "only the results carry it");
        assert.ok(!html.includes(SECRET), "through the gate");
      },
    );

    await t.step("no words: the recent conversations; only filters: the page's 400", async () => {
      const empty = await both("agent=claude");
      assert.equal(empty.results.status, 200);
      assert.match(empty.html, /<h2>Recent conversations of claude<\/h2>/);
      assert.ok(empty.pageHtml.includes(`${region}${empty.html}</div>`));
      const filters = await both(`q=${encodeURIComponent("agent:codex")}`);
      assert.equal(filters.results.status, 400);
      assert.equal(filters.page.status, 400);
      assert.match(filters.html, /role="alert">Add words to search for/);
      assert.equal(
        decodeURIComponent(filters.results.headers.get("x-logbook-title") ?? ""),
        "Search · logbook",
      );
    });

    await t.step("nothing found: the sentence that says why, as on the page", async () => {
      const { html } = await both(`q=${PLANTED.phrase}+agent:codex`);
      assert.match(html, /<p role="status">No matches for &quot;walrus-sprocket&quot; from codex/);
    });

    await t.step("the page's script asks with forgive=typing: it is taken", async () => {
      const typed = await request(app, `/search/results?q=${PLANTED.phrase}&forgive=typing`);
      assert.equal(typed.status, 200);
      assert.match(await typed.text(), /<mark>walrus<\/mark>-<mark>sprocket<\/mark>/);
    });

    // A mistyped word is answered with the closest one.
    const typo = "walrsu";
    await t.step({
      name: "a forgiven search says what it searched instead, and links to the words as typed",
      fn: async () => {
        const { html } = await both(`q=${typo}`);
        assert.match(html, /<p class="notice forgiven" role="note">No hits for &quot;walrsu&quot;/);
        const exact = /<a href="([^"]+)">search for "walrsu" exactly<\/a>/.exec(html);
        assert.ok(exact, html);
        const link = exact[1]!.replaceAll("&amp;", "&");
        assert.match(link, /[?&]forgive=exact(&|$)/);
        const page = await (await request(app, link)).text();
        assert.match(page, /<p role="status">No matches/);
      },
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the conversation page is a chat: Markdown, folded tools, raw bytes, pages, resume", async (t) => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    await t.step("roles, folded tool calls, raw views, the resume command", async () => {
      const html = await (await request(app, `/conversations/${encodeURIComponent(FIXTURE_ID)}`))
        .text();
      assert.match(
        html,
        /<h1 title="tundra-mosaic: nightly export batching">tundra-mosaic: nightly export batching<\/h1>/,
      );
      assert.match(html, /class="rec kind-message role-user shape-message"/);
      assert.match(html, /class="rec kind-message role-assistant shape-message"/);
      assert.match(
        html,
        /<details class="fold tool"\s*>\s*<summary><span class="tag">Bash<\/span> <code>deno task export:nightly/,
        "a tool call is one line: its name and the first line of its input",
      );
      assert.match(
        html,
        /<summary><span class="tag">Bash<\/span> <code>deno task export:nightly[^<]*<\/code>\s*<span class="out">→ \d+ B<\/span>/,
        "the call's line says its result's size",
      );
      assert.match(html, /<details class="fold thinking"\s*>\s*<summary>/);
      assert.match(html, /<summary aria-label="Raw bytes \(\d+ bytes at offset 0\)"/);
      assert.match(html, /<input type="checkbox" id="show-quiet"> Show \d+ meta and empty records/);
      assert.match(html, /class="rec kind-meta [^"]*quiet"/, "meta records are quiet");
      assert.match(html, /<code>push\(\)<\/code>/, "Markdown is rendered");
      for (const format of ["md", "html", "json", "text"]) {
        assert.ok(html.includes(`/export?format=${format}"`), format);
      }
      // The fixture's directory is on no machine: the command runs in its nearest that is, and
      // says so (one rule with resume --print and the search screen).
      const runsIn = nearestExistingDir("/home/dev/src/alpha");
      assert.ok(
        html.includes(
          `<code class="cmd" id="resume-cmd">cd ${runsIn} &amp;&amp; claude --resume f332cca8-0b9a-4244-835f-c44f31385301</code>`,
        ),
      );
      assert.ok(html.includes(`<button type="button" data-copy="cd ${runsIn} &amp;&amp; claude`));
      assert.ok(
        html.includes(
          `<p class="muted resume-note">Note: the session&#39;s directory &quot;/home/dev/src/alpha&quot; no longer exists; using &quot;${runsIn}&quot;, the nearest that does</p>`,
        ),
      );
      assert.match(
        html,
        /<form method="post"\s+action="\/sessions\/claude%3Af332cca8-0b9a-4244-835f-c44f31385301\/fork\?project=%2Fhome%2Fdev%2Fsrc%2Falpha"[^>]*>\s*<button type="submit"[^>]*>Fork<span class="long"> into a logbook session<\/span><\/button>/,
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
          ...[...html.matchAll(/<(?:article|div) class="rec[^"]*" id="r(\d+)"/g)].map((m) =>
            Number(m[1])
          ),
        );
        const next: RegExpExecArray | null = /href="([^"]+)" rel="next">Next/.exec(html);
        path = next ? next[1]!.replaceAll("&amp;", "&") : null;
        if (!path) assert.match(html, /End of the conversation/);
        pages++;
      }
      assert.equal(pages, 4);
      assert.equal(ids.length, 40);
      // A result shown inside its call's fold comes right after the call, before what follows.
      assert.deepEqual([...ids].sort((a, b) => a - b), [...new Set(ids)].sort((a, b) => a - b));
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
      assert.match(html, /secrets redacted\)"/);
      assert.ok(!html.includes("<script>alert"));
      assert.ok(html.includes("&lt;script&gt;alert("), "HTML in Markdown is shown as text");
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
      assert.match(
        html,
        /<li class="warn">claude [^:<]+: \d+ lines? kept raw, not indexed \([^<]*\)\. Nothing is lost: [^<]*reindex --rebuild/,
        "one line per agent version, with what to do",
      );
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

/**
 * No element a transcript could plant, no event handler or `src` attribute, no link but to
 * http(s), mailto or the dashboard. Text never holds a raw `<`, so every `<` opens a real tag.
 */
function assertInert(body: string): void {
  const tags = [...body.matchAll(/<[a-z][^>]*>/gi)].map((m) => m[0]);
  for (const tag of tags) {
    const name = /^<([a-z0-9]+)/i.exec(tag)![1]!.toLowerCase();
    assert.ok(!["script", "img", "svg", "iframe", "style", "object", "embed"].includes(name), tag);
    const attributes = tag.replace(/="[^"]*"/g, '=""');
    assert.doesNotMatch(attributes, /\s(on[a-z]+|src|srcdoc|style)=/i, tag);
    const href = /\shref="([^"]*)"/.exec(tag)?.[1];
    if (href !== undefined) assert.match(href, /^(https?:|mailto:|\/|#)/, tag);
  }
}

Deno.test("Markdown from a transcript never becomes live markup, links or images", async () => {
  const world = await hostileWorld();
  try {
    const { app } = appFor(world);
    const html = await (await request(app, `/conversations/${encodeURIComponent(HOSTILE_ID)}`))
      .text();
    assert.match(html, /basilisk answer 0/, "the conversation is shown");
    const body = html.slice(html.indexOf("<main"), html.indexOf("</main>"));
    assertInert(body);
    assert.match(body, /<pre class="code"><code class="hljs language-html">/, "code highlighted");
    assert.match(body, /&lt;script&gt;/, "markup is shown as text");
    for (const format of ["md", "html", "json", "text"]) {
      const response = await request(
        app,
        `/conversations/${encodeURIComponent(HOSTILE_ID)}/export?format=${format}`,
      );
      assert.equal(response.status, 200, format);
      assert.match(response.headers.get("content-disposition") ?? "", /^attachment; filename="/);
      const text = await response.text();
      assert.ok(text.includes("basilisk answer 12"), format);
      if (format === "html") {
        assertInert(text.slice(text.indexOf("<body")));
      }
      if (format === "json") assert.equal(JSON.parse(text).records.length, 26 + 1);
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the projects page lists every project; sessions open on every project's", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const projects = await (await request(app, "/projects")).text();
    assert.match(projects, /<h1>Projects<\/h1>/);
    assert.match(projects, /<span class="badge">claude \d+<\/span>/);
    assert.match(projects, /href="\/sessions\?project=%2Fhome%2Fdev%2Fsrc%2Fsecretive"/);
    // The name opens the project's conversations; its sessions are a link beside.
    const name =
      /<a class="title" href="([^"]+)" title="\/home\/dev\/src\/alpha">\/home\/dev\/src\/alpha<\/a>/
        .exec(projects);
    assert.ok(name, "the project's name links to its conversations");
    assert.equal(name[1], "/?project=%2Fhome%2Fdev%2Fsrc%2Falpha");
    const listing = await (await request(app, name[1]!)).text();
    assert.match(listing, /<h2>Recent conversations in \/home\/dev\/src\/alpha<\/h2>/);
    assert.match(listing, /<p role="status"\s+class="muted">\d+ conversations, newest first/);
    assert.ok(listing.includes("tundra-mosaic: nightly export batching"));
    assert.ok(!listing.includes("walrus-sprocket"), "only that project's");
    assert.match(
      listing,
      /<a href="\/sessions\?project=%2Fhome%2Fdev%2Fsrc%2Falpha">sessions<\/a>/,
    );
    assert.match(projects, /\(no project directory\)<\/span>[\s\S]*?record no working directory/);
    // The same count as the status page: conversations, and subagents apart.
    const head = /(\d+) conversations \(\+(\d+) subagents\), most recently active first/
      .exec(projects);
    assert.ok(head, "subagents are counted apart");
    const status = await (await request(app, "/status")).text();
    const row = /<td>claude<\/td>\s*<td class="num">(\d+)<\/td>\s*<td class="num">(\d+)<\/td>/
      .exec(status);
    assert.ok(row, "the status page splits them the same way");
    assert.deepEqual([row[1], row[2]], [head[1], head[2]]);
    const sessions = await (await request(app, "/sessions")).text();
    assert.match(sessions, /Recent sessions of every project/);
    assert.match(sessions, /<ol class="rows recent">/);
    assert.ok(sessions.includes("tundra-mosaic: nightly export batching"));
    assert.ok(sessions.includes("walrus-sprocket rotation [REDACTED:openai-key]"));
  } finally {
    await world.cleanup();
  }
});

Deno.test("a search hit opens its conversation with the question before it, marked", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world);
    const search = await (await request(app, `/?q=${PLANTED.phrase}&kind=message&role=assistant`))
      .text();
    const link = /href="(\/conversations\/[^"]+hit=(\d+)[^"]*)"/.exec(search);
    assert.ok(link, "the hit links with hit=");
    const html = await (await request(app, link[1]!.replaceAll("&amp;", "&"))).text();
    const hit = link[2]!;
    assert.match(html, new RegExp(`class="[^"]*is-hit[^"]*" id="r${hit}"`));
    const question = html.indexOf("role-user");
    assert.ok(question > 0 && question < html.indexOf(`id="r${hit}"`), "the question is above");
  } finally {
    await world.cleanup();
  }
});

Deno.test("a hit after a turn of tool calls opens with its question, and a short page still holds it", async (t) => {
  const world = await capturedWorld({ toolHeavy: true });
  try {
    const { app } = appFor(world);
    for (const [agent, { question, answer }] of Object.entries(TOOL_HEAVY)) {
      const search = await (await request(app, `/?q=${answer}`)).text();
      const link = /href="(\/conversations\/[^"]+hit=(\d+)[^"]*)"/.exec(search);
      assert.ok(link, `${agent}: the hit links with hit=`);
      const path = link[1]!.replaceAll("&amp;", "&");
      const hit = `id="r${link[2]}"`;
      await t.step(`${agent}: the whole turn`, async () => {
        const html = await (await request(app, path)).text();
        const at = html.indexOf(question, html.indexOf('<section class="chat"'));
        assert.ok(at > 0 && at < html.indexOf(hit), "the question is above the hit");
        assert.doesNotMatch(html, /class="gap"/);
      });
      await t.step(`${agent}: five records a page`, async () => {
        const short = path.replace("?", "?limit=5&");
        const html = await (await request(app, short)).text();
        const at = html.indexOf(question, html.indexOf('<section class="chat"'));
        const gap = /<p class="gap"><a href="([^"]+)">… (\d+) earlier records?<\/a><\/p>/.exec(
          html,
        );
        assert.ok(gap, "a gap between the question and the page");
        assert.ok(at > 0 && at < gap.index && gap.index < html.indexOf(hit));
        const first = /<article class="[^"]*role-user[^"]*" id="r(\d+)"/.exec(html);
        assert.ok(first && first.index < gap.index, "the question is a record of its own");
        assert.match(gap[1]!, new RegExp(`[?&]after=${first[1]}(&|$)`), "the gap opens after it");
        const pageIds = [...html.matchAll(/<article class="[^"]*" id="r(\d+)"/g)].slice(1);
        assert.ok(pageIds.length <= 5, "the page keeps its size");
      });
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a tool call is one line with its result's size, and opens on its input and result", async (t) => {
  const world = await capturedWorld({ toolHeavy: true });
  try {
    const { app } = appFor(world);
    /** The chat, without the raw bytes of its records (they hold every line as captured). */
    const page = async (id: string) => {
      const html = await (await request(app, `/conversations/${encodeURIComponent(id)}`)).text();
      return html.slice(html.indexOf('<section class="chat"'), html.indexOf("</main>"))
        .replace(/<details class="raw">[\s\S]*?<\/details>/g, "<raw>");
    };
    /** Each call's fold: its summary and what it holds, in page order. */
    const folds = (html: string) =>
      [...html.matchAll(
        /<details class="fold tool"[^>]*>([\s\S]*?)<\/details>\s*<raw>/g,
      )]
        .map((m) => m[1]!);
    await t.step("claude: parallel calls each hold their own result, paired by id", async () => {
      const html = await page(TOOL_HEAVY.claude.id);
      const all = folds(html);
      assert.equal(all.length, 8);
      const [bash, read] = all;
      assert.match(
        bash!,
        /<span class="tag">Bash<\/span> <code>gh run view 4411[^<]*<\/code>\s*<span class="out">→ 95 B<\/span>/,
      );
      assert.match(bash!, /<div class="rec result-in" id="r\d+"[\s\S]*step install 312\.9s/);
      assert.doesNotMatch(bash!, /runs-on/, "the second call's result is not in the first call");
      assert.match(
        read!,
        /<span class="tag">Read<\/span> <code>\/home\/dev\/src\/forge\/\.github\/workflows\/build\.yml<\/code>\s*<span class="out">→ \d+ B/,
      );
      assert.match(read!, /runs-on: ubuntu-24\.04/);
      assert.doesNotMatch(html, /<article class="rec kind-tool_result/, "no result stands alone");
    });
    await t.step(
      "claude: a local command is an event line; Markdown tables and lists render",
      async () => {
        const html = await page(TOOL_HEAVY.claude.id);
        assert.match(
          html,
          /<p class="fold event-line"><span class="tag">command<\/span> <code>\/cost<\/code><\/p>/,
        );
        assert.doesNotMatch(html, /&lt;command-name&gt;/);
        assert.match(
          html,
          /<summary><span class="tag">output<\/span> Total cost: +\$0\.2210<\/summary>/,
        );
        assert.match(html, /<table>\s*<thead>\s*<tr>\s*<th>step<\/th>/);
        assert.match(html, /<td>312\.9 s<\/td>/);
        assert.match(html, /<ol>\s*<li>Drop <code>github\.sha<\/code>/);
        assert.match(html, /<ul>\s*<li>Expect CI to take/);
        assert.match(
          html,
          /<summary><span class="tag">thinking<\/span> <strong>Where the time goes<\/strong><\/summary>/,
        );
      },
    );
    await t.step(
      "codex: shell and web search calls name their tool, the command as input",
      async () => {
        const html = await page(TOOL_HEAVY.codex.id);
        const summaries = folds(html).map((f) =>
          /<summary><span class="tag">([^<]*)<\/span> <code>([^<]*)<\/code>(?:\s*<span class="out">([^<]*)<\/span>)?/
            .exec(f)?.slice(1).map((x) => x?.trim())
        );
        assert.deepEqual(summaries, [
          ["shell", "rg -n &quot;retry&quot; src/upstream", "→ 137 B"],
          ["web_search", "exponential backoff full jitter formula", undefined],
          ["exec_command", "sed -n &#39;30,60p&#39; src/upstream/client.rs", "→ 283 B"],
          ["shell", "cargo test -p upstream backoff", "→ 97 B"],
        ]);
        assert.match(
          html,
          /<summary><span class="tag">thinking<\/span> <strong>Designing the backoff<\/strong><\/summary>/,
        );
        assert.doesNotMatch(html, /\*\*Designing/);
      },
    );
    await t.step("a hit on a result opens its call's fold and marks the result", async () => {
      const search = await (await request(app, "/?q=312.9s&kind=tool_result")).text();
      const link = /href="(\/conversations\/[^"]+hit=(\d+)[^"]*)"/.exec(search);
      assert.ok(link, search);
      const html = await (await request(app, link[1]!.replaceAll("&amp;", "&"))).text();
      assert.match(
        html,
        new RegExp(
          `<details class="fold tool"\\s+open\\s*>[\\s\\S]*?<div class="rec result-in is-hit" id="r${
            link[2]
          }"`,
        ),
      );
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the dashboard's Markdown, JSON and text exports are show --format's, byte for byte", async (t) => {
  const world = await capturedWorld({ toolHeavy: true });
  try {
    const { app } = appFor(world);
    // Both lay times out in the local zone: the command's is this process's.
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    for (const id of [FIXTURE_ID, TOOL_HEAVY.claude.id, TOOL_HEAVY.codex.id]) {
      for (const format of ["md", "json", "text"]) {
        await t.step(`${id} ${format}`, async () => {
          const path = `/conversations/${encodeURIComponent(id)}/export?format=${format}`;
          const response = await request(app, path);
          assert.equal(response.status, 200);
          const shown = await response.text();
          const cli = await runCli("show", [id, "--format", format], { ...world.vars, TZ: zone });
          assert.equal(cli.code, 0, cli.stderr);
          assert.ok(cli.stdout.length > 500, "a whole conversation");
          assert.equal(shown, cli.stdout);
        });
      }
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("a Codex conversation page folds what Codex told the model: its rules and AGENTS.md", async () => {
  const world = await makeWorld({ fixtures: ["codex"] });
  try {
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { app } = appFor(world);
    const id = "codex:019ec4f9-2ec6-7da7-bbee-b6e59f34f595";
    const response = await request(app, `/conversations/${encodeURIComponent(id)}`);
    assert.equal(response.status, 200);
    const page = await response.text();
    const folds = [
      ...page.matchAll(
        /<details class="fold context"[^>]*>\s*<summary><span class="tag">(\w+)<\/span> ([^<]{0,40})/g,
      ),
    ]
      .map((m) => `${m[1]}: ${m[2]}`);
    assert.ok(
      folds.some((f) => f.startsWith("developer: &lt;permissions instructions&gt;")),
      String(folds),
    );
    assert.ok(
      folds.some((f) => f.startsWith("context: # AGENTS.md instructions for")),
      String(folds),
    );
    // The user's own prompt is a message, as it was.
    assert.match(
      page,
      /<span class="who">User<\/span>[\s\S]*The webhook dispatcher hammers receivers/,
    );
  } finally {
    await world.cleanup();
  }
});

Deno.test("tool calls fold from a source whose path holds a #, as from any other", async () => {
  // A `#` also ends an OpenCode row's locator (`opencode.db#ses_…`): one in a folder's name
  // must not make a transcript's lines look like database rows to its adapter.
  const world = await makeWorld();
  try {
    world.codex = join(world.dir, "backup#2", "codex");
    await Deno.mkdir(world.codex, { recursive: true });
    withVars(world, { CODEX_HOME: world.codex });
    addToolHeavy(world);
    const io = captureIo();
    assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
    const { app } = appFor(world);
    const html = await (await request(
      app,
      `/conversations/${encodeURIComponent(TOOL_HEAVY.codex.id)}`,
    )).text();
    const tags = [
      ...html.matchAll(/<details class="fold tool"[^>]*>\s*<summary><span class="tag">([^<]*)</g),
    ]
      .map((m) => m[1]);
    assert.deepEqual(tags, ["shell", "web_search", "exec_command", "shell"]);
    const exported = await (await request(
      app,
      `/conversations/${encodeURIComponent(TOOL_HEAVY.codex.id)}/export?format=html`,
    )).text();
    assert.match(exported, /<summary><span class="tag">exec_command<\/span>/);
  } finally {
    await world.cleanup();
  }
});

Deno.test("no page shows a secret of a transcript's directory, and its links still find the project", async (t) => {
  const world = await makeWorld();
  try {
    const cwd = await placeSecretPathSession(world);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { app, services } = appFor(world);
    const shown = shownPath(cwd);
    const tilde = shown.replace(world.home, "~");
    /** The page at `path`, checked to hold no secret, with its links read back from the HTML. */
    const page = async (path: string) => {
      const response = await request(app, path);
      const html = await response.text();
      assert.equal(response.status, 200, `${path}: ${html.slice(0, 500)}`);
      assert.deepEqual(leaks(unescapeHtml(html)), [], path);
      const links = [...html.matchAll(/(?:href|action)="([^"]+)"/g)].map((m) =>
        unescapeHtml(m[1]!)
      );
      return { html: unescapeHtml(html), links };
    };
    const linked = (links: string[], start: string) => {
      const found = links.find((l) => l.startsWith(start) && l.includes(encodeURIComponent(shown)));
      assert.ok(found, `a link to ${start}… of the project as shown, among ${links.join(" ")}`);
      return found;
    };
    try {
      await t.step(
        "the projects page, and its links to the conversations and sessions",
        async () => {
          const projects = await page("/projects");
          assert.ok(projects.html.includes(shown), projects.html);
          const listing = await page(linked(projects.links, "/?project="));
          assert.match(listing.html, /1 conversation, newest first/);
          assert.ok(listing.html.includes(`Recent conversations in ${tilde}`));
          const sessions = await page(linked(listing.links, "/sessions?project="));
          assert.ok(sessions.html.includes(SECRET_PATH_SESSION), "the project's session is listed");
        },
      );
      await t.step(
        "a search: its hits, and its project facet narrowing to the project",
        async () => {
          const found = await page(`/?q=${SECRET_PATH_WORD}`);
          assert.ok(found.html.includes(tilde));
          const narrowed = await page(linked(found.links, "/?q="));
          assert.match(narrowed.html, /<strong>1<\/strong> match</);
          assert.ok(narrowed.html.includes(`<input name="project" value="${shown}"`));
          const elsewhere = shown.replace("/app", "/web");
          const none = await page(
            `/?q=${SECRET_PATH_WORD}&project=${encodeURIComponent(elsewhere)}`,
          );
          assert.match(none.html, /No matches/, "a project shown so that is none finds nothing");
        },
      );
      await t.step("the conversation page, and its fork button", async () => {
        const conversation = await page(`/conversations/${encodeURIComponent(SECRET_PATH_ID)}`);
        assert.ok(conversation.html.includes("aws-secret [REDACTED:aws-secret-key]"));
        const fork = await request(app, linked(conversation.links, "/sessions/"), {
          method: "POST",
          headers: { Origin: "null", "Sec-Fetch-Site": "same-origin" },
        });
        assert.equal(fork.status, 303, await fork.text());
        const location = fork.headers.get("location") ?? "";
        assert.deepEqual(leaks(location), []);
        const forked = await page(location.replace(/#.*/, ""));
        assert.match(forked.html, /Forked into a new logbook session/);
      });
      await t.step("the API: a conversation, a search, the sessions and the status", async () => {
        for (
          const path of [
            `/api/conversations/${encodeURIComponent(SECRET_PATH_ID)}`,
            `/api/search?q=${SECRET_PATH_WORD}`,
            `/api/sessions?project=${encodeURIComponent(shown)}`,
            "/api/status",
          ]
        ) {
          const response = await request(app, path);
          const text = await response.text();
          assert.equal(response.status, 200, `${path}: ${text}`);
          assert.deepEqual(leaks(text), [], path);
        }
      });
    } finally {
      services.searches.close();
    }
  } finally {
    await world.cleanup();
  }
});

Deno.test("the dashboard's downloads hold no character a reader cannot see, JSON escaped", async () => {
  const world = await makeWorld();
  try {
    addInvisible(world);
    assert.equal(await reindex(["--quiet"], captureIo(), world.env), 0);
    const { app } = appFor(world);
    for (const format of ["md", "html", "json", "text"]) {
      const path = `/conversations/${encodeURIComponent(INVISIBLE.id)}/export?format=${format}`;
      const response = await request(app, path);
      assert.equal(response.status, 200, format);
      const document = await response.text();
      assert.ok(document.includes("pass"), format);
      if (format === "json") {
        const hidden = [...document].filter((c) => isInvisible(c.codePointAt(0)!));
        assert.deepEqual(hidden, [], "JSON escapes every one");
        assert.match(document, /\\u200b/, "JSON keeps the character, escaped");
        continue;
      }
      // A download is read with cat and less too: it is what the terminal filter would show.
      assert.equal(safeText(document, { multiline: true }), document, format);
      assert.match(document, /pass\\u200[bB]word/, `${format}: shown, not dropped`);
      assert.match(document, /⟨tag text: /, `${format}: hidden text spelt out`);
    }
  } finally {
    await world.cleanup();
  }
});
