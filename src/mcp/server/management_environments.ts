import type { StationClient } from "../../client/http.ts";
import { syncWorkflows } from "../../client/workflows.ts";
import { SyncBody } from "../../contract/sync.ts";
import { z } from "zod";
import { type McpToolSpec, zodTool } from "./tool.ts";

/** The environment tools of the management server. */
export function environmentTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "list_environments",
      "List the environments (folders of workflow and agent files under $STATION_HOME/environments).",
      z.strictObject({}),
      // The environments API (GET /api/v1/environments) answers the summaries; its schema is its own.
      () => client.json("GET", "/api/v1/environments"),
    ),
    zodTool(
      "sync_environment",
      "Sync an environment's files into the station as `stn sync` does (default: the configured " +
        "environment): new and changed files are stored, removed ones disabled. Reports what changed and " +
        "the invalid files. Unapproved MCP servers are not started (a person runs `stn mcp approve`).",
      // No `trust` here: approving a command to run is not for whoever drives the MCP client.
      SyncBody.omit({ trust: true }),
      (a) => syncWorkflows(client, a.environment),
    ),
  ];
}
