// The sessions of a project in the dashboard through `app.request()`: the list as `resume` shows
// it, fork and rename as the commands do them, bad inputs, the token, and the gate; and the
// sessions page with its copy, fork and rename controls.

import assert from "node:assert/strict";
import { loadContext } from "../../lib/context.ts";
import { projectOf } from "../../lib/paths.ts";
import { newRecord, type SessionRecord, SessionStore } from "../../lib/sessions/records.ts";
import { nearestExistingDir } from "../../lib/sessions/resume.ts";
import type { World } from "../_helpers.ts";
import {
  appFor,
  assertError,
  capturedWorld,
  HOST,
  PLANTED,
  post,
  request,
  SECRET,
} from "./_dashboard.ts";

const NOW = Date.parse("2026-10-01T12:00:00Z");
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The project of the planted Claude conversation (its directory exists on no machine). */
const PROJECT = projectOf(PLANTED.cwd);
const Q = `project=${encodeURIComponent(PLANTED.cwd)}`;
/** Where its resume commands run: the nearest directory of it that exists here (`/home`, `/`). */
const RUNS_IN = nearestExistingDir(PLANTED.cwd);
/** What the dashboard says of that. */
const GONE_NOTE =
  `the session's directory "${PLANTED.cwd}" no longer exists; using "${RUNS_IN}", the nearest that does`;

function sessionsOf(world: World): SessionStore {
  return new SessionStore(loadContext({ env: world.env }).paths);
}

/** A logbook session of `dir`'s project, written with one trail line. */
function ownSession(
  world: World,
  options: { dir?: string; at: string; title: string; patch?: Partial<SessionRecord> },
): SessionRecord {
  const dir = options.dir ?? PLANTED.cwd;
  const record: SessionRecord = {
    ...newRecord({
      cwd: dir,
      project: projectOf(dir).root,
      branch: "main",
      build: "0.1.0",
      now: Date.parse(options.at),
      title: options.title,
    }),
    ...options.patch,
  };
  if (record.kind === "chat" && record.messages.length === 0) {
    record.messages.push({ role: "user", content: "Why does the retry loop spin?" }, {
      role: "assistant",
      content: "The backoff is never reset.",
    });
  }
  const sessions = sessionsOf(world);
  sessions.save(record);
  sessions.appendTrail(record, [{
    at: record.createdAt,
    event: "turn",
    turn: 1,
    disk: { gates: ["secrets"], redacted: {} },
  }]);
  return record;
}

/** Two logbook sessions around the planted conversation (2026-09-20T10:00) and a manifest run. */
function plantSessions(world: World) {
  const newer = ownSession(world, { at: "2026-09-25T08:00:00Z", title: "Retry helper" });
  const older = ownSession(world, { at: "2026-09-10T08:00:00Z", title: "Backoff review" });
  const manifest = ownSession(world, {
    at: "2026-09-01T08:00:00Z",
    title: "Nightly audit",
    patch: { kind: "manifest", plan: { goal: "audit", plan: ["scan"], steps: [] } },
  });
  return { newer, older, manifest };
}

/** A form posted as a browser posts the page's own forms (`Origin: null` under no-referrer). */
function formPost(
  app: ReturnType<typeof appFor>["app"],
  path: string,
  fields: Record<string, string> = {},
  headers: Record<string, string> = { Origin: "null", "Sec-Fetch-Site": "same-origin" },
): Promise<Response> {
  return request(app, path, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
  });
}

Deno.test("GET /api/sessions lists a project's own sessions and captured conversations, newest first", async (t) => {
  const world = await capturedWorld();
  try {
    const { newer, older, manifest } = plantSessions(world);
    const { app } = appFor(world, { now: () => NOW });

    await t.step(
      "every row with agent, title, age, size, manifest flag and resume command",
      async () => {
        const response = await request(app, `/api/sessions?${Q}`);
        assert.equal(response.status, 200);
        const body = await response.json();
        assert.equal(body.project, PROJECT.root);
        assert.equal(body.total, 4);
        assert.equal(body.next, null);
        assert.deepEqual(
          body.sessions.map((s: { id: string }) => s.id),
          [`logbook:${newer.id}`, PLANTED.id, `logbook:${older.id}`, `logbook:${manifest.id}`],
        );
        const [own, claude, , run] = body.sessions;
        assert.equal(own.agent, "logbook");
        assert.equal(own.title, "Retry helper");
        assert.equal(own.updatedAt, "2026-09-25T08:00:00.000Z");
        assert.equal(own.age, "6 d ago");
        assert.equal(own.messages, 2);
        assert.ok(own.size > 0);
        // The commands run where they can (one rule with resume --print), and say why there.
        assert.equal(own.resume, `cd ${RUNS_IN} && logbook resume ${newer.id}`);
        assert.equal(own.resumeNote, GONE_NOTE);
        assert.equal(own.canFork, true);
        assert.equal(own.canRename, true);
        assert.equal(own.manifest, false);
        assert.equal(claude.agent, "claude");
        assert.equal(claude.resume, `cd ${RUNS_IN} && claude --resume ${PLANTED.sessionId}`);
        assert.equal(claude.resumeNote, GONE_NOTE);
        assert.equal(claude.conversation, PLANTED.id);
        assert.equal(claude.canRename, false);
        assert.equal(claude.canFork, true);
        assert.equal(run.manifest, true);
        assert.equal(run.canFork, false);
      },
    );

    await t.step("paged by limit and offset", async () => {
      const first = await (await request(app, `/api/sessions?${Q}&limit=3`)).json();
      assert.equal(first.sessions.length, 3);
      assert.equal(first.next, 3);
      const rest = await (await request(app, `/api/sessions?${Q}&limit=3&offset=3`)).json();
      assert.deepEqual(rest.sessions.map((s: { id: string }) => s.id), [
        `logbook:${manifest.id}`,
      ]);
      assert.equal(rest.next, null);
    });

    await t.step("without project: the project the dashboard was started in", async () => {
      const here = ownSession(world, {
        dir: world.home,
        at: "2026-09-30T08:00:00Z",
        title: "Home",
      });
      const body = await (await request(app, "/api/sessions")).json();
      assert.equal(body.project, projectOf(world.home).root);
      assert.deepEqual(body.sessions.map((s: { id: string }) => s.id), [`logbook:${here.id}`]);
    });

    await t.step("a bad limit is a 400 naming the field", async () => {
      await assertError(
        await request(app, `/api/sessions?${Q}&limit=0`),
        400,
        "bad_request",
        "limit",
      );
      await assertError(await request(app, `/api/sessions?offset=x`), 400, "bad_request", "offset");
    });

    await t.step("no token is a 401", async () => {
      const response = await app.request(`http://${HOST}/api/sessions?${Q}`, {
        headers: { Host: HOST },
      });
      await assertError(response, 401, "unauthorized");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("POST /api/sessions/:id/fork copies an own session and leaves the source byte-identical", async (t) => {
  const world = await capturedWorld();
  try {
    const { newer, manifest } = plantSessions(world);
    const sessions = sessionsOf(world);
    const recordBytes = Deno.readFileSync(sessions.recordPath(newer));
    const trailBytes = Deno.readFileSync(sessions.trailPath(newer));
    const { app } = appFor(world, { now: () => NOW });

    await t.step("201 with the new id and its resume command; the fork is listed", async () => {
      const response = await post(app, `/api/sessions/${newer.id.slice(0, 8)}/fork?${Q}`, {});
      assert.equal(response.status, 201);
      const fork = await response.json();
      assert.match(fork.id, UUID_V4);
      assert.notEqual(fork.id, newer.id);
      assert.equal(fork.key, `logbook:${fork.id}`);
      assert.equal(fork.title, "Retry helper (fork)");
      assert.equal(fork.forkedFrom, `logbook:${newer.id}`);
      assert.equal(fork.resume, `cd ${RUNS_IN} && logbook resume ${fork.id}`);
      assert.equal(fork.resumeNote, GONE_NOTE);
      assert.deepEqual(Deno.readFileSync(sessions.recordPath(newer)), recordBytes);
      assert.deepEqual(Deno.readFileSync(sessions.trailPath(newer)), trailBytes);
      const copy = sessions.read(PROJECT.key, fork.id);
      assert.deepEqual(copy.messages, newer.messages);
      assert.equal(copy.startedAt, new Date(NOW).toISOString());
      const list = await (await request(app, `/api/sessions?${Q}`)).json();
      const first = list.sessions[0];
      assert.equal(first.id, `logbook:${fork.id}`);
      assert.equal(first.forkedFrom, `logbook:${newer.id}`);
      assert.equal(list.total, 5);
    });

    await t.step("a manifest run is refused with a 409 that says why", async () => {
      const error = await assertError(
        await post(app, `/api/sessions/${manifest.id}/fork?${Q}`, {}),
        409,
        "conflict",
      );
      assert.match(error.message, /it is a manifest run, which has no conversation/);
    });

    await t.step("ids with path characters are a 400 naming the id", async () => {
      for (const id of ["..%2F..%2Fetc%2Fpasswd", "a%5Cb", "abc%00"]) {
        await assertError(
          await post(app, `/api/sessions/${id}/fork?${Q}`, {}),
          400,
          "bad_request",
          "id",
        );
      }
    });

    await t.step("an unknown id is a 404", async () => {
      const error = await assertError(
        await post(app, `/api/sessions/feedface/fork?${Q}`, {}),
        404,
        "not_found",
      );
      assert.match(error.message, /no such id in this project/);
    });

    await t.step("no token is a 401, and another origin a 403", async () => {
      const bare = await app.request(`http://${HOST}/api/sessions/${newer.id}/fork?${Q}`, {
        method: "POST",
        headers: { Host: HOST },
      });
      await assertError(bare, 401, "unauthorized");
      const foreign = await request(app, `/api/sessions/${newer.id}/fork?${Q}`, {
        method: "POST",
        headers: { Origin: "http://127.0.0.1:3000" },
      });
      await assertError(foreign, 403, "forbidden");
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("POST /api/sessions/:id/fork of a captured Claude conversation creates a logbook session", async () => {
  const world = await capturedWorld();
  try {
    const { app } = appFor(world, { now: () => NOW });
    const response = await post(
      app,
      `/api/sessions/${encodeURIComponent(PLANTED.id)}/fork?${Q}`,
      {},
    );
    const text = await response.text();
    assert.equal(response.status, 201, text);
    assert.ok(!text.includes(SECRET));
    const fork = JSON.parse(text);
    assert.equal(fork.forkedFrom, PLANTED.id);
    assert.equal(fork.title, `${PLANTED.phrase} rotation [REDACTED:openai-key] (fork)`);
    const sessions = sessionsOf(world);
    const record = sessions.read(PROJECT.key, fork.id);
    assert.equal(record.kind, "chat");
    assert.deepEqual(record.messages.map((m) => m.role), ["user", "assistant"]);
    const onDisk = Deno.readTextFileSync(sessions.recordPath(record));
    assert.ok(!onDisk.includes(SECRET), "the messages passed the gate on their way to disk");
    assert.match(onDisk, /\[REDACTED:openai-key\]/);
    const list = await (await request(app, `/api/sessions?${Q}`)).json();
    assert.deepEqual(list.sessions.map((s: { id: string }) => s.id), [
      `logbook:${fork.id}`,
      PLANTED.id,
    ]);
  } finally {
    await world.cleanup();
  }
});

Deno.test("POST /api/sessions/:id/rename rewrites an own session's title; others are refused", async (t) => {
  const world = await capturedWorld();
  try {
    const { newer } = plantSessions(world);
    const sessions = sessionsOf(world);
    const { app } = appFor(world, { now: () => NOW });

    await t.step("the record is rewritten at once", async () => {
      const response = await post(app, `/api/sessions/logbook:${newer.id}/rename?${Q}`, {
        title: "  Retry   helper, final ",
      });
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.id, newer.id);
      assert.equal(body.title, "Retry helper, final");
      const record = sessions.read(PROJECT.key, newer.id);
      assert.equal(record.title, "Retry helper, final");
      assert.equal(record.updatedAt, new Date(NOW).toISOString());
      assert.match(
        new TextDecoder().decode(sessions.readTrail(record)),
        /"event":"rename"/,
      );
    });

    await t.step("an empty or missing title is a 400 naming the field", async () => {
      for (const body of [{ title: "   " }, {}, { title: 7 }]) {
        const error = await assertError(
          await post(app, `/api/sessions/${newer.id}/rename?${Q}`, body),
          400,
          "bad_request",
          "title",
        );
        assert.match(error.message, /^Invalid value for "title"/);
      }
      assert.equal(sessions.read(PROJECT.key, newer.id).title, "Retry helper, final");
    });

    await t.step("another agent's conversation is a 409", async () => {
      const error = await assertError(
        await post(app, `/api/sessions/${encodeURIComponent(PLANTED.id)}/rename?${Q}`, {
          title: "mine now",
        }),
        409,
        "conflict",
      );
      assert.match(error.message, /only logbook's own sessions can be renamed/);
    });

    await t.step("path characters are a 400, no token a 401", async () => {
      await assertError(
        await post(app, `/api/sessions/..%2F..%2Fetc%2Fpasswd/rename?${Q}`, { title: "x" }),
        400,
        "bad_request",
        "id",
      );
      const bare = await app.request(`http://${HOST}/api/sessions/${newer.id}/rename?${Q}`, {
        method: "POST",
        body: JSON.stringify({ title: "x" }),
        headers: { Host: HOST, "Content-Type": "application/json" },
      });
      await assertError(bare, 401, "unauthorized");
    });

    await t.step("a secret in a new title is redacted before it is written", async () => {
      const response = await post(app, `/api/sessions/${newer.id}/rename?${Q}`, {
        title: `key ${SECRET}`,
      });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.ok(!text.includes(SECRET));
      assert.ok(!Deno.readTextFileSync(sessions.recordPath(newer)).includes(SECRET));
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("a secret planted in a session's title or messages shows redacted in the API and on the page", async (t) => {
  const world = await capturedWorld();
  try {
    // Written as an older build (or a hand edit) might have: straight to disk, past the gate.
    const planted = ownSession(world, {
      at: "2026-09-28T08:00:00Z",
      title: `Rotate ${SECRET} today`,
      patch: {
        messages: [{ role: "user", content: `the key is ${SECRET}` }, {
          role: "assistant",
          content: "Revoke it first.",
        }],
      },
    });
    const { app } = appFor(world, { now: () => NOW });
    await t.step("the list API", async () => {
      const text = await (await request(app, `/api/sessions?${Q}`)).text();
      assert.ok(!text.includes(SECRET));
      const body = JSON.parse(text);
      assert.equal(body.sessions[0].title, "Rotate [REDACTED:openai-key] today");
      assert.equal(body.sessions[1].title, `${PLANTED.phrase} rotation [REDACTED:openai-key]`);
    });
    await t.step("the page", async () => {
      const html = await (await request(app, `/sessions?${Q}`)).text();
      assert.ok(!html.includes(SECRET));
      assert.match(html, /Rotate \[REDACTED:openai-key\] today/);
    });
    await t.step("the fork's answer", async () => {
      const text = await (await post(app, `/api/sessions/${planted.id}/fork?${Q}`, {})).text();
      assert.ok(!text.includes(SECRET));
      assert.match(text, /Rotate \[REDACTED:openai-key\] today \(fork\)/);
    });
  } finally {
    await world.cleanup();
  }
});

Deno.test("the sessions page lists a project's sessions with copy, fork and rename controls", async (t) => {
  const world = await capturedWorld();
  try {
    const { newer, manifest } = plantSessions(world);
    const { app } = appFor(world, { now: () => NOW });

    await t.step("rows with agent, title, age, size and the resume command to copy", async () => {
      const response = await request(app, `/sessions?${Q}`);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, /<h1>Sessions<\/h1>/);
      assert.match(html, /<a href="\/sessions"[^>]*aria-current="page"[^>]*>Sessions<\/a>/);
      assert.match(html, /<p role="status">Sessions 1 to 4 of 4, newest first<\/p>/);
      assert.equal([...html.matchAll(/<li class="session/g)].length, 4);
      // Compact rows: the age once, beside the title; no "0 messages".
      const first = /<li class="session"[^>]*>([\s\S]*?)<\/li>/.exec(html)![1]!;
      assert.match(
        first,
        /<span class="side"><time datetime="2026-09-25T08:00:00.000Z" title="2026-09-25 08:00 UTC">6 days ago<\/time><\/span>/,
      );
      assert.match(first, /<div class="meta-line">logbook · [\d.]+ [KM]?B · 2 messages<\/div>/);
      assert.doesNotMatch(html, /updated|0 messages/);
      assert.match(
        html,
        new RegExp(
          `<code class="cmd" id="cmd-0" title="[^"]+">cd ${RUNS_IN} &amp;&amp; logbook resume ${newer.id}</code>\\s*<button type="button" data-copy="cd ${RUNS_IN} &amp;&amp; logbook resume ${newer.id}" data-copy-for="cmd-0"`,
        ),
      );
      assert.match(
        html,
        new RegExp(
          `<div class="muted resume-note">Note: the session&#39;s directory &quot;${PLANTED.cwd}&quot; no longer exists; using &quot;${RUNS_IN}&quot;`,
        ),
      );
      assert.match(
        html,
        new RegExp(`<a href="/conversations/${encodeURIComponent(PLANTED.id)}" id="title-1">`),
      );
    });

    await t.step(
      "fork forms for all but the manifest run, rename forms for own sessions",
      async () => {
        const html = await (await request(app, `/sessions?${Q}`)).text();
        const forms = [
          ...html.matchAll(/<form method="post"\s+action="\/sessions\/([^/]+)\/(fork|rename)\?/g),
        ]
          .map((m) => `${decodeURIComponent(m[1]!)} ${m[2]}`);
        assert.ok(forms.includes(`logbook:${newer.id} fork`));
        assert.ok(forms.includes(`logbook:${newer.id} rename`));
        assert.ok(forms.includes(`${PLANTED.id} fork`));
        assert.ok(!forms.includes(`${PLANTED.id} rename`));
        assert.ok(forms.includes(`logbook:${manifest.id} rename`));
        assert.ok(!forms.includes(`logbook:${manifest.id} fork`));
        assert.match(
          html,
          /<span class="warn">\[manifest run\]<\/span>\s*<strong id="title-3">Nightly audit/,
        );
      },
    );

    await t.step("the fork form comes back to the list, which names the fork", async () => {
      const response = await formPost(
        app,
        `/sessions/${encodeURIComponent(`logbook:${newer.id}`)}/fork?${Q}`,
      );
      assert.equal(response.status, 303);
      const location = response.headers.get("location") ?? "";
      const forked = /[?&]forked=([0-9a-f-]+)#session-\1$/.exec(location);
      assert.ok(forked, location);
      const html = await (await request(app, location.replace(/#.*/, ""))).text();
      assert.match(
        html,
        /role="status">Forked into a new logbook session, “Retry helper \(fork\)”/,
      );
      assert.match(html, new RegExp(`<li class="session" id="session-${forked[1]}">`));
    });

    await t.step(
      "the rename form rewrites the title; an empty one is refused on the page",
      async () => {
        const response = await formPost(app, `/sessions/${newer.id}/rename?${Q}`, {
          title: "Retry helper v2",
        });
        assert.equal(response.status, 303);
        const html =
          await (await request(app, response.headers.get("location")!.replace(/#.*/, "")))
            .text();
        assert.match(html, /role="status">Renamed to “Retry helper v2”/);
        const refused = await formPost(app, `/sessions/${newer.id}/rename?${Q}`, { title: " " });
        assert.equal(refused.status, 400);
        assert.match(
          await refused.text(),
          /role="alert">Invalid value for &quot;title&quot;: the title is empty/,
        );
      },
    );

    await t.step("a manifest run's fork form is refused with the reason", async () => {
      const response = await formPost(app, `/sessions/${manifest.id}/fork?${Q}`);
      assert.equal(response.status, 409);
      assert.match(await response.text(), /role="alert">Cannot fork session .*manifest run/);
    });

    await t.step("a form posted from another origin changes nothing", async () => {
      const before = sessionsOf(world).list(PROJECT.key).sessions.length;
      for (
        const headers of [
          { Origin: "http://127.0.0.1:3000" },
          { Origin: "null", "Sec-Fetch-Site": "cross-site" },
          { Origin: "null", "Sec-Fetch-Site": "same-site" },
          { Origin: "null" },
        ]
      ) {
        const response = await formPost(app, `/sessions/${newer.id}/fork?${Q}`, {}, headers);
        assert.equal(response.status, 403, JSON.stringify(headers));
        await response.body?.cancel();
      }
      assert.equal(sessionsOf(world).list(PROJECT.key).sessions.length, before);
    });

    await t.step("a project without sessions says so", async () => {
      const html = await (await request(app, `/sessions?project=${encodeURIComponent(world.home)}`))
        .text();
      assert.match(html, /No sessions in this project yet/);
    });
  } finally {
    await world.cleanup();
  }
});
