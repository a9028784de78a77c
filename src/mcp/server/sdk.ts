/**
 * The one door to the MCP SDK's server side (docs/design/layers.md#wrappers-of-libraries: a library is
 * wrapped by one module). Its `.js` subpaths type as `any` under deno check, so the few parts stn uses get
 * their types here; the rest of src/mcp/server sees these interfaces only.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** A JSON-RPC message as the transports carry it. */
export type JsonRpcMessage = Record<string, unknown>;

/** Where an HTTP transport keeps the events it sent, so a client that reconnects with Last-Event-ID gets the rest. */
export interface EventStore {
  storeEvent(streamId: string, message: JsonRpcMessage): Promise<string>;
  replayEventsAfter(
    lastEventId: string,
    opts: { send: (eventId: string, message: JsonRpcMessage) => Promise<void> },
  ): Promise<string>;
}

/** A transport: Streamable HTTP (one per session) or stdio. */
export interface McpTransport {
  close(): Promise<void>;
  onclose?: () => void;
}

/** The Streamable HTTP transport of one session. */
export interface HttpTransport extends McpTransport {
  sessionId?: string;
  handleRequest(req: Request): Promise<Response>;
}

/** What a request handler learns about its call. */
export interface HandlerExtra {
  signal: AbortSignal;
  sessionId?: string;
}

/** The requests stn's servers answer beyond the SDK's own (initialize, ping, logging/setLevel). */
export type Handled =
  | "tools/list"
  | "tools/call"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read";

const SCHEMAS: Record<Handled, unknown> = {
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
};

/** The params of each handled request, as the SDK hands them over after checking them against SCHEMAS. */
export interface HandledParams {
  "tools/list": unknown;
  "tools/call": { name: string; arguments?: Record<string, unknown> };
  "resources/list": unknown;
  "resources/templates/list": unknown;
  "resources/read": { uri: string };
}

/** One MCP server instance (the SDK's low-level Server): one per session, sharing stn's tool providers. */
export interface SdkServer {
  handle<M extends Handled>(
    method: M,
    fn: (params: HandledParams[M], extra: HandlerExtra) => Promise<unknown>,
  ): void;
  connect(transport: McpTransport): Promise<void>;
  sendToolListChanged(): Promise<void>;
  close(): Promise<void>;
}

export interface ServerIdentity {
  name: string;
  version: string;
  instructions?: string;
  resources: boolean;
}

/** A server declaring tools (with list_changed), logging, and resources when it has any. */
export function newSdkServer(identity: ServerIdentity): SdkServer {
  const server = new Server({ name: identity.name, version: identity.version }, {
    capabilities: {
      tools: { listChanged: true },
      logging: {},
      ...(identity.resources ? { resources: {} } : {}),
    },
    instructions: identity.instructions,
  });
  return {
    handle: (method, fn) =>
      server.setRequestHandler(
        SCHEMAS[method],
        // The SDK parsed req against SCHEMAS[method], whose params are HandledParams[method].
        (req: { params: unknown }, extra: HandlerExtra) =>
          fn(req.params as HandledParams[typeof method], extra),
      ),
    connect: (transport) => server.connect(transport),
    sendToolListChanged: () => server.sendToolListChanged(),
    close: () => server.close(),
  };
}

/** Options of one session's HTTP transport. */
export interface HttpTransportOptions {
  onSessionInitialized: (id: string) => void;
  onSessionClosed: (id: string) => void;
  eventStore: EventStore;
  maxRequestBodySize: number;
  /** Milliseconds a client waits before reconnecting a closed SSE stream. */
  retryInterval: number;
}

/** The SDK's web-standard Streamable HTTP transport (it answers fetch Requests; Hono hands them over). */
export function newHttpTransport(options: HttpTransportOptions): HttpTransport {
  return new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: options.onSessionInitialized,
    onsessionclosed: options.onSessionClosed,
    eventStore: options.eventStore,
    maxRequestBodySize: options.maxRequestBodySize,
    retryInterval: options.retryInterval,
  });
}

/** The stdio transport on this process's stdin/stdout. */
export function newStdioTransport(): McpTransport {
  return new StdioServerTransport();
}

/**
 * A JSON-RPC error answer: an unknown tool (-32602 invalid params) or resource (-32002), a protocol error
 * rather than a tool's failure. The SDK sends an error's `code` and `message` as they are (an McpError's
 * message would carry its "MCP error -32602:" prefix twice by the time a client prints it).
 */
export function protocolError(
  kind: "invalid_params" | "resource_not_found",
  message: string,
  data?: unknown,
): Error {
  const code = kind === "invalid_params" ? ErrorCode.InvalidParams : RESOURCE_NOT_FOUND;
  return Object.assign(new Error(message), { code, data });
}

/** The spec's code for resources/read of a URI the server does not have. */
const RESOURCE_NOT_FOUND = -32002;
