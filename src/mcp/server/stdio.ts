import process from "node:process";
import type { StationClient } from "../../client/http.ts";
import { managementCatalog } from "./management.ts";
import { newStdioTransport } from "./sdk.ts";
import { type McpCatalog, serverFor } from "./server.ts";

/**
 * Serves the management server over this process's stdin/stdout (`stn mcp stdio`) until the client
 * closes stdin. Its tools call the API through `client`: a running server's, or the embedded runtime's.
 */
export async function serveStdio(client: StationClient): Promise<void> {
  await serveCatalogStdio(managementCatalog(client));
}

/** Serves a catalog's tools over this process's stdin/stdout until the client closes stdin. */
export async function serveCatalogStdio(catalog: McpCatalog): Promise<void> {
  const server = serverFor(catalog);
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await server.connect(newStdioTransport());
  await ended;
  await server.close();
}
