/** stn's own view of an MCP server and its tools, so nothing outside src/mcp/client/ sees the SDK's types. */

/** A server to connect to, with its placeholders already filled (never stored, never logged). */
export type McpServerSpec =
  | { transport: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { transport: "http"; url: string; headers: Record<string, string> };

/** A tool a server offers, as it listed it. */
export interface McpToolInfo {
  name: string;
  /** A display name, when the server gives one. */
  title?: string;
  description: string;
  /** JSON Schema of the arguments (`{type: "object"}` when the server gave none). */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the tool's structured result, when the server declares one. */
  outputSchema?: Record<string, unknown>;
  /** The server's hints about what the tool does (readOnlyHint, destructiveHint, …), as it sent them. */
  annotations?: Record<string, unknown>;
}

/** A tool result as the server sent it (the MCP fields stn passes on unchanged). */
export interface McpToolResult {
  /** Content blocks (text, image, audio, resource, resource_link), as sent. */
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Options of one request to a server. */
export interface McpRequestOptions {
  /** Aborting sends the MCP cancellation to the server and rejects the call. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** An open connection to one MCP server. */
export interface McpConnection {
  /** The server's name in its config file (for messages). */
  readonly server: string;
  /** Every tool the server offers (all pages). */
  listTools(options?: McpRequestOptions): Promise<McpToolInfo[]>;
  /**
   * Calls a tool and returns its result as one text. A result with `isError: true` is thrown as a
   * StationError `mcp_tool_error` carrying the tool's message; an abort as `canceled`.
   */
  callTool(name: string, args: unknown, options?: McpRequestOptions): Promise<string>;
  /** Calls a tool and returns its result as the server sent it (an `isError` result is returned, not thrown). */
  callToolResult(name: string, args: unknown, options?: McpRequestOptions): Promise<McpToolResult>;
  /** The last few KB the server wrote to stderr (stdio servers), for error messages. */
  stderr(): string;
  /** Ends the connection; a stdio server's process is stopped. */
  close(): Promise<void>;
  /** Settles when the connection ended, by close() or because the server went away (its process died). */
  readonly closed: Promise<void>;
}
