/** The sessions of one MCP endpoint: a transport and an SDK server per session, closed when idle. */

import { log } from "../../log.ts";
import { SessionEvents } from "./events.ts";
import { type HttpTransport, newHttpTransport, type SdkServer } from "./sdk.ts";
import { errorMessage } from "../../errors.ts";

export interface SessionOptions {
  /** A session with no request and no open stream for this long is closed; its client must initialize again. */
  idleMs: number;
  /** Largest JSON-RPC request body, in bytes. */
  maxBodyBytes: number;
}

interface Session {
  server: SdkServer;
  transport: HttpTransport;
  lastSeen: number;
  /** Responses still streaming (SSE): a client listening for notifications is not idle. */
  open: number;
}

/** Open sessions per endpoint at most; each holds an SDK server and up to 200 buffered events. */
const MAX_SESSIONS = 1000;

/** How long a client waits before it reconnects a closed SSE stream (sent as the SSE `retry` field). */
const RETRY_MS = 1_000;

/**
 * The sessions of one MCP endpoint: a transport and an SDK server per `mcp-session-id` (a transport
 * serves one session), created by an initialize request, closed by DELETE, by idleness, or at shutdown.
 */
export class McpSessions {
  #sessions = new Map<string, Session>();
  #sweeper: ReturnType<typeof setInterval>;

  constructor(private readonly newServer: () => SdkServer, private readonly options: SessionOptions) {
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(250, Math.min(options.idleMs / 4, 60_000)));
    Deno.unrefTimer(this.#sweeper);
  }

  /** Answers one HTTP request to the endpoint (POST messages, GET stream, DELETE session). */
  async handle(req: Request): Promise<Response> {
    const id = req.headers.get("mcp-session-id");
    if (id !== null) {
      const session = this.#sessions.get(id);
      if (!session) return notFound(id);
      session.lastSeen = Date.now();
      return this.#tracked(session, await session.transport.handleRequest(req));
    }
    // Sessions hold memory until they end or idle out: a client that initializes in a loop is refused.
    if (this.#sessions.size >= MAX_SESSIONS) return tooMany();
    // No session yet: a new transport, kept only if this request initialized it (it refuses anything else).
    const session = await this.#create();
    const res = await session.transport.handleRequest(req);
    if (session.transport.sessionId === undefined) await this.#close(session);
    return this.#tracked(session, res);
  }

  /** Tells every session its tool list changed (notifications/tools/list_changed on its SSE stream). */
  async toolsChanged(): Promise<void> {
    await Promise.all(
      [...this.#sessions.values()].map((s) =>
        s.server.sendToolListChanged().catch((err: Error) => {
          log.debug("mcp: list_changed not delivered", { error: err.message });
        })
      ),
    );
  }

  /** Closes every session (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((s) => this.#close(s)));
  }

  async #create(): Promise<Session> {
    const transport = newHttpTransport({
      onSessionInitialized: (sid) => this.#sessions.set(sid, session),
      onSessionClosed: (sid) => this.#sessions.delete(sid),
      eventStore: new SessionEvents(),
      maxRequestBodySize: this.options.maxBodyBytes,
      retryInterval: RETRY_MS,
    });
    const session: Session = { server: this.newServer(), transport, lastSeen: Date.now(), open: 0 };
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await session.server.connect(transport);
    return session;
  }

  /** The response with its body counted as an open stream of the session until it ends or is cancelled. */
  #tracked(session: Session, res: Response): Response {
    if (!res.body || !res.headers.get("content-type")?.includes("text/event-stream")) return res;
    session.open++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      session.open--;
      session.lastSeen = Date.now();
    };
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done: end } = await reader.read();
          if (end) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          finish();
          controller.error(err);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    // Saying "chunked" up front makes @hono/node-server send each event as it comes: otherwise it waits a
    // timer tick for a second chunk, to size a short body, which cost each tool call ~2 ms after the
    // priming event (measured with scripts/bench/mcp.ts).
    const headers = new Headers(res.headers);
    headers.set("transfer-encoding", "chunked");
    return new Response(body, { status: res.status, statusText: res.statusText, headers });
  }

  #sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const s of this.#sessions.values()) {
      if (s.open === 0 && s.lastSeen < cutoff) {
        log.debug("mcp: closing idle session", { session: s.transport.sessionId });
        this.#close(s);
      }
    }
  }

  async #close(session: Session): Promise<void> {
    if (session.transport.sessionId) this.#sessions.delete(session.transport.sessionId);
    try {
      await session.server.close();
    } catch (err) {
      log.debug("mcp: closing a session failed", { error: errorMessage(err) });
    }
  }
}

/** The spec's answer to an unknown or expired session: 404, and the client starts a new one. */
function notFound(id: string): Response {
  return Response.json({
    jsonrpc: "2.0",
    error: { code: -32001, message: `session ${id} not found (expired or closed): initialize a new one` },
    id: null,
  }, { status: 404 });
}

function tooMany(): Response {
  return Response.json({
    jsonrpc: "2.0",
    error: {
      code: -32000,
      message: `too many open sessions (${MAX_SESSIONS}): close one (DELETE /mcp) or retry later`,
    },
    id: null,
  }, { status: 503, headers: { "retry-after": "60" } });
}
