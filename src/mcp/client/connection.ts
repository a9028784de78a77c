import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { errorMessage, StationError } from "../../errors.ts";
import { log } from "../../log.ts";
import { VERSION } from "../../version.ts";
import { resultText } from "./content.ts";
import type { McpConnection, McpRequestOptions, McpServerSpec, McpToolInfo } from "./types.ts";

/**
 * The one place stn talks to `@modelcontextprotocol/sdk`'s client (its `.js` subpaths type as `any` under
 * `deno check`, so the SDK's objects stay in this file and the rest of stn gets McpConnection).
 */

/** How long a call may run when the caller gives no timeout: the agent run's own deadline governs. */
const DEFAULT_CALL_TIMEOUT_MS = 30 * 60_000;
/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_KEEP = 4096;
/** The SDK's JSON-RPC error codes stn tells apart. */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/** Options of connectMcpServer. */
export interface ConnectOptions {
  /** The server's name, for messages. */
  server: string;
  /** Time for starting the server and the MCP initialize handshake. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Rewrites a message before it leaves this module (hides secret values). */
  mask?: (text: string) => string;
}

type Transport = StdioClientTransport | StreamableHTTPClientTransport;

/** A tool as tools/list sends it (the fields stn reads). */
interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** A tools/call result as the SDK hands it over (the fields stn reads). */
interface RawResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function transportFor(spec: McpServerSpec): Transport {
  if (spec.transport === "stdio") {
    return new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      // Captured, not spilled onto stn's own stderr: kept for error messages.
      stderr: "pipe",
    });
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } });
}

/** Connects to an MCP server (starting it, for stdio) and completes the initialize handshake. */
export async function connectMcpServer(spec: McpServerSpec, options: ConnectOptions): Promise<McpConnection> {
  const mask = options.mask ?? ((t: string) => t);
  const { server } = options;
  let stderrTail = "";
  const transport = transportFor(spec);
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderrTail = (stderrTail + (typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)))
      .slice(-STDERR_KEEP);
  });
  const client = new Client({ name: "stn", version: VERSION }, { capabilities: {} });
  client.onerror = (err: Error) => log.debug(`mcp server ${server}: ${mask(err.message)}`);
  const stderr = () => mask(stderrTail.trim());
  const withStderr = (message: string) => {
    const tail = stderr();
    return tail ? `${message}; its stderr ends with: ${tail.slice(-1000)}` : message;
  };

  try {
    await client.connect(transport, { timeout: options.timeoutMs, signal: options.signal });
  } catch (err) {
    await closeQuietly(client, transport);
    if (options.signal?.aborted) {
      throw new StationError("canceled", `connecting to MCP server ${server} was canceled`);
    }
    if ((err as { code?: number }).code === REQUEST_TIMEOUT) {
      throw new StationError(
        "mcp_timeout",
        withStderr(
          `MCP server ${server} did not answer the initialize handshake within ${options.timeoutMs} ms`,
        ),
        {
          hint: "check that the command starts an MCP server (stdio) or the url serves MCP (Streamable HTTP)",
        },
      );
    }
    throw new StationError(
      "mcp_connect_failed",
      withStderr(`cannot connect to MCP server ${server}: ${mask(errorMessage(err))}`),
      {
        hint: spec.transport === "stdio"
          ? "check the command and args (is the program installed and on PATH?)"
          : "check the url and headers, and that the server is up",
      },
    );
  }

  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  client.onclose = () => ended();

  /** A StationError for a failed request, or the caller's cancellation. */
  const requestError = (err: unknown, what: string, opts: McpRequestOptions): StationError => {
    if (opts.signal?.aborted) {
      return new StationError("canceled", `${what} on MCP server ${server} was canceled`);
    }
    if (err instanceof StationError) return err;
    const code = (err as { code?: number }).code;
    if (code === REQUEST_TIMEOUT) {
      return new StationError("mcp_timeout", `${what} on MCP server ${server} timed out`, {
        hint: "the server did not answer in time; the call was canceled on the server",
      });
    }
    const closed = code === CONNECTION_CLOSED ? "the server closed the connection: " : "";
    return new StationError(
      "mcp_call_failed",
      withStderr(`${what} on MCP server ${server} failed: ${closed}${mask(errorMessage(err))}`),
    );
  };

  /** One tools/call, its result as the SDK hands it over. */
  const call = async (name: string, args: unknown, opts: McpRequestOptions): Promise<RawResult> => {
    opts.signal?.throwIfAborted();
    try {
      return await client.callTool(
        { name, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        {
          signal: opts.signal,
          timeout: opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
        },
      );
    } catch (err) {
      throw requestError(err, `tool ${name}`, opts);
    }
  };

  return {
    server,
    async listTools(opts = {}) {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      try {
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined, {
            signal: opts.signal,
            timeout: opts.timeoutMs ?? options.timeoutMs,
          });
          for (const t of page.tools as ListedTool[]) {
            tools.push({
              name: t.name,
              ...(t.title && { title: t.title }),
              description: t.description ?? "",
              inputSchema: t.inputSchema ?? { type: "object" },
              ...(t.outputSchema && { outputSchema: t.outputSchema }),
              ...(t.annotations && { annotations: t.annotations }),
            });
          }
          cursor = page.nextCursor;
        } while (cursor);
      } catch (err) {
        throw requestError(err, "listing tools", opts);
      }
      return tools;
    },
    async callTool(name, args, opts = {}) {
      const result = await call(name, args, opts);
      const text = resultText(result);
      if (result.isError) {
        throw new StationError("mcp_tool_error", text || `tool ${name} failed without a message`, {
          details: { server, tool: name },
        });
      }
      return text;
    },
    async callToolResult(name, args, opts = {}) {
      const result = await call(name, args, opts);
      return {
        content: Array.isArray(result.content) ? result.content as Record<string, unknown>[] : [],
        ...(isRecord(result.structuredContent) && { structuredContent: result.structuredContent }),
        ...(result.isError && { isError: true }),
      };
    },
    stderr,
    close: () => closeQuietly(client, transport),
    closed,
  };
}

/** Ends the session (HTTP: DELETE, briefly) and the transport (stdio: the child is stopped). */
async function closeQuietly(client: Client, transport: Transport): Promise<void> {
  if (typeof transport.terminateSession === "function" && transport.sessionId) {
    const done = transport.terminateSession().catch(() => {});
    await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
  }
  await client.close().catch(() => {});
}
