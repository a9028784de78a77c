import { isLoopback } from "../../lib/loopback.ts";

/** The settings of an MCP port: where it listens and its token rule. */
export interface McpAuthSettings {
  host: string;
  api_token?: string;
  mcp_auth: "auto" | "always";
}

/** The token the MCP ports require: off loopback always (like the API), on loopback with `mcp_auth: always`. */
export function mcpToken(server: McpAuthSettings): string | undefined {
  return !isLoopback(server.host) || server.mcp_auth === "always" ? server.api_token : undefined;
}
