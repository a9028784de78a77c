/**
 * A scripted model provider: a real local HTTP server speaking the OpenAI chat-completions protocol
 * (`POST /v1/chat/completions`, JSON or streamed SSE, tool calls, usage) and the Anthropic messages
 * protocol (`POST /v1/messages`). Each request takes the next reply of the test's script; the server
 * counts and records requests, and can hold a reply until the test releases it (cancel tests). The
 * only fake the project allows: a paid provider's protocol. Point stn at it with `ai.base_url`.
 * With `contextLimit`, it is a model with that context window: a request estimated over it (stn's documented
 * estimate, docs/agents.md#context-window: characters of its messages, system and tools as JSON ÷ 4) is refused
 * with the provider's own error, and a reply without scripted usage reports that estimate as its input tokens.
 */

/** A tool call the scripted model makes. */
export interface ScriptedCall {
  name: string;
  /** The arguments; a string is sent verbatim as the OpenAI arguments text (to send malformed JSON). */
  args: Record<string, unknown> | string;
  id?: string;
}

/** One scripted model answer. */
export interface Reply {
  text?: string;
  calls?: ScriptedCall[];
  usage?: { input?: number; output?: number; cached?: number };
  /** Answer with this HTTP error status instead (the body carries `text` as the error message). */
  status?: number;
  /** Headers of the answer (e.g. `retry-after` on a 429). */
  headers?: Record<string, string>;
  /** Hold the answer until this resolves (or the client goes away). */
  hold?: Promise<void>;
}

/** A request as the server received it. */
export interface ModelRequest {
  protocol: "openai" | "anthropic";
  // deno-lint-ignore no-explicit-any -- a provider's request JSON, which tests read field by field
  body: any;
  /** The request's tokens by the documented estimate. */
  tokens: number;
  /** True when the client went away before the answer was sent (an aborted call). */
  aborted: boolean;
  /** The API key it was sent with (`Authorization: Bearer` or `x-api-key`). */
  api_key: string;
}

export interface ModelServer {
  /** Base URL for `ai.base_url`, ending in /v1. */
  url: string;
  requests: ModelRequest[];
  /** Appends replies to the script; a request finding the script empty gets a 500 naming the problem. */
  script(...replies: (Reply | ((req: ModelRequest) => Reply))[]): void;
  /** Answers every request the script has no reply for (a router over the request's content). */
  route(fn: (req: ModelRequest) => Reply): void;
  /** Resolves when `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Tokens of a request body: characters of its system, messages and tools as JSON, divided by 4. */
export function requestTokens(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  return Math.ceil(JSON.stringify([body.system ?? null, body.messages, body.tools ?? null]).length / 4);
}

/** The provider's refusal of a request over the context window, as OpenAI and Anthropic send it. */
function tooLong(protocol: ModelRequest["protocol"], tokens: number, limit: number): Response {
  if (protocol === "anthropic") {
    return Response.json({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `prompt is too long: ${tokens} tokens > ${limit} maximum`,
      },
    }, { status: 400 });
  }
  return Response.json({
    error: {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ` +
        `${tokens} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  }, { status: 400 });
}

/** Starts the server on a free loopback port. */
export function startModelServer(options: { contextLimit?: number } = {}): ModelServer {
  const queue: (Reply | ((req: ModelRequest) => Reply))[] = [];
  const requests: ModelRequest[] = [];
  const waiters: (() => void)[] = [];
  let callSeq = 0;
  let router: ((req: ModelRequest) => Reply) | undefined;
  // Held answers end when the server closes, so a test's cleanup never waits on one.
  const closing = new AbortController();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const protocol = url.pathname.endsWith("/chat/completions")
      ? "openai"
      : url.pathname.endsWith("/messages")
      ? "anthropic"
      : undefined;
    if (!protocol || req.method !== "POST") return new Response("not found", { status: 404 });
    const body = await req.json();
    const api_key = req.headers.get("authorization")?.replace(/^Bearer /, "") ??
      req.headers.get("x-api-key") ?? "";
    const record: ModelRequest = { protocol, body, tokens: requestTokens(body), aborted: false, api_key };
    requests.push(record);
    // Deno's request.signal also fires after a successful answer: only an abort before it counts.
    let answered = false;
    req.signal.addEventListener("abort", () => (record.aborted ||= !answered));
    for (const w of waiters.splice(0)) w();
    if (options.contextLimit !== undefined && record.tokens > options.contextLimit) {
      answered = true;
      return tooLong(protocol, record.tokens, options.contextLimit);
    }
    const next = queue.shift() ?? router;
    if (!next) return Response.json({ error: { message: "model script exhausted" } }, { status: 500 });
    const reply = typeof next === "function" ? next(record) : next;
    if (reply.hold) {
      await Promise.race([
        reply.hold,
        new Promise<void>((r) => req.signal.addEventListener("abort", () => r())),
        new Promise<void>((r) => closing.signal.addEventListener("abort", () => r())),
      ]);
      if (req.signal.aborted || closing.signal.aborted) return new Response(null, { status: 499 });
    }
    answered = true;
    if (reply.status) {
      return Response.json({ error: { message: reply.text ?? "scripted error", type: "server_error" } }, {
        status: reply.status,
        headers: reply.headers,
      });
    }
    const calls = (reply.calls ?? []).map((c) => ({ ...c, id: c.id ?? `call_${++callSeq}` }));
    const usage = {
      input: reply.usage?.input ?? (options.contextLimit === undefined ? 10 : record.tokens),
      output: reply.usage?.output ?? 5,
      cached: reply.usage?.cached ?? 0,
    };
    answered = true;
    if (protocol === "anthropic") return anthropicReply(record.body, reply.text, calls, usage);
    return record.body.stream
      ? openaiStream(record.body, reply.text, calls, usage)
      : openaiReply(record.body, reply.text, calls, usage);
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/v1`,
    requests,
    script: (...replies) => queue.push(...replies),
    route: (fn) => (router = fn),
    waitForRequests: async (n, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`model server: ${requests.length} of ${n} requests came`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () => {
      closing.abort();
      return server.shutdown();
    },
  };
}

type Usage = { input: number; output: number; cached: number };
type Call = Required<ScriptedCall>;

function openaiUsage(u: Usage) {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cached },
  };
}

/** A call's OpenAI `arguments`: its JSON, or the string it was scripted with. */
const argumentsText = (c: Call) => typeof c.args === "string" ? c.args : JSON.stringify(c.args);

function openaiReply(
  body: ModelRequest["body"],
  text: string | undefined,
  calls: Call[],
  usage: Usage,
): Response {
  return Response.json({
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: text ?? null,
        ...(calls.length
          ? {
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: argumentsText(c) },
            })),
          }
          : {}),
      },
      finish_reason: calls.length ? "tool_calls" : "stop",
    }],
    usage: openaiUsage(usage),
  });
}

function openaiStream(
  body: ModelRequest["body"],
  text: string | undefined,
  calls: Call[],
  usage: Usage,
): Response {
  const id = `chatcmpl-${crypto.randomUUID()}`;
  const chunk = (delta: unknown, finish: string | null = null, extra = {}) => ({
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const events: unknown[] = [chunk({ role: "assistant", content: "" })];
  // Text comes in a few pieces, as a real stream's deltas do.
  for (const piece of (text ?? "").match(/.{1,8}/gs) ?? []) events.push(chunk({ content: piece }));
  calls.forEach((c, index) =>
    events.push(chunk({
      tool_calls: [{
        index,
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: argumentsText(c) },
      }],
    }))
  );
  events.push(chunk({}, calls.length ? "tool_calls" : "stop"));
  if (body.stream_options?.include_usage) {
    events.push({
      id,
      object: "chat.completion.chunk",
      model: body.model,
      choices: [],
      usage: openaiUsage(usage),
    });
  }
  const sse = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  return new Response(sse, { headers: { "content-type": "text/event-stream" } });
}

function anthropicReply(
  body: ModelRequest["body"],
  text: string | undefined,
  calls: Call[],
  usage: Usage,
): Response {
  return Response.json({
    id: `msg_${crypto.randomUUID()}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content: [
      ...(text !== undefined ? [{ type: "text", text }] : []),
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args })),
    ],
    stop_reason: calls.length ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cached },
  });
}
