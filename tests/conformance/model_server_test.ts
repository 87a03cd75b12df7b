// The conformance suite's scripted model, checked without any agent: each API answers a plan's
// step as a tool call in that API's shape, the answer once the step has its result, and a
// summary or title request with the script's summary or title; streamed and not.

import assert from "node:assert/strict";
import OpenAI from "openai";
import { type Script, startModelServer } from "./_model_server.ts";

const SCRIPT: Script = {
  title: "A planted title",
  summary: "A planted summary: quillmarsh.",
  plans: [{
    id: "quasarbeet",
    steps: [{ kind: "shell", command: "cat notes.txt" }],
    answer: "marmalith",
  }],
};

/** The `data:` events of a server-sent event stream. */
async function events(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  return text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)));
}

Deno.test("the Messages API answers a plan's step with tool_use, then its answer, streamed", async () => {
  const server = startModelServer(SCRIPT);
  try {
    const post = (messages: unknown[], stream: boolean) =>
      fetch(`${server.origin}/v1/messages?beta=true`, {
        method: "POST",
        body: JSON.stringify({
          model: "m",
          stream,
          tools: [{ name: "Bash", input_schema: {} }],
          messages,
        }),
      });
    const first = await events(await post([{ role: "user", content: "go quasarbeet" }], true));
    assert.deepEqual(first.map((e) => e.type), [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const block = (first[1] as { content_block: { type: string; name: string; id: string } })
      .content_block;
    assert.equal(block.type, "tool_use");
    assert.equal(block.name, "Bash");
    const input = JSON.parse(
      (first[2] as { delta: { partial_json: string } }).delta.partial_json,
    );
    assert.equal(input.command, "cat notes.txt");
    const second = await (await post([
      { role: "user", content: "go quasarbeet" },
      { role: "assistant", content: [{ type: "tool_use", id: block.id, name: "Bash", input }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: block.id, content: "x" }] },
    ], false)).json();
    assert.deepEqual(second.content, [{ type: "text", text: "marmalith" }]);
    assert.equal(second.stop_reason, "end_turn");
  } finally {
    await server.close();
  }
});

Deno.test("the Responses API streams a function_call item, then a message item", async () => {
  const server = startModelServer(SCRIPT);
  try {
    const post = (input: unknown[]) =>
      fetch(`${server.origin}/v1/responses`, {
        method: "POST",
        body: JSON.stringify({
          model: "m",
          stream: true,
          tools: [{ type: "function", name: "exec_command" }],
          input,
        }),
      });
    const ask = {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "quasarbeet" }],
    };
    const first = await events(await post([ask]));
    assert.equal(first[0]!.type, "response.created");
    assert.equal(first.at(-1)!.type, "response.completed");
    const done = first.find((e) => e.type === "response.output_item.done") as {
      item: { type: string; name: string; arguments: string; call_id: string };
    };
    assert.equal(done.item.type, "function_call");
    assert.equal(done.item.name, "exec_command");
    assert.deepEqual(JSON.parse(done.item.arguments), { cmd: "cat notes.txt" });
    const second = await events(
      await post([
        ask,
        {
          type: "function_call",
          name: "exec_command",
          call_id: done.item.call_id,
          arguments: "{}",
        },
        { type: "function_call_output", call_id: done.item.call_id, output: "x" },
      ]),
    );
    const text = second.filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta).join("");
    assert.equal(text, "marmalith");
  } finally {
    await server.close();
  }
});

Deno.test("Chat Completions, through the openai client: a tool call, a title and a summary", async () => {
  const server = startModelServer(SCRIPT);
  const client = new OpenAI({ baseURL: `${server.origin}/v1`, apiKey: "k" });
  try {
    const tools = [{
      type: "function" as const,
      function: { name: "bash", parameters: { type: "object" } },
    }];
    const stream = await client.chat.completions.create({
      model: "m",
      stream: true,
      tools,
      messages: [{ role: "user", content: "quasarbeet" }],
    });
    const calls: string[] = [];
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls.push(`${call.function?.name}:${call.function?.arguments}`);
      }
    }
    assert.equal(calls.length, 1);
    assert.match(calls[0]!, /^bash:\{"command":"cat notes\.txt"/);
    const title = await client.chat.completions.create({
      model: "m",
      messages: [
        { role: "system", content: "You are a title generator." },
        { role: "user", content: "quasarbeet" },
      ],
    });
    assert.equal(title.choices[0]!.message.content, SCRIPT.title);
    // A summarizer quotes the conversation, plan words and all, and is offered no tools.
    const summary = await client.chat.completions.create({
      model: "m",
      messages: [
        { role: "system", content: "You are a context summarization agent." },
        { role: "user", content: "<conversation>quasarbeet</conversation> Summarize it." },
      ],
    });
    assert.equal(summary.choices[0]!.message.content, SCRIPT.summary);
    assert.deepEqual(server.requests.map((r) => r.answered), ["bash", "title", "summary"]);
  } finally {
    await server.close();
  }
});

const READ: Script = {
  ...SCRIPT,
  plans: [{
    id: "quasarbeet",
    steps: [{ kind: "read", path: "/p/notes.txt" }],
    answer: "marmalith",
  }],
};

Deno.test("the Gemini API: a schema-shaped JSON answer, a functionCall streamed as SSE, then text in a JSON array", async () => {
  const server = startModelServer(READ);
  try {
    const post = (method: string, body: unknown) =>
      fetch(`${server.origin}/v1beta/models/gemini-x:${method}`, {
        method: "POST",
        body: JSON.stringify(body),
      });
    const routing = await (await post("generateContent", {
      contents: [{ role: "user", parts: [{ text: "quasarbeet" }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "OBJECT",
          properties: {
            reasoning: { type: "STRING" },
            score: { type: "INTEGER" },
            choice: { type: "STRING", enum: ["flash", "pro"] },
          },
        },
      },
    })).json();
    assert.deepEqual(JSON.parse(routing.candidates[0].content.parts[0].text), {
      reasoning: "conformance",
      score: 1,
      choice: "flash",
    });
    const tools = [{
      functionDeclarations: [
        { name: "list_directory", parameters: { properties: { dir_path: {} } } },
        { name: "read_file", parametersJsonSchema: { properties: { file_path: {} } } },
      ],
    }];
    const ask = { role: "user", parts: [{ text: "go quasarbeet" }] };
    const first = await events(
      await fetch(`${server.origin}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, {
        method: "POST",
        body: JSON.stringify({ contents: [ask], tools }),
      }),
    );
    const call = (first.at(-1) as {
      candidates: { content: { parts: { functionCall: { name: string; args: unknown } }[] } }[];
    }).candidates[0]!.content.parts[0]!.functionCall;
    assert.deepEqual(call.args, { file_path: "/p/notes.txt" });
    assert.equal(call.name, "read_file");
    const second = await (await post("streamGenerateContent", {
      contents: [
        ask,
        { role: "model", parts: [{ functionCall: call }] },
        {
          role: "user",
          parts: [{ functionResponse: { name: "read_file", response: { output: "x" } } }],
        },
      ],
      tools,
    })).json() as { candidates: { content: { parts: { text: string }[] } }[] }[];
    assert.equal(second.map((c) => c.candidates[0]!.content.parts[0]!.text).join(""), "marmalith");
    assert.deepEqual(server.requests.map((r) => r.answered), ["json", "read_file", "text"]);
  } finally {
    await server.close();
  }
});

Deno.test("Chat Completions reads a file with the read tool offered, its path argument named as its schema names it", async () => {
  const server = startModelServer(READ);
  try {
    for (
      const [name, key] of [["view", "path"], ["Read", "filepath"], ["read_file", "file_path"]]
    ) {
      const reply = await (await fetch(`${server.origin}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({
          model: "m",
          tools: [{
            type: "function",
            function: { name, parameters: { properties: { [key!]: {}, limit: {} } } },
          }, { type: "function", function: { name: "bash" } }],
          messages: [{ role: "user", content: "quasarbeet" }],
        }),
      })).json();
      const call = reply.choices[0].message.tool_calls[0].function;
      assert.equal(call.name, name);
      assert.deepEqual(JSON.parse(call.arguments), { [key!]: "/p/notes.txt" });
    }
  } finally {
    await server.close();
  }
});

Deno.test("subagents in each agent's own tool, a forced tool in its schema, and Gemini's complete_task", async () => {
  const script: Script = {
    ...SCRIPT,
    plans: [{
      id: "zephyrkiln",
      steps: [{ kind: "subagent", description: "Inspect", prompt: "Subtask glimmerfane" }],
      answer: "orchidvault",
    }, { id: "glimmerfane", steps: [], answer: "tessellark" }],
  };
  const server = startModelServer(script);
  const fn = (name: string, properties: Record<string, unknown> = {}) => ({
    type: "function",
    function: { name, parameters: { properties } },
  });
  const call = async (body: Record<string, unknown>) => {
    const reply = await (await fetch(`${server.origin}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "zephyrkiln" }],
        ...body,
      }),
    })).json();
    const made = reply.choices[0].message.tool_calls[0].function;
    return { name: made.name, input: JSON.parse(made.arguments) };
  };
  try {
    assert.deepEqual(
      await call({ tools: [fn("task", { agent_type: {}, name: {}, mode: {} })] }),
      {
        name: "task",
        input: {
          description: "Inspect",
          prompt: "Subtask glimmerfane",
          name: "helper",
          agent_type: "general-purpose",
          mode: "sync",
        },
      },
    );
    assert.deepEqual(await call({ tools: [fn("agent", { run_in_background: {} })] }), {
      name: "agent",
      input: {
        description: "Inspect",
        prompt: "Subtask glimmerfane",
        subagent_type: "general-purpose",
        run_in_background: false,
      },
    });
    assert.deepEqual(
      await call({
        tool_choice: "required",
        tools: [{
          type: "function",
          function: {
            name: "respond_in_schema",
            parameters: { type: "object", properties: { shouldBlock: { type: "boolean" } } },
          },
        }],
      }),
      { name: "respond_in_schema", input: { shouldBlock: false } },
    );
    const gemini = await (await fetch(`${server.origin}/v1beta/models/g:generateContent`, {
      method: "POST",
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "Subtask glimmerfane" }] }],
        tools: [{ functionDeclarations: [{ name: "read_file" }, { name: "complete_task" }] }],
      }),
    })).json();
    assert.deepEqual(gemini.candidates[0].content.parts[0].functionCall.args, {
      result: { response: "tessellark" },
    });
  } finally {
    await server.close();
  }
});

Deno.test("the proxy refuses and records a connection to any other host", async () => {
  const server = startModelServer(SCRIPT);
  try {
    const port = Number(new URL(server.proxy).port);
    // A connection that says nothing and hangs up asks for no host: not recorded.
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    await silent.closeWrite();
    // The refusal, once the proxy has read the nothing it was sent.
    assert.ok(await silent.read(new Uint8Array(256)));
    silent.close();
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode("CONNECT example.invalid:443 HTTP/1.1\r\n\r\n"));
    const buffer = new Uint8Array(256);
    const n = await conn.read(buffer);
    conn.close();
    assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 403/);
    assert.deepEqual(server.strayConnections, ["CONNECT example.invalid:443"]);
  } finally {
    await server.close();
  }
});
