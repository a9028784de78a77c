/** The contract of /api/v1/environments: environments, their variables, copies. */

import { z } from "zod";
import { ValidationIssue } from "./workflows.ts";

/** An environment name in a path: a folder name under $STATION_HOME/environments. */
export const EnvironmentParam = z.object({
  name: z.string().min(1).describe("the environment, e.g. default"),
});

/** An environment and one of its variables in a path. */
export const VariableParam = EnvironmentParam.extend({
  variable: z.string().min(1).describe("the variable, e.g. GITHUB_TOKEN"),
});

/** One line of the environment list. */
export const EnvironmentSummary = z.looseObject({
  name: z.string(),
  path: z.string(),
  agents: z.number(),
  mcp_servers: z.number(),
  workflows: z.number(),
  missing_variables: z.number().describe("placeholders in its MCP configs with no value"),
  error: z.string().optional().describe("why the environment could not be read (e.g. a bad variables.yml)"),
}).meta({ id: "EnvironmentSummary" });
export type EnvironmentSummary = z.infer<typeof EnvironmentSummary>;

export const EnvironmentList = z.looseObject({ environments: z.array(EnvironmentSummary) }).meta({
  id: "EnvironmentList",
});

/** A variable an environment's MCP configs ask for. */
export const NeededVariable = z.looseObject({
  name: z.string(),
  secret: z.boolean().describe("the name contains TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL or AUTH"),
  source: z.enum(["variables.yml", "environment", "missing"]).describe(
    "where its value comes from: variables.yml, the server's process environment, or nowhere",
  ),
  used_by: z.array(z.string()).describe("the MCP config files that use it"),
}).meta({ id: "NeededVariable" });
export type NeededVariable = z.infer<typeof NeededVariable>;

/** An MCP config file as read (placeholders not filled, servers not started). */
export const McpConfigFile = z.looseObject({
  file: z.string(),
  servers: z.array(z.looseObject({
    name: z.string(),
    transport: z.enum(["stdio", "http", "unknown"]),
    program: z.string().optional().describe("the program a stdio server runs"),
    variables: z.array(z.string()).describe("the placeholders this server uses"),
  })),
  variables: z.array(z.string()),
  error: z.string().optional(),
}).meta({ id: "McpConfigFile" });

/** An agent file of the environment: checked as sync checks it, and compared with the agents table. */
export const AgentStatus = z.looseObject({
  name: z.string(),
  file: z.string(),
  status: z.enum(["valid", "invalid"]),
  errors: z.array(ValidationIssue).describe("why it is invalid, with line and column"),
  warnings: z.array(ValidationIssue).describe("what stn reads differently, or tools not discovered yet"),
  synced: z.enum(["current", "outdated", "never"]).describe(
    "whether the station holds this version of the file (`stn sync` stores it)",
  ),
}).meta({ id: "EnvironmentAgent" });

/** An MCP server of the environment's configs, with what its last discovery (`stn sync`) found. */
export const McpServerStatus = z.looseObject({
  name: z.string(),
  file: z.string().describe("the config file it is defined in"),
  transport: z.enum(["stdio", "http", "unknown"]),
  status: z.enum(["ok", "failed", "never_synced"]),
  tools: z.number().nullable().describe("tools in the catalogue; null when never synced"),
  discovered_at: z.string().nullable(),
  error: z.looseObject({ code: z.string(), message: z.string(), hint: z.string().optional() }).optional()
    .describe("why the last discovery failed"),
}).meta({ id: "EnvironmentMcpServer" });

/** GET /api/v1/environments/{name}: its agents, MCP servers, workflows and the variables it needs. */
export const EnvironmentDetails = z.looseObject({
  name: z.string(),
  path: z.string(),
  agents: z.array(AgentStatus),
  mcp_configs: z.array(McpConfigFile),
  mcp_servers: z.array(McpServerStatus),
  workflows: z.array(z.looseObject({ id: z.string().nullable(), file: z.string() })),
  variables: z.array(NeededVariable),
  missing: z.array(z.string()),
}).meta({ id: "EnvironmentDetails" });
export type EnvironmentDetails = z.infer<typeof EnvironmentDetails>;

/** POST /api/v1/environments */
export const CreateEnvironmentBody = z.strictObject({ name: z.string().min(1) }).meta({
  id: "CreateEnvironmentBody",
});

/** POST /api/v1/environments/{name}/copy */
export const CopyEnvironmentBody = z.strictObject({
  to: z.string().min(1).describe("the new environment's name"),
}).meta({ id: "CopyEnvironmentBody" });

/** DELETE /api/v1/environments/{name} */
export const DeletedEnvironment = z.looseObject({
  name: z.string(),
  deleted: z.literal(true),
  disabled_workflows: z.array(z.string()).describe("workflows its files defined, now disabled"),
}).meta({ id: "DeletedEnvironment" });

/** A variable as the API shows it: a secret's value is always the mask. */
export const ShownVariable = z.looseObject({
  name: z.string(),
  value: z.string().describe("the value, or ******** for a secret"),
  secret: z.boolean(),
}).meta({ id: "Variable" });
export type ShownVariable = z.infer<typeof ShownVariable>;

export const VariableList = z.looseObject({
  environment: z.string(),
  variables: z.array(ShownVariable),
}).meta({ id: "VariableList" });
export type VariableList = z.infer<typeof VariableList>;

/** PUT /api/v1/environments/{name}/variables/{variable} */
export const SetVariableBody = z.strictObject({ value: z.string().max(64 * 1024) }).meta({
  id: "SetVariableBody",
});

export const SetVariableResult = ShownVariable.extend({ created: z.boolean() }).meta({
  id: "SetVariableResult",
});
export type SetVariableResult = z.infer<typeof SetVariableResult>;

export const UnsetVariableResult = z.looseObject({ name: z.string(), removed: z.literal(true) }).meta({
  id: "UnsetVariableResult",
});
