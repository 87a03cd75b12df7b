// Helpers for the dashboard tests: a captured world with a planted secret and HTML in it, the
// app built on it, and requests that carry the loopback Host and the token.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { loadContext } from "../../lib/context.ts";
import { stageMarkersFromEnv } from "../../lib/stage_markers.ts";
import { type AppDeps, createApp, type DashboardApp } from "../../servers/app.ts";
import { captureIo, makeWorld, type World } from "../_helpers.ts";
import { addToolHeavy } from "../_tool_heavy.ts";

/** An OpenAI-shaped key, built at run time so no file of the project holds one. */
export const SECRET = ["sk", "proj", "Zq4T" + "b7Xw9".repeat(5)].join("-");
/** The conversation planted with the secret, and words that find it. */
export const PLANTED = {
  sessionId: "5ec2e7a1-9d3b-4c2e-8f00-00000000beef",
  id: "claude:5ec2e7a1-9d3b-4c2e-8f00-00000000beef",
  cwd: "/home/dev/src/secretive",
  phrase: "walrus-sprocket",
  html: "<script>alert('walrus')</script>",
};
export const HOST = "127.0.0.1:8787";
export const TOKEN = "test-token-" + "0123456789abcdef".repeat(2);

/** The planted transcript: a question holding the secret and HTML, an answer, a title. */
function plantedLines(): string {
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: PLANTED.cwd,
    sessionId: PLANTED.sessionId,
    version: "2.1.40",
    gitBranch: "main",
  };
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: "user",
      uuid: "11111111-1111-4111-8111-111111111111",
      timestamp: "2026-09-20T10:00:00.000Z",
      message: {
        role: "user",
        content:
          `How do I rotate the ${PLANTED.phrase} key ${SECRET}? The page shows ${PLANTED.html}`,
      },
    },
    {
      ...base,
      parentUuid: "11111111-1111-4111-8111-111111111111",
      type: "assistant",
      uuid: "22222222-2222-4222-8222-222222222222",
      timestamp: "2026-09-20T10:00:05.000Z",
      message: {
        model: "claude-opus-4-6",
        id: "msg_01walrus",
        type: "message",
        role: "assistant",
        content: [{
          type: "text",
          text: `Revoke ${SECRET} first, then issue a new ${PLANTED.phrase} key.`,
        }],
      },
    },
    {
      type: "custom-title",
      customTitle: `${PLANTED.phrase} rotation ${SECRET}`,
      sessionId: PLANTED.sessionId,
    },
  ];
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/**
 * A world with the Claude fixtures and the planted conversation, captured; `toolHeavy` adds the
 * tool-heavy Claude and Codex conversations.
 */
export async function capturedWorld(
  options: { vars?: Record<string, string>; toolHeavy?: boolean } = {},
): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  if (options.toolHeavy) addToolHeavy(world);
  const dir = join(world.claude, "projects", "-home-dev-src-secretive");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, `${PLANTED.sessionId}.jsonl`), plantedLines());
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  if (options.vars) withVars(world, options.vars);
  return world;
}

/** Adds environment variables to a world. */
export function withVars(world: World, vars: Record<string, string>): void {
  Object.assign(world.vars, vars);
  const values = world.vars;
  world.env = { get: (name) => values[name] };
}

/** The app over `world`, with its stage markers in the world's data dir. */
export function appFor(world: World, deps: Partial<AppDeps> = {}): DashboardApp & {
  errors: unknown[];
} {
  const errors: unknown[] = [];
  const ctx = loadContext({ env: world.env });
  const built = createApp({
    ctx,
    token: TOKEN,
    hosts: [HOST, "localhost:8787"],
    markers: stageMarkersFromEnv(world.env, { onStall: () => {} }),
    onError: (err) => errors.push(err),
    ...deps,
  });
  return { ...built, errors };
}

/** A request as the browser on this machine sends it: loopback Host and the bearer token. */
export function request(
  app: DashboardApp["app"],
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  return Promise.resolve(app.request(`http://${HOST}${path}`, {
    ...init,
    headers: { Host: HOST, Authorization: `Bearer ${TOKEN}`, ...init.headers },
  }));
}

/** A JSON POST. */
export function post(app: DashboardApp["app"], path: string, body: unknown): Promise<Response> {
  return request(app, path, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  });
}

/** Asserts the error shape and returns it. */
export async function assertError(
  response: Response,
  status: number,
  code: string,
  field?: string,
): Promise<{ code: string; message: string; field?: string }> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const body = JSON.parse(text);
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, "string");
  assert.ok(body.error.message.length > 0);
  assert.doesNotMatch(body.error.message, /\n\s+at /, "no stack trace");
  if (field !== undefined) {
    assert.equal(body.error.field, field, body.error.message);
    assert.ok(body.error.message.includes(field), `the message names "${field}"`);
  }
  return body.error;
}
