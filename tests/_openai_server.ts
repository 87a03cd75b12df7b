// A small OpenAI-compatible server for tests: `/v1/chat/completions` on loopback, streaming (SSE
// `data:` lines and `[DONE]`) and not, answering as a model other than the one asked for.

import { join } from "node:path";
import { makeWorld, type World } from "./_helpers.ts";

/** One request the server received, exactly as sent. */
export interface ReceivedRequest {
  body: string;
  json: {
    model: string;
    stream?: boolean;
    messages: { role: string; content: string }[];
    stream_options?: { include_usage?: boolean };
  };
  authorization: string | null;
}

/** How the server answers. */
export interface ServerOptions {
  /** The reply text for a request (default: `Echo: <last user message>`). */
  reply?: (request: ReceivedRequest["json"]) => string;
  /** The model name the replies say answered (default `loopback-answerer-7b`). */
  answeredBy?: string;
  /** Answer every request with this HTTP status and an OpenAI-style error body instead. */
  failWith?: { status: number; message: string };
  /** Waits this long (ms) between streamed pieces, so a test can interrupt a reply. */
  pieceDelayMs?: number;
  /** Waits this long (ms) before answering at all. */
  delayMs?: number;
  /** The finish reason of a reply (default `stop`; `length` means cut off by the provider). */
  finishReason?: (request: ReceivedRequest["json"]) => string;
}

/** A running test server. */
export interface OpenAiServer {
  /** The base URL to give the client (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  requests: ReceivedRequest[];
  options: ServerOptions;
  close(): Promise<void>;
}

/** The model name the server says answered unless told otherwise. */
export const ANSWERED_BY = "loopback-answerer-7b";

/** Starts the server on 127.0.0.1, port 0 (any free port). */
export function startOpenAiServer(options: ServerOptions = {}): OpenAiServer {
  const requests: ReceivedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
        return Response.json({ error: { message: "Not found" } }, { status: 404 });
      }
      const body = await req.text();
      const json = JSON.parse(body) as ReceivedRequest["json"];
      const received = { body, json, authorization: req.headers.get("authorization") };
      requests.push(received);
      const o = handle.options;
      if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
      if (o.failWith) {
        return Response.json(
          { error: { message: o.failWith.message, type: "invalid_request_error" } },
          { status: o.failWith.status },
        );
      }
      const last = [...json.messages].reverse().find((m) => m.role === "user");
      const text = o.reply ? o.reply(json) : `Echo: ${last?.content ?? ""}`;
      const finish = o.finishReason ? o.finishReason(json) : "stop";
      const model = o.answeredBy ?? ANSWERED_BY;
      const tokensIn = json.messages.reduce((n, m) => n + words(m.content), 0);
      const usage = {
        prompt_tokens: tokensIn,
        completion_tokens: words(text),
        total_tokens: tokensIn + words(text),
      };
      const id = `chatcmpl-${requests.length}`;
      const created = Math.floor(Date.now() / 1000);
      if (!json.stream) {
        return Response.json({
          id,
          object: "chat.completion",
          created,
          model,
          choices: [{
            index: 0,
            message: { role: "assistant", content: text },
            finish_reason: finish,
          }],
          usage,
        });
      }
      const pieces = text.match(/[\s\S]{1,7}/g) ?? [];
      const encoder = new TextEncoder();
      const delay = o.pieceDelayMs ?? 0;
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          const send = (data: unknown) =>
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(data)}\n\n`));
          const chunk = (delta: Record<string, string>, finish: string | null) => ({
            id,
            object: "chat.completion.chunk",
            created,
            model,
            choices: [{ index: 0, delta, finish_reason: finish }],
          });
          try {
            send(chunk({ role: "assistant", content: "" }, null));
            for (const piece of pieces) {
              if (delay) await new Promise((r) => setTimeout(r, delay));
              send(chunk({ content: piece }, null));
            }
            send(chunk({}, finish));
            if (json.stream_options?.include_usage) {
              send({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
            }
            controller.enqueue(encoder.encode("data: [DONE]\n\n"));
            controller.close();
          } catch {
            // The client went away mid-reply (a cancelled turn): nothing more to send.
          }
        },
      });
      return new Response(stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    },
  );
  const handle: OpenAiServer = {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    requests,
    options,
    close: async () => {
      await server.shutdown();
    },
  };
  return handle;
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** A temp world with a project directory and a running server its variables point at. */
export interface ModelWorld {
  world: World;
  server: OpenAiServer;
  /** The world's variables with INIT_CWD, OPENAI_BASE_URL and LOGBOOK_MODEL set. */
  vars: Record<string, string>;
  project: string;
}

/** Runs `fn` in a fresh ModelWorld and cleans it up afterwards. */
export async function withModelWorld(fn: (s: ModelWorld) => Promise<void>): Promise<void> {
  const world = await makeWorld();
  const server = startOpenAiServer();
  try {
    const project = join(world.dir, "project");
    Deno.mkdirSync(project);
    const vars = {
      ...world.vars,
      INIT_CWD: project,
      OPENAI_BASE_URL: server.baseUrl,
      LOGBOOK_MODEL: "asked-model",
    };
    await fn({ world, server, vars, project });
  } finally {
    await server.close();
    await world.cleanup();
  }
}
