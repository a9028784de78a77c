/** What an MCP server offers (tools, resources), and the SDK server built from it for one session. */

import { toStationError } from "../../errors.ts";
import { newSdkServer, protocolError, type SdkServer } from "./sdk.ts";
import { callToolSafely, type McpToolSpec } from "./tool.ts";

/** A resource listed by resources/list. */
export interface McpResourceInfo {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
}

/** A family of resources addressed by a URI template (RFC 6570), e.g. station://runs/{id}. */
export interface McpResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: string;
}

/** What a server offers as resources; `read` throws a StationError for a URI it does not know. */
export interface ResourceCatalog {
  list(): McpResourceInfo[];
  templates(): McpResourceTemplateInfo[];
  read(uri: string): Promise<{ mimeType: string; text: string } | undefined>;
}

/** One of stn's MCP servers: its name, its tools (asked again on every list, so they may change) and resources. */
export interface McpCatalog {
  name: string;
  version: string;
  instructions: string;
  tools(): McpToolSpec[] | Promise<McpToolSpec[]>;
  resources?: ResourceCatalog;
}

/** Builds a fresh SDK server answering from the catalog: one per session (an SDK server serves one transport). */
export function serverFor(catalog: McpCatalog): SdkServer {
  const server = newSdkServer({
    name: catalog.name,
    version: catalog.version,
    instructions: catalog.instructions,
    resources: catalog.resources !== undefined,
  });
  server.handle("tools/list", async () => ({
    tools: (await catalog.tools()).map((t) => ({
      name: t.name,
      ...(t.title && { title: t.title }),
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema && { outputSchema: t.outputSchema }),
      ...(t.annotations && { annotations: t.annotations }),
    })),
  }));
  server.handle(
    "tools/call",
    async (params: { name: string; arguments?: Record<string, unknown> }, extra) => {
      const tool = (await catalog.tools()).find((t) => t.name === params.name);
      if (!tool) {
        throw protocolError(
          "invalid_params",
          `unknown tool ${params.name}: tools/list names the tools of this server`,
        );
      }
      return await callToolSafely(tool, params.arguments ?? {}, extra.signal);
    },
  );
  const resources = catalog.resources;
  if (resources) {
    server.handle("resources/list", () => Promise.resolve({ resources: resources.list() }));
    server.handle(
      "resources/templates/list",
      () => Promise.resolve({ resourceTemplates: resources.templates() }),
    );
    server.handle("resources/read", async (params: { uri: string }) => {
      let content: { mimeType: string; text: string } | undefined;
      try {
        content = await resources.read(params.uri);
      } catch (err) {
        // A resource that names a missing thing (station://runs/<unknown>) carries the API's error body.
        const body = toStationError(err).toBody();
        throw protocolError("resource_not_found", `${params.uri}: ${body.error.message}`, body);
      }
      if (!content) {
        throw protocolError(
          "resource_not_found",
          `unknown resource ${params.uri}: resources/list names them`,
        );
      }
      return { contents: [{ uri: params.uri, ...content }] };
    });
  }
  return server;
}
