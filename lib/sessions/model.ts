// Talking to an OpenAI-compatible model through the `openai` package: one completion, streamed or
// not, with its usage, the model that answered and why it stopped; failures as clear errors.

import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai";
import type { Config } from "../config.ts";
import { redactSecrets } from "../gate/secrets.ts";

/** Where to reach the model, from config (which already maps the environment variables). */
export interface ModelSettings {
  /** `OPENAI_BASE_URL` or config `baseUrl`; OpenAI's own endpoint when absent. */
  baseUrl?: string;
  /** `OPENAI_API_KEY` or config `apiKey`. */
  apiKey?: string;
  /** `LOGBOOK_MODEL` or config `model`. */
  model?: string;
}

/** One message of a request. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What the endpoint answered. */
export interface Completion {
  text: string;
  /** Prompt tokens, when the endpoint reported usage. */
  tokensIn: number | null;
  /** Completion tokens, when the endpoint reported usage. */
  tokensOut: number | null;
  /** The model the request asked for. */
  requested: string;
  /** The model the endpoint says answered (it may differ from the one asked for). */
  answeredBy: string | null;
  /** `stop`, `length` (cut off by the provider), … or null when none was given. */
  finishReason: string | null;
}

/** Why a model call failed. */
export type ModelFailure = "config" | "unreachable" | "refused" | "cancelled" | "invalid";

/** A model call that failed; the message never holds the API key. */
export class ModelError extends Error {
  override name = "ModelError";
  readonly reason: ModelFailure;
  /** The HTTP status, when the endpoint answered with one. */
  readonly status: number | undefined;

  constructor(message: string, reason: ModelFailure, options: { status?: number } = {}) {
    super(message);
    this.reason = reason;
    this.status = options.status;
  }
}

/** Options of one completion. */
export interface CompleteOptions {
  /** Stream the reply (default true); `onText` receives each piece as it arrives. */
  stream?: boolean;
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

/** A configured model endpoint. */
export interface ModelClient {
  /** The model name requests ask for. */
  readonly model: string;
  /** The endpoint, without credentials, for messages. */
  readonly endpoint: string;
  complete(messages: readonly ChatMessage[], options?: CompleteOptions): Promise<Completion>;
}

/** Client options beyond the settings: an injected `fetch`, retries and a timeout. */
export interface ModelClientOptions {
  fetch?: typeof fetch;
  /** Retries of a failed request (default 1). */
  maxRetries?: number;
  /** Milliseconds before a request is given up (default 10 minutes). */
  timeoutMs?: number;
  /** The config file a missing model should be set in, named by the error that says so. */
  configFile?: string;
}

const OPENAI_ENDPOINT = "https://api.openai.com/v1";

/** The model settings of a resolved config. */
export function modelSettings(config: Config): ModelSettings {
  const out: ModelSettings = {};
  if (config.baseUrl !== undefined) out.baseUrl = config.baseUrl;
  if (config.apiKey !== undefined) out.apiKey = config.apiKey;
  if (config.model !== undefined) out.model = config.model;
  return out;
}

/** What to add where when no model is named: the lines, ready to paste. */
function noModelMessage(settings: ModelSettings, configFile: string): string {
  const model = '  "model": "<the model\'s name at that endpoint>"';
  if (settings.baseUrl !== undefined) {
    return `No model configured: add this line to ${configFile} (inside its { }):\n${model}\n` +
      "or set the variable LOGBOOK_MODEL";
  }
  return `No model configured: add these two lines to ${configFile} (inside its { }):\n` +
    `  "baseUrl": "http://127.0.0.1:8080/v1",\n${model}\n` +
    "with your endpoint's address, or set the variables OPENAI_BASE_URL and LOGBOOK_MODEL";
}

/**
 * A client for the configured endpoint. Throws ModelError (reason `config`) when no model is
 * named, or when OpenAI's own endpoint would be used without a key.
 *
 * @example
 * const model = createModelClient({ baseUrl: "http://127.0.0.1:8080/v1", model: "qwen" });
 * const { text, answeredBy } = await model.complete([{ role: "user", content: "Hi" }]);
 */
export function createModelClient(
  settings: ModelSettings,
  options: ModelClientOptions = {},
): ModelClient {
  const model = settings.model?.trim();
  if (!model) {
    throw new ModelError(noModelMessage(settings, options.configFile ?? "config.json"), "config");
  }
  const baseURL = settings.baseUrl ?? OPENAI_ENDPOINT;
  const apiKey = settings.apiKey;
  if (settings.baseUrl === undefined && !apiKey) {
    throw new ModelError(
      'No model endpoint configured: set "baseUrl" in config.json or OPENAI_BASE_URL ' +
        "(and an API key, OPENAI_API_KEY, if the endpoint needs one)",
      "config",
    );
  }
  const endpoint = publicEndpoint(baseURL);
  const client = new OpenAI({
    baseURL,
    // A local endpoint may need no key: the client insists on one, so the header is dropped.
    apiKey: apiKey || "unused",
    ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    maxRetries: options.maxRetries ?? 1,
    timeout: options.timeoutMs ?? 600_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const clean = (text: string) => sanitize(text, apiKey);

  return {
    model,
    endpoint,
    async complete(messages, callOptions = {}) {
      const request = { model, messages: messages.map((m) => ({ ...m })) };
      try {
        return callOptions.stream === false
          ? await completeWhole(client, request, callOptions)
          : await completeStreamed(client, request, callOptions);
      } catch (err) {
        throw translate(err, endpoint, clean, callOptions.signal);
      }
    },
  };
}

/** One request of a completion: the model asked for and the messages. */
interface CompletionRequest {
  model: string;
  messages: ChatMessage[];
}

/** The completion of `request` in one reply, handed to `onText` whole. */
async function completeWhole(
  client: OpenAI,
  request: CompletionRequest,
  { onText, signal }: CompleteOptions,
): Promise<Completion> {
  const reply = await client.chat.completions.create(
    { ...request, stream: false },
    signal ? { signal } : {},
  );
  const choice = reply.choices[0];
  const text = choice?.message?.content ?? "";
  if (text) onText?.(text);
  return {
    text,
    tokensIn: reply.usage?.prompt_tokens ?? null,
    tokensOut: reply.usage?.completion_tokens ?? null,
    requested: request.model,
    answeredBy: reply.model || null,
    finishReason: choice?.finish_reason ?? null,
  };
}

/** The completion of `request` streamed, each piece handed to `onText` as it arrives. */
async function completeStreamed(
  client: OpenAI,
  request: CompletionRequest,
  { onText, signal }: CompleteOptions,
): Promise<Completion> {
  const stream = await client.chat.completions.create(
    { ...request, stream: true, stream_options: { include_usage: true } },
    signal ? { signal } : {},
  );
  const parts: string[] = [];
  let answeredBy: string | null = null;
  let finishReason: string | null = null;
  let tokensIn: number | null = null;
  let tokensOut: number | null = null;
  for await (const chunk of stream) {
    if (chunk.model) answeredBy = chunk.model;
    if (chunk.usage) {
      tokensIn = chunk.usage.prompt_tokens ?? null;
      tokensOut = chunk.usage.completion_tokens ?? null;
    }
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta?.content;
      if (delta) {
        parts.push(delta);
        onText?.(delta);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  // The client ends the iteration quietly when the signal aborts it mid-reply.
  if (signal?.aborted) throw new ModelError("The model request was cancelled", "cancelled");
  return {
    text: parts.join(""),
    tokensIn,
    tokensOut,
    requested: request.model,
    answeredBy,
    finishReason,
  };
}

/** A ModelError for whatever the client threw; other errors are rethrown as they are. */
function translate(
  err: unknown,
  endpoint: string,
  clean: (text: string) => string,
  signal: AbortSignal | undefined,
): unknown {
  if (err instanceof ModelError) return err;
  if (err instanceof APIUserAbortError || (signal?.aborted && isAbort(err))) {
    return new ModelError("The model request was cancelled", "cancelled");
  }
  if (err instanceof APIConnectionTimeoutError) {
    return new ModelError(`The model endpoint "${endpoint}" did not answer in time`, "unreachable");
  }
  if (err instanceof APIConnectionError) {
    return new ModelError(
      `Cannot reach the model endpoint "${endpoint}": ${clean(rootCause(err))}`,
      "unreachable",
    );
  }
  if (err instanceof APIError) {
    const status = typeof err.status === "number" ? err.status : undefined;
    const detail = clean(apiMessage(err));
    return new ModelError(
      `The model endpoint "${endpoint}" refused the request${status ? ` (HTTP ${status})` : ""}${
        detail ? `: ${detail}` : ""
      }`,
      "refused",
      status === undefined ? {} : { status },
    );
  }
  if (err instanceof SyntaxError || (err instanceof Error && err.name === "OpenAIError")) {
    return new ModelError(
      `The model endpoint "${endpoint}" sent a reply that could not be read: ${clean(err.message)}`,
      "invalid",
    );
  }
  return err;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || /abort/i.test(err.message));
}

/** The innermost cause's message, the one that says what went wrong on the wire. */
function rootCause(err: Error): string {
  let current: unknown = err;
  let message = err.message;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  if (/connection refused|ECONNREFUSED/i.test(message)) return "connection refused";
  return message.replace(/\s+/g, " ").trim() || "connection failed";
}

/** The error text the endpoint sent, without the status the client puts in front. */
function apiMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  const text = typeof body?.message === "string" ? body.message : err.message;
  return text.replace(/^\d{3}\s+/, "").replace(/\s+/g, " ").trim().slice(0, 300);
}

/** The endpoint as shown in messages: no user, password, query or fragment. */
export function publicEndpoint(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = "";
    url.password = "";
    url.search = "";
    url.hash = "";
    return url.toString().replace(/\/$/, "");
  } catch {
    return "(invalid URL)";
  }
}

/** Removes the key, and anything shaped like a secret, from a text bound for a message. */
function sanitize(text: string, apiKey: string | undefined): string {
  let out = text;
  if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join("[REDACTED:api-key]");
  return redactSecrets(out);
}
