/** The MCP client of stn: connect to a server, list its tools, call one, close (the SDK stays inside). */
export { connectMcpServer } from "./connection.ts";
export type { ConnectOptions } from "./connection.ts";
export { resultText } from "./content.ts";
export type { McpConnection, McpRequestOptions, McpServerSpec, McpToolInfo, McpToolResult } from "./types.ts";
