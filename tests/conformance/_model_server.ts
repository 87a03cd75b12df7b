// The conformance suite's model: a loopback server speaking the four APIs the agents use
// (Anthropic Messages for Claude Code, OpenAI Responses for Codex, Chat Completions for
// OpenCode, Copilot, Qwen Code, Continue and Kilo, the Gemini API for Gemini CLI), streamed and
// not, answering from a script instead of a model.
//
// Every request is reduced to one shape (the texts and tool results in order), and the script
// decides: the newest user text naming one of its plans picks that plan; the tool results after
// it say which step comes next; once every step has its result the plan's answer is given. A
// request that asks for a title, or for a summary of the conversation (a compaction), gets the
// script's title or summary. A request in JSON mode (a response schema, as Gemini CLI's routing
// and next-speaker checks send) gets an object of that schema. Anything else gets a short
// acknowledgement.

/** One thing the model asks the agent to do. */
export type Step =
  | { kind: "shell"; command: string }
  | { kind: "read"; path: string }
  | { kind: "subagent"; description: string; prompt: string }
  /** Waits for the subagent the previous step spawned (Codex's `wait_agent`). */
  | { kind: "wait" };

/** What the model does when a user text holds `id`: the steps in order, then the answer. */
export interface Plan {
  /** A word only this plan's prompt holds. */
  id: string;
  steps: Step[];
  answer: string;
  /**
   * Input tokens to report for this plan's replies (default: a few hundred). A large number
   * makes an agent that compacts by its context window compact on the next turn.
   */
  reportTokens?: number;
}

/** The whole script of one run. */
export interface Script {
  plans: Plan[];
  /** The answer to a request for a conversation's title. */
  title: string;
  /** The answer to a request for a summary of the conversation so far. */
  summary: string;
}

/** A request as the model sees it, whatever the API. */
export interface Exchange {
  api: "anthropic" | "responses" | "chat" | "gemini";
  /** System and developer text. */
  system: string;
  /** The conversation in order. */
  entries: Entry[];
  /** The names of the tools offered. */
  tools: string[];
  /** The namespace each namespaced tool is offered in (Codex's `multi_agent_v1`). */
  namespaces: Record<string, string>;
  /** The argument names each tool's schema declares (to name a path the way the tool does). */
  params: Record<string, string[]>;
  stream: boolean;
  model: string;
  /** The schema a JSON-mode request wants its answer in (Gemini's `responseSchema`). */
  schema?: unknown;
  /**
   * The one tool a request obliges the model to call, and its arguments' schema (Qwen Code's
   * auto-mode classifier: `tool_choice: "required"` and one tool, `respond_in_schema`).
   */
  forced?: { name: string; schema: unknown };
}

export type Entry =
  | { type: "text"; role: "user" | "assistant"; text: string }
  | { type: "tool_call"; name: string }
  | { type: "tool_result"; text: string };

/** A reply before it is put into one API's shape. */
export type Reply =
  | { type: "text"; text: string; tokens: number }
  | { type: "tool"; name: string; input: Record<string, unknown>; tokens: number };

/** What the server saw: one line per request, and every attempt to reach another host. */
export interface Recorded {
  method: string;
  path: string;
  api: Exchange["api"] | null;
  /** The reply given: a tool name, `text`, `title`, `summary`, `json`, or `ack`. */
  answered: string;
  body: string;
}

/** A running model server. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>` (no path). */
  origin: string;
  /** A proxy that refuses and records every connection (`http://127.0.0.1:<port>`). */
  proxy: string;
  requests: Recorded[];
  /** `CONNECT host:port` or `GET http://host/…` lines an agent sent to the proxy. */
  strayConnections: string[];
  script: Script;
  close(): Promise<void>;
}

const DEFAULT_TOKENS = 320;

/** `/v1beta/models/<model>:generateContent` or `:streamGenerateContent` (any API version). */
const GEMINI_ROUTE = /^\/v1[\w]*\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** Starts the server and the recording proxy on 127.0.0.1, on free ports. */
export function startModelServer(script: Script, log?: string): ModelServer {
  const requests: Recorded[] = [];
  const strayConnections: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const body = req.method === "POST" ? await req.text() : "";
      const record = (api: Recorded["api"], answered: string) => {
        const line = { method: req.method, path: url.pathname, api, answered, body };
        requests.push(line);
        if (log) Deno.writeTextFileSync(log, JSON.stringify(line) + "\n", { append: true });
      };
      const path = url.pathname.replace(/^\/v1(?=\/)/, "");
      if (req.method === "GET" && path === "/models") {
        record(null, "models");
        return Response.json({
          object: "list",
          data: [{ id: "conformance-model", object: "model", created: 0, owned_by: "logbook" }],
        });
      }
      if (req.method === "HEAD" || (req.method === "GET" && path === "/")) {
        record(null, "ping");
        return new Response(null, { status: 200 });
      }
      if (req.method !== "POST") {
        record(null, "not found");
        return Response.json({ error: { message: "Not found" } }, { status: 404 });
      }
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(body);
      } catch {
        record(null, "bad json");
        return Response.json({ error: { message: "Body is not JSON" } }, { status: 400 });
      }
      if (path === "/messages/count_tokens") {
        record("anthropic", "count_tokens");
        return Response.json({ input_tokens: Math.ceil(body.length / 4) });
      }
      const gemini = GEMINI_ROUTE.exec(url.pathname);
      const api = path === "/messages"
        ? "anthropic"
        : path === "/responses"
        ? "responses"
        : path === "/chat/completions"
        ? "chat"
        : gemini
        ? "gemini"
        : null;
      if (!api) {
        record(null, "not found");
        return Response.json({ error: { message: `No route ${url.pathname}` } }, { status: 404 });
      }
      const exchange = exchangeOf(api, json);
      if (gemini) {
        // The model and whether it streams are in the path, not the body.
        exchange.model = gemini[1]!;
        exchange.stream = gemini[2] === "streamGenerateContent";
      }
      const reply = decide(script, exchange);
      record(api, reply.answered);
      return respond(exchange, reply.reply, url.searchParams.get("alt") === "sse");
    },
  );
  const proxyListener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const proxyLoop = (async () => {
    for await (const conn of proxyListener) refuse(conn, strayConnections);
  })().catch(() => {});
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    proxy: `http://127.0.0.1:${(proxyListener.addr as Deno.NetAddr).port}`,
    requests,
    strayConnections,
    script,
    async close() {
      proxyListener.close();
      await proxyLoop;
      await server.shutdown();
    },
  };
}

/** Records the request line a client sent to the proxy, refuses it and hangs up. */
async function refuse(conn: Deno.Conn, seen: string[]): Promise<void> {
  try {
    const buffer = new Uint8Array(4096);
    const n = await conn.read(buffer);
    const head = new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0] ?? "";
    // A client that connected and hung up without a word (a pooled connection opened ahead, a
    // race lost) asked for no host: nothing to record.
    if (head.trim()) seen.push(head.split(" ").slice(0, 2).join(" "));
    await conn.write(
      new TextEncoder().encode(
        "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
      ),
    );
  } catch {
    // A client that hung up first.
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

// ---- reading requests ----

function texts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const block of content) {
    if (typeof block === "string") out.push(block);
    else if (block && typeof block === "object") {
      const b = block as Record<string, unknown>;
      if (typeof b.text === "string" && b.type !== "tool_result") out.push(b.text);
    }
  }
  return out;
}

/** The request reduced to system text, entries in order and tool names. */
export function exchangeOf(api: Exchange["api"], json: Record<string, unknown>): Exchange {
  const entries: Entry[] = [];
  const system: string[] = [];
  const params = paramsOf(json.tools);
  const tools = toolNames(json.tools);
  const namespaces = namespacesOf(json.tools);
  const model = typeof json.model === "string" ? json.model : "conformance-model";
  const stream = json.stream === true;
  let schema: unknown;
  const only = declarations(json.tools);
  const forced = json.tool_choice === "required" && only.length === 1 &&
      typeof only[0]!.name === "string"
    ? { name: only[0]!.name, schema: only[0]!.parameters ?? only[0]!.input_schema }
    : undefined;
  if (api === "gemini") {
    const config = (json.generationConfig ?? {}) as Record<string, unknown>;
    schema = config.responseJsonSchema ?? config.responseSchema;
    system.push(...texts(asRecord(json.systemInstruction).parts));
    for (const content of asList(json.contents)) {
      const role = content.role === "model" ? "assistant" : "user";
      const said: string[] = [];
      for (const part of asList(content.parts)) {
        const call = asRecord(part.functionCall);
        const response = part.functionResponse ? asRecord(part.functionResponse) : null;
        if (typeof call.name === "string") entries.push({ type: "tool_call", name: call.name });
        if (response) {
          entries.push({ type: "tool_result", text: JSON.stringify(response.response ?? null) });
        }
        if (typeof part.text === "string" && part.thought !== true) said.push(part.text);
      }
      if (said.length) entries.push({ type: "text", role, text: said.join("\n") });
    }
  } else if (api === "anthropic") {
    system.push(...texts(json.system));
    for (const m of asList(json.messages)) {
      const role = m.role;
      if (role === "system") {
        system.push(...texts(m.content));
        continue;
      }
      const blocks = Array.isArray(m.content) ? m.content as Record<string, unknown>[] : [];
      for (const b of blocks) {
        if (b?.type === "tool_use") entries.push({ type: "tool_call", name: String(b.name) });
        if (b?.type === "tool_result") {
          entries.push({ type: "tool_result", text: texts(b.content).join("\n") });
        }
      }
      const said = texts(m.content).join("\n");
      if (said && (role === "user" || role === "assistant")) {
        entries.push({ type: "text", role, text: said });
      }
    }
  } else if (api === "responses") {
    system.push(...texts(json.instructions));
    for (const item of asList(json.input)) {
      if (item.type === "message" || (item.type === undefined && item.role)) {
        const said = texts(item.content).join("\n");
        if (item.role === "developer" || item.role === "system") system.push(said);
        else if (item.role === "user" || item.role === "assistant") {
          entries.push({ type: "text", role: item.role, text: said });
        }
      } else if (item.type === "function_call" || item.type === "custom_tool_call") {
        entries.push({ type: "tool_call", name: String(item.name) });
      } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
        const output = item.output;
        entries.push({
          type: "tool_result",
          text: typeof output === "string" ? output : texts(output).join("\n"),
        });
      }
    }
  } else {
    for (const m of asList(json.messages)) {
      const said = texts(m.content).join("\n");
      if (m.role === "system") system.push(said);
      else if (m.role === "tool") entries.push({ type: "tool_result", text: said });
      else if (m.role === "user" || m.role === "assistant") {
        for (const call of asList(m.tool_calls)) {
          const fn = call.function as Record<string, unknown> | undefined;
          entries.push({ type: "tool_call", name: String(fn?.name ?? "") });
        }
        if (said) entries.push({ type: "text", role: m.role, text: said });
      }
    }
  }
  return {
    api,
    system: system.join("\n"),
    entries,
    tools,
    namespaces,
    params,
    stream,
    model,
    ...(schema === undefined ? {} : { schema }),
    ...(forced ? { forced } : {}),
  };
}

function asList(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => !!v && typeof v === "object")
    : [];
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

/** Every tool offered, whatever the API's wrapping (Gemini's `functionDeclarations` too). */
function declarations(tools: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const tool of asList(tools)) {
    if (tool.function) out.push(asRecord(tool.function));
    else if (!tool.functionDeclarations) out.push(tool);
    out.push(...asList(tool.functionDeclarations), ...asList(tool.tools));
  }
  return out;
}

function paramsOf(tools: unknown): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const tool of declarations(tools)) {
    if (typeof tool.name !== "string") continue;
    const schema = asRecord(
      tool.parameters ?? tool.parametersJsonSchema ?? tool.input_schema ?? tool.inputSchema,
    );
    found[tool.name] = Object.keys(asRecord(schema.properties));
  }
  return found;
}

function namespacesOf(tools: unknown): Record<string, string> {
  const found: Record<string, string> = {};
  for (const tool of asList(tools)) {
    if (tool.type !== "namespace" || typeof tool.name !== "string") continue;
    for (const inner of asList(tool.tools)) {
      if (typeof inner.name === "string") found[inner.name] = tool.name;
    }
  }
  return found;
}

function toolNames(tools: unknown): string[] {
  return declarations(tools).map((t) => t.name).filter((n): n is string => typeof n === "string");
}

// ---- deciding ----

const TITLE_REQUEST =
  /title generator|generate a (?:brief |short |concise )?title|(?:thread|session) title/i;
const SUMMARY_REQUEST = /summar(?:y|ize|ise)|compact/i;

/** What the script answers to one exchange, and a word saying which answer it was. */
export function decide(script: Script, exchange: Exchange): { reply: Reply; answered: string } {
  if (exchange.forced) {
    const { name, schema } = exchange.forced;
    const input = shaped(schema) as Record<string, unknown>;
    return { reply: { type: "tool", name, input, tokens: DEFAULT_TOKENS }, answered: name };
  }
  if (exchange.schema !== undefined) {
    return {
      reply: {
        type: "text",
        text: JSON.stringify(shaped(exchange.schema)),
        tokens: DEFAULT_TOKENS,
      },
      answered: "json",
    };
  }
  const lastUser = [...exchange.entries].reverse().find((e) => e.type === "text");
  const planOf = (text: string) => script.plans.find((p) => text.includes(p.id));
  const lastText = lastUser?.type === "text" ? lastUser.text : "";
  if (
    (TITLE_REQUEST.test(exchange.system) || TITLE_REQUEST.test(lastText)) &&
    exchange.entries.every((e) => e.type === "text")
  ) {
    return {
      reply: { type: "text", text: script.title, tokens: DEFAULT_TOKENS },
      answered: "title",
    };
  }
  // A summarizer is offered no tools (OpenCode quotes the whole conversation, plan words and
  // all); an agent that keeps its tools asks in a user text of its own (Claude Code, Codex).
  const summarizer = exchange.tools.length === 0 &&
    (SUMMARY_REQUEST.test(exchange.system) || SUMMARY_REQUEST.test(lastText));
  const asked = lastUser?.type === "text" && lastUser.role === "user" && !planOf(lastText) &&
    SUMMARY_REQUEST.test(lastText);
  if (summarizer || asked) {
    return {
      reply: { type: "text", text: script.summary, tokens: DEFAULT_TOKENS },
      answered: "summary",
    };
  }
  let at = -1;
  let plan: Plan | undefined;
  for (let i = exchange.entries.length - 1; i >= 0; i--) {
    const entry = exchange.entries[i]!;
    if (entry.type !== "text" || entry.role !== "user") continue;
    plan = planOf(entry.text);
    if (plan) {
      at = i;
      break;
    }
  }
  if (!plan) {
    return { reply: { type: "text", text: "Noted.", tokens: DEFAULT_TOKENS }, answered: "ack" };
  }
  const tokens = plan.reportTokens ?? DEFAULT_TOKENS;
  const done = exchange.entries.slice(at + 1).filter((e) => e.type === "tool_result").length;
  const step = plan.steps[done];
  if (!step) {
    // Gemini CLI's subagents end only by calling `complete_task` with their answer.
    const finished = exchange.entries.slice(at + 1)
      .some((e) => e.type === "tool_call" && e.name === "complete_task");
    if (exchange.tools.includes("complete_task") && !finished) {
      const input = { result: { response: plan.answer } };
      return {
        reply: { type: "tool", name: "complete_task", input, tokens },
        answered: "complete_task",
      };
    }
    return { reply: { type: "text", text: plan.answer, tokens }, answered: "text" };
  }
  const lastResult = [...exchange.entries].reverse().find((e) => e.type === "tool_result");
  const call = toolCall(step, exchange, lastResult?.type === "tool_result" ? lastResult.text : "");
  return { reply: { type: "tool", ...call, tokens }, answered: call.name };
}

/** The tool call a step is, in the tool names and argument shapes the agent offered. */
function toolCall(
  step: Step,
  exchange: Exchange,
  lastResult: string,
): { name: string; input: Record<string, unknown> } {
  const has = (name: string) => exchange.tools.includes(name);
  const pick = (...names: string[]) => names.find(has) ?? names[0]!;
  if (step.kind === "wait") {
    // The spawn's result names the new agent: `{"agent_id": "…"}` or its thread's UUID.
    const id = /"(?:agent_id|id|thread_id)"\s*:\s*"([^"]+)"/.exec(lastResult)?.[1] ??
      /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(lastResult)?.[0] ??
      lastResult.trim();
    return { name: "wait_agent", input: { targets: [id], timeout_ms: 60000 } };
  }
  if (step.kind === "subagent") {
    if (exchange.api === "anthropic") {
      return {
        name: pick("Agent", "Task"),
        input: {
          description: step.description,
          prompt: step.prompt,
          subagent_type: subagentType(exchange.system) ?? "general-purpose",
          run_in_background: false,
        },
      };
    }
    if (exchange.api === "responses") {
      return { name: "spawn_agent", input: { message: step.prompt } };
    }
    return subagentCall(step, exchange);
  }
  const command = step.kind === "shell" ? step.command : `cat ${shellWord(step.path)}`;
  if (exchange.api === "chat" || exchange.api === "gemini") {
    // Each agent names its tools its own way (OpenCode and Kilo `read`, Gemini CLI and Qwen Code
    // `read_file`, Continue `Read`, Copilot `view`); the argument is named as its schema says.
    // Cline reads several files in one call: `read_files` with `files: [{path}]`.
    if (step.kind === "read" && has("read_files")) {
      return { name: "read_files", input: { files: [{ path: step.path }] } };
    }
    const read = step.kind === "read" && READ_TOOLS.find(has);
    if (read) {
      const key = PATH_PARAMS.find((p) => exchange.params[read]?.includes(p)) ?? "filePath";
      return { name: read, input: { [key]: step.path } };
    }
    const shell = SHELL_TOOLS.find(has) ?? "bash";
    return { name: shell, input: { command, description: "Run a command in the project" } };
  }
  if (exchange.api === "anthropic") {
    if (step.kind === "read" && has("Read")) {
      return { name: "Read", input: { file_path: step.path } };
    }
    return { name: "Bash", input: { command, description: "Run a command in the project" } };
  }
  if (has("exec_command")) return { name: "exec_command", input: { cmd: command } };
  return { name: "shell", input: { command: ["bash", "-lc", command] } };
}

/** Tools that read one file, in the order they are preferred. */
const READ_TOOLS = ["read", "read_file", "Read", "view"];
/** What those tools call the file's path. */
const PATH_PARAMS = ["filePath", "file_path", "filepath", "absolute_path", "path"];
/** Tools that run a shell command. */
const SHELL_TOOLS = ["bash", "run_shell_command", "Bash", "shell"];

/**
 * A value of the JSON schema `schema` (OpenAPI's upper-case types too): the first of each enum,
 * every property of an object, a placeholder for each scalar.
 */
export function shaped(schema: unknown): unknown {
  const s = asRecord(schema);
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const anyOf = asList(s.anyOf ?? s.oneOf);
  if (anyOf.length) return shaped(anyOf[0]);
  const type = String(Array.isArray(s.type) ? s.type[0] : s.type ?? "object").toLowerCase();
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(asRecord(s.properties))) out[key] = shaped(value);
      return out;
    }
    case "array":
      return [];
    case "string":
      return "conformance";
    case "integer":
    case "number":
      // Gemini CLI's router wants a score "from 1-100" without saying so in `minimum`.
      return typeof s.minimum === "number" ? s.minimum : 1;
    case "boolean":
      return false;
    default:
      return null;
  }
}

/**
 * A subagent on Chat Completions or the Gemini API, in the offered tool's own arguments:
 * Gemini CLI's `invoke_agent` (an agent name), Copilot's `task` (a name, an `agent_type`, run
 * in the foreground), Qwen Code's `agent` (in the foreground too), and OpenCode's and Kilo's
 * `task` (a `subagent_type`).
 */
function subagentCall(
  step: Extract<Step, { kind: "subagent" }>,
  exchange: Exchange,
): { name: string; input: Record<string, unknown> } {
  // Cline's `spawn_agent` takes the helper's system prompt and its task.
  if (exchange.tools.includes("spawn_agent") && !exchange.tools.includes("task")) {
    return {
      name: "spawn_agent",
      input: { systemPrompt: "You are a helper: do the task.", task: step.prompt },
    };
  }
  const name = ["task", "agent", "invoke_agent"].find((t) => exchange.tools.includes(t)) ?? "task";
  const params = exchange.params[name] ?? [];
  if (params.includes("agent_name")) {
    return { name, input: { agent_name: "generalist", prompt: step.prompt } };
  }
  const input: Record<string, unknown> = { description: step.description, prompt: step.prompt };
  if (params.includes("agent_type")) {
    Object.assign(input, { name: "helper", agent_type: "general-purpose", mode: "sync" });
  } else input.subagent_type = name === "agent" ? "general-purpose" : "general";
  // Qwen Code runs its agents in the background unless told not to.
  if (params.includes("run_in_background")) input.run_in_background = false;
  return { name, input };
}

/** The first subagent type Claude Code lists in its system prompt, if it lists any. */
function subagentType(system: string): string | null {
  const list = /Available agent types for the (?:Agent|Task) tool:\s*\n-\s*([\w.-]+):/.exec(system);
  return list?.[1] ?? null;
}

function shellWord(word: string): string {
  return /^[\w./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

// ---- answering ----

let counter = 0;
const id = (prefix: string) => `${prefix}_conformance${(++counter).toString().padStart(6, "0")}`;

function respond(exchange: Exchange, reply: Reply, alt = false): Response {
  switch (exchange.api) {
    case "gemini": {
      if (!exchange.stream) return Response.json(geminiResponse(exchange, reply, true));
      const chunks = geminiChunks(exchange, reply);
      // `?alt=sse` streams server-sent events; without it the stream is one JSON array.
      return alt ? sse(chunks, "data") : jsonArray(chunks);
    }
    case "anthropic":
      return exchange.stream ? sse(anthropicEvents(exchange, reply)) : Response.json(
        anthropicMessage(exchange, reply),
      );
    case "responses":
      return exchange.stream
        ? sse(responsesEvents(exchange, reply))
        : Response.json(responsesObject(exchange, reply, "completed"));
    case "chat":
      return exchange.stream ? sse(chatChunks(exchange, reply), "done") : Response.json(
        chatCompletion(exchange, reply),
      );
  }
}

/**
 * A server-sent event stream of `events`: with `event:` lines, or `data:` lines only, or those
 * and a final `data: [DONE]` (Chat Completions).
 */
function sse(events: Record<string, unknown>[], form: "events" | "data" | "done" = "events") {
  const lines = events.map((e) =>
    (form === "events" ? `event: ${e.type}\n` : "") + `data: ${JSON.stringify(e)}\n\n`
  );
  if (form === "done") lines.push("data: [DONE]\n\n");
  return streamed(lines, "text/event-stream");
}

/** A JSON array sent one element at a time, as Gemini streams without `alt=sse`. */
function jsonArray(items: Record<string, unknown>[]): Response {
  const lines = items.map((item, i) => (i ? ",\r\n" : "[") + JSON.stringify(item));
  lines.push("]");
  return streamed(lines, "application/json");
}

function streamed(lines: string[], type: string): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const line of lines) controller.enqueue(encoder.encode(line));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-cache" } });
}

/** Splits text into a few pieces, as a model streams it. */
function pieces(text: string): string[] {
  const words = text.split(/(?<=\s)/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 4) out.push(words.slice(i, i + 4).join(""));
  return out.length ? out : [""];
}

function outputTokens(reply: Reply): number {
  const text = reply.type === "text" ? reply.text : JSON.stringify(reply.input);
  return Math.max(1, Math.ceil(text.length / 4));
}

function anthropicContent(reply: Reply): Record<string, unknown> {
  return reply.type === "text"
    ? { type: "text", text: reply.text }
    : { type: "tool_use", id: id("toolu"), name: reply.name, input: reply.input };
}

function anthropicUsage(reply: Reply) {
  return {
    input_tokens: reply.tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens(reply),
  };
}

function anthropicMessage(exchange: Exchange, reply: Reply) {
  return {
    id: id("msg"),
    type: "message",
    role: "assistant",
    model: exchange.model,
    content: [anthropicContent(reply)],
    stop_reason: reply.type === "tool" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: anthropicUsage(reply),
  };
}

function anthropicEvents(exchange: Exchange, reply: Reply): Record<string, unknown>[] {
  const message = anthropicMessage(exchange, reply);
  const block = message.content[0]!;
  const events: Record<string, unknown>[] = [
    {
      type: "message_start",
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...message.usage, output_tokens: 1 },
      },
    },
  ];
  if (reply.type === "text") {
    events.push({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    events.push({ type: "ping" });
    for (const piece of pieces(reply.text)) {
      events.push({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: piece },
      });
    }
  } else {
    events.push({
      type: "content_block_start",
      index: 0,
      content_block: { ...block, input: {} },
    });
    events.push({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) },
    });
  }
  events.push({ type: "content_block_stop", index: 0 });
  events.push({
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  events.push({ type: "message_stop" });
  return events;
}

function responsesItem(reply: Reply, exchange: Exchange): Record<string, unknown> {
  if (reply.type === "text") {
    return {
      type: "message",
      id: id("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    };
  }
  return {
    type: "function_call",
    id: id("fc"),
    call_id: id("call"),
    name: reply.name,
    ...(exchange.namespaces[reply.name] ? { namespace: exchange.namespaces[reply.name] } : {}),
    arguments: JSON.stringify(reply.input),
    status: "completed",
  };
}

function responsesObject(
  exchange: Exchange,
  reply: Reply,
  status: string,
  item = responsesItem(reply, exchange),
) {
  const output = outputTokens(reply);
  return {
    id: id("resp"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: exchange.model,
    output: status === "completed" ? [item] : [],
    usage: status === "completed"
      ? {
        input_tokens: reply.tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: reply.tokens + output,
      }
      : null,
  };
}

function responsesEvents(exchange: Exchange, reply: Reply): Record<string, unknown>[] {
  const item = responsesItem(reply, exchange);
  const created = responsesObject(exchange, reply, "in_progress", item);
  const events: Record<string, unknown>[] = [
    { type: "response.created", response: created },
    { type: "response.in_progress", response: created },
  ];
  if (reply.type === "text") {
    events.push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    });
    events.push({
      type: "response.content_part.added",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const piece of pieces(reply.text)) {
      events.push({
        type: "response.output_text.delta",
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: piece,
      });
    }
    events.push({
      type: "response.output_text.done",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      text: reply.text,
    });
  } else {
    events.push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    });
    events.push({
      type: "response.function_call_arguments.delta",
      item_id: item.id,
      output_index: 0,
      delta: item.arguments,
    });
    events.push({
      type: "response.function_call_arguments.done",
      item_id: item.id,
      output_index: 0,
      arguments: item.arguments,
    });
  }
  events.push({ type: "response.output_item.done", output_index: 0, item });
  events.push({
    type: "response.completed",
    response: {
      ...created,
      ...responsesObject(exchange, reply, "completed", item),
      id: created.id,
    },
  });
  return events;
}

function chatUsage(reply: Reply) {
  const output = outputTokens(reply);
  return {
    prompt_tokens: reply.tokens,
    completion_tokens: output,
    total_tokens: reply.tokens + output,
  };
}

function chatCompletion(exchange: Exchange, reply: Reply) {
  const callId = id("call");
  return {
    id: id("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: exchange.model,
    choices: [{
      index: 0,
      message: reply.type === "text" ? { role: "assistant", content: reply.text } : {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: callId,
          type: "function",
          function: { name: reply.name, arguments: JSON.stringify(reply.input) },
        }],
      },
      finish_reason: reply.type === "text" ? "stop" : "tool_calls",
    }],
    usage: chatUsage(reply),
  };
}

function chatChunks(exchange: Exchange, reply: Reply): Record<string, unknown>[] {
  const base = {
    id: id("chatcmpl"),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: exchange.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  if (reply.type === "text") {
    for (const piece of pieces(reply.text)) chunks.push(chunk({ content: piece }));
    chunks.push(chunk({}, "stop"));
  } else {
    chunks.push(chunk({
      tool_calls: [{
        index: 0,
        id: id("call"),
        type: "function",
        function: { name: reply.name, arguments: JSON.stringify(reply.input) },
      }],
    }));
    chunks.push(chunk({}, "tool_calls"));
  }
  chunks.push({ ...base, choices: [], usage: chatUsage(reply) });
  return chunks;
}

function geminiUsage(reply: Reply) {
  const output = outputTokens(reply);
  return {
    promptTokenCount: reply.tokens,
    candidatesTokenCount: output,
    totalTokenCount: reply.tokens + output,
  };
}

/** A `GenerateContentResponse`: one candidate whose parts are `parts` (default: the reply). */
function geminiResponse(
  exchange: Exchange,
  reply: Reply,
  last: boolean,
  parts: Record<string, unknown>[] = geminiParts(reply),
) {
  return {
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(last ? { finishReason: "STOP" } : {}),
    }],
    ...(last ? { usageMetadata: geminiUsage(reply) } : {}),
    modelVersion: exchange.model,
    responseId: id("gemini"),
  };
}

function geminiParts(reply: Reply): Record<string, unknown>[] {
  return reply.type === "text"
    ? [{ text: reply.text }]
    : [{ functionCall: { id: id("call"), name: reply.name, args: reply.input } }];
}

/** The reply streamed: text in a few pieces, a function call whole; usage on the last chunk. */
function geminiChunks(exchange: Exchange, reply: Reply): Record<string, unknown>[] {
  if (reply.type !== "text") return [geminiResponse(exchange, reply, true)];
  const texts = pieces(reply.text);
  return texts.map((text, i) =>
    geminiResponse(exchange, reply, i === texts.length - 1, [{ text }])
  );
}
