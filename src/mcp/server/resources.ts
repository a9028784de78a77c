import { listAgents } from "../../client/agents.ts";
import type { StationClient } from "../../client/http.ts";
import { getRun } from "../../client/workflow_runs.ts";
import { listWorkflows } from "../../client/workflows.ts";
// docs/workflows.md is imported as text, so it is part of the module graph: `deno compile` embeds it and
// nothing reads the source tree at run time (docs/design/process-model.md#one-binary).
import WORKFLOW_DSL from "../../../docs/workflows.md" with { type: "text" };
import type { McpResourceInfo, McpResourceTemplateInfo, ResourceCatalog } from "./server.ts";

const JSON_TYPE = "application/json";

const STATIC: (McpResourceInfo & { read(client: StationClient): Promise<string> })[] = [
  {
    uri: "station://workflows",
    name: "workflows",
    description: "The stored workflows (as GET /api/v1/workflows answers)",
    mimeType: JSON_TYPE,
    read: async (client) => JSON.stringify({ workflows: await listWorkflows(client) }),
  },
  {
    uri: "station://agents",
    name: "agents",
    description: "The agents of the configured environment (as GET /api/v1/agents answers)",
    mimeType: JSON_TYPE,
    read: async (client) => JSON.stringify(await listAgents(client)),
  },
  {
    uri: "station://environments",
    name: "environments",
    description: "The environments under $STATION_HOME/environments",
    mimeType: JSON_TYPE,
    read: async (client) => JSON.stringify(await client.json("GET", "/api/v1/environments")),
  },
  {
    uri: "station://docs/workflow-dsl",
    name: "workflow-dsl",
    description: "The workflow DSL reference: states, step types, expressions, inputs (docs/workflows.md)",
    mimeType: "text/markdown",
    read: () => Promise.resolve(WORKFLOW_DSL),
  },
];

const RUN_TEMPLATE: McpResourceTemplateInfo = {
  uriTemplate: "station://runs/{id}",
  name: "run",
  description: "A workflow run: status, input, result or error (as GET /api/v1/workflow-runs/{id} answers)",
  mimeType: JSON_TYPE,
};

/** The management server's resources, read through the API like its tools. */
export function managementResources(client: StationClient): ResourceCatalog {
  return {
    list: () => STATIC.map(({ read: _read, ...info }) => info),
    templates: () => [RUN_TEMPLATE],
    read: async (uri) => {
      const fixed = STATIC.find((r) => r.uri === uri);
      if (fixed) return { mimeType: fixed.mimeType, text: await fixed.read(client) };
      const run = /^station:\/\/runs\/([^/?#]+)$/.exec(uri);
      if (run) {
        return {
          mimeType: JSON_TYPE,
          text: JSON.stringify(await getRun(client, decodeURIComponent(run[1]))),
        };
      }
      return undefined;
    },
  };
}
