import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import {
  CopyEnvironmentBody,
  CreateEnvironmentBody,
  DeletedEnvironment,
  EnvironmentDetails,
  EnvironmentList,
  EnvironmentParam,
  SetVariableBody,
  SetVariableResult,
  ShownVariable,
  UnsetVariableResult,
  VariableList,
  VariableParam,
} from "../../contract/environments.ts";
import {
  copyEnvironment,
  createEnvironment,
  deleteEnvironment,
  listEnvironments,
} from "../../environments/environments.ts";
import { environmentStatus } from "../../environments/status.ts";
import { requireEnvironment } from "../../environments/names.ts";
import { getVariable, listVariables, setVariable, unsetVariable } from "../../environment_files/variables.ts";
import { log } from "../../log.ts";
import { approveEnvironment } from "../../mcp/mod.ts";
import { McpApprovals } from "../../contract/sync.ts";
import type { StationContext } from "../../context.ts";
import { errors, json, openapi, router } from "../openapi.ts";

/**
 * /api/v1/environments: the environment folders under $STATION_HOME/environments and their
 * variables.yml. A secret-looking variable's value never leaves the server: answers carry the mask.
 */

const tags = ["environments"];
const byName = { params: EnvironmentParam };
const byVariable = { params: VariableParam };
const ServerParam = EnvironmentParam.extend({ server: z.string().min(1).describe("the MCP server's name") });

const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List environments with their agent, MCP server and workflow counts",
  responses: { 200: json(EnvironmentList, "the environments") },
});
const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Create an empty environment (agents/, mcp-configs/, workflows/)",
  request: { body: { content: { "application/json": { schema: CreateEnvironmentBody } } } },
  responses: {
    201: json(EnvironmentDetails, "created"),
    ...errors("invalid_json", "invalid_request", "invalid_environment", "environment_exists"),
  },
});
const showRoute = createRoute({
  method: "get",
  path: "/{name}",
  tags,
  summary:
    "An environment's agents (validated), MCP servers (tools and errors of the last sync), workflows and the variables it needs",
  request: byName,
  responses: {
    200: json(EnvironmentDetails, "the environment"),
    ...errors("invalid_environment", "environment_not_found", "variables_invalid"),
  },
});
const remove = createRoute({
  method: "delete",
  path: "/{name}",
  tags,
  summary: "Delete an environment folder; the workflows its files defined are disabled",
  request: byName,
  responses: {
    200: json(DeletedEnvironment, "deleted"),
    ...errors("invalid_environment", "environment_not_found"),
  },
});
const copy = createRoute({
  method: "post",
  path: "/{name}/copy",
  tags,
  summary: "Copy an environment (variables.yml included) into a new one",
  request: { ...byName, body: { content: { "application/json": { schema: CopyEnvironmentBody } } } },
  responses: {
    201: json(EnvironmentDetails, "the copy"),
    ...errors(
      "invalid_json",
      "invalid_request",
      "invalid_environment",
      "environment_not_found",
      "environment_exists",
      "unsafe_path",
    ),
  },
});
const listVars = createRoute({
  method: "get",
  path: "/{name}/variables",
  tags,
  summary: "The variables in an environment's variables.yml (secrets masked)",
  request: byName,
  responses: {
    200: json(VariableList, "the variables"),
    ...errors("invalid_environment", "environment_not_found", "variables_invalid"),
  },
});
const getVar = createRoute({
  method: "get",
  path: "/{name}/variables/{variable}",
  tags,
  summary: "One variable (a secret's value is masked)",
  request: byVariable,
  responses: {
    200: json(ShownVariable, "the variable"),
    ...errors(
      "invalid_environment",
      "environment_not_found",
      "invalid_variable_name",
      "variable_not_found",
      "variables_invalid",
    ),
  },
});
const setVar = createRoute({
  method: "put",
  path: "/{name}/variables/{variable}",
  tags,
  summary: "Set a variable in variables.yml (created with mode 0600)",
  request: { ...byVariable, body: { content: { "application/json": { schema: SetVariableBody } } } },
  responses: {
    200: json(SetVariableResult, "set (value masked when secret)"),
    ...errors(
      "invalid_json",
      "invalid_request",
      "invalid_environment",
      "environment_not_found",
      "invalid_variable_name",
      "variables_invalid",
    ),
  },
});
const unsetVar = createRoute({
  method: "delete",
  path: "/{name}/variables/{variable}",
  tags,
  summary: "Remove a variable from variables.yml",
  request: byVariable,
  responses: {
    200: json(UnsetVariableResult, "removed"),
    ...errors(
      "invalid_environment",
      "environment_not_found",
      "invalid_variable_name",
      "variable_not_found",
      "variables_invalid",
    ),
  },
});

const approve = createRoute({
  method: "post",
  path: "/{name}/mcp-servers/{server}/approve",
  tags,
  summary:
    "Approve an MCP server as its config writes it now, so sync, agents and workflows may start it (stn mcp approve)",
  request: { params: ServerParam },
  responses: {
    200: json(McpApprovals, "approved (what it launches, and the digest recorded)"),
    ...errors("invalid_environment", "environment_not_found", "mcp_server_not_found"),
  },
});
const trust = createRoute({
  method: "post",
  path: "/{name}/trust",
  tags,
  summary: "Approve every MCP server of the environment's configs as written now (stn env trust)",
  request: byName,
  responses: {
    200: json(McpApprovals, "approved"),
    ...errors("invalid_environment", "environment_not_found"),
  },
});

/** The environment routes, mounted at /api/v1/environments. */
export function environmentRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const dir = ctx.config.paths.environments;
  const show = (name: string) => environmentStatus(ctx.db, dir, name);
  openapi(app, list, async (c) => c.json({ environments: await listEnvironments(dir) }, 200));
  openapi(app, create, async (c) => {
    const { name } = c.req.valid("json");
    await createEnvironment(dir, name);
    log.info("environment created", { environment: name });
    return c.json(await show(name), 201);
  });
  openapi(app, showRoute, async (c) => c.json(await show(c.req.valid("param").name), 200));
  openapi(app, remove, async (c) => {
    const { name } = c.req.valid("param");
    await deleteEnvironment(dir, name);
    // Its files are gone, so what they defined goes too, as a sync of the empty folder would do.
    const disabled = ctx.workflows.list({ environment: name, status: "active" })
      .filter((w) => w.source === "file")
      .map((w) => ctx.workflows.disable(w.id, "file_removed").id);
    log.info("environment deleted", { environment: name, disabled_workflows: disabled.length });
    return c.json({ name, deleted: true as const, disabled_workflows: disabled }, 200);
  });
  openapi(app, copy, async (c) => {
    const { name } = c.req.valid("param");
    const { to } = c.req.valid("json");
    await copyEnvironment(dir, name, to);
    log.info("environment copied", { from: name, to });
    return c.json(await show(to), 201);
  });
  const approveIn = async (name: string, servers?: string[]) => {
    const approved = await approveEnvironment(ctx.db, name, await requireEnvironment(dir, name), servers);
    log.info("mcp servers approved", { environment: name, servers: approved.map((a) => a.server) });
    return { environment: name, approved };
  };
  openapi(app, approve, async (c) => {
    const { name, server } = c.req.valid("param");
    return c.json(await approveIn(name, [server]), 200);
  });
  openapi(app, trust, async (c) => c.json(await approveIn(c.req.valid("param").name), 200));
  openapi(app, listVars, async (c) => {
    const { name } = c.req.valid("param");
    return c.json(
      { environment: name, variables: await listVariables(await requireEnvironment(dir, name)) },
      200,
    );
  });
  openapi(app, getVar, async (c) => {
    const { name, variable } = c.req.valid("param");
    return c.json(await getVariable(await requireEnvironment(dir, name), name, variable), 200);
  });
  openapi(app, setVar, async (c) => {
    const { name, variable } = c.req.valid("param");
    const result = await setVariable(
      await requireEnvironment(dir, name),
      variable,
      c.req.valid("json").value,
    );
    // The name only: a value, secret or not, is never logged.
    log.info("variable set", { environment: name, variable });
    return c.json(result, 200);
  });
  openapi(app, unsetVar, async (c) => {
    const { name, variable } = c.req.valid("param");
    await unsetVariable(await requireEnvironment(dir, name), name, variable);
    log.info("variable removed", { environment: name, variable });
    return c.json({ name: variable, removed: true as const }, 200);
  });
  return app;
}
