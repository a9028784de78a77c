import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { SyncBody, SyncReport } from "../../contract/sync.ts";
import {
  DefinitionInput,
  DeleteWorkflowQuery,
  DeleteWorkflowResult,
  SaveResult,
  ValidationReport,
  VersionQuery,
  WorkflowEnvelope,
  WorkflowIdParam,
  WorkflowList,
  WorkflowListQuery,
  WorkflowShow,
  WorkflowVersionList,
  WorkflowVersionParam,
} from "../../contract/workflows.ts";
import { errorMessage, StationError } from "../../errors.ts";
import { requireShallow } from "../../lib/nesting.ts";
import type { StationContext } from "../../context.ts";
import { validateSource } from "../../workflows/definition/load.ts";
import { referenceIssues } from "../../workflows/definition/references.ts";
import { validateDefinition, type ValidationResult } from "../../workflows/definition/validate.ts";
import { ensureEnvironment } from "../../environments/environments.ts";
import { syncWholeEnvironment } from "../../environments/sync.ts";
import { errors, json, openapi, router } from "../openapi.ts";

/**
 * /api/v1/workflows: create, validate, list, show (any version), update, disable/enable, delete.
 * A definition is sent as JSON, or as the raw file with `Content-Type: application/yaml`.
 * Invalid definitions are 422 `workflow_invalid` with the validator's issues in `details`.
 */

const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

/** Reads a definition body (JSON or YAML) and validates it; `defaultId` fills a missing id. */
async function readDefinition(c: Context, defaultId?: string): Promise<ValidationResult> {
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const text = await c.req.text();
  if (YAML_TYPES.includes(type)) return refuseTooLarge(validateSource(text, { defaultId }));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new StationError("invalid_json", `request body is not valid JSON: ${errorMessage(err)}`, {
      hint: "send the definition as JSON, or the YAML file with Content-Type: application/yaml",
    });
  }
  return validateDefinition(requireShallow(body, "request body"), { defaultId });
}

/**
 * A document whose aliases expand past its limit is refused outright (413), not answered with its issues:
 * neither the expanded data nor a report of it is built or sent.
 */
function refuseTooLarge(result: ValidationResult): ValidationResult {
  const issue = result.errors.find((e) => e.code === "document_too_large");
  if (issue) throw new StationError("document_too_large", issue.message, { hint: issue.hint });
  return result;
}

/** Throws 422 `workflow_invalid` carrying the issues when the definition is invalid. */
function requireValid(result: ValidationResult) {
  if (result.valid && result.definition) return result.definition;
  const first = result.errors[0];
  throw new StationError(
    "workflow_invalid",
    `the workflow definition is invalid (${result.errors.length} error${
      result.errors.length === 1 ? "" : "s"
    }): ` +
      `${first.path}: ${first.message}`,
    {
      hint: first.hint ?? "POST /api/v1/workflows/validate lists every issue",
      details: { errors: result.errors, warnings: result.warnings },
    },
  );
}

/**
 * The valid definition whose agents and images the station has, else `workflow_invalid` listing what it
 * names that does not exist or is not allowed (a stored workflow would only fail at run time).
 */
function requireResolvable(ctx: StationContext, result: ValidationResult) {
  const def = requireValid(result);
  const issues = referenceIssues(def, ctx.references());
  return issues.length ? requireValid({ ...result, valid: false, errors: issues }) : def;
}

const definitionBody = {
  required: true,
  content: {
    "application/json": { schema: DefinitionInput },
    "application/yaml": { schema: { type: "string" as const, description: "the workflow file as written" } },
  },
};
const tags = ["workflows"];
const byId = { params: WorkflowIdParam };

const validateRoute = createRoute({
  method: "post",
  path: "/validate",
  tags,
  summary: "Validate a definition without storing it",
  request: { body: definitionBody },
  responses: {
    200: json(ValidationReport, "every error and warning"),
    ...errors("invalid_json", "document_too_large"),
  },
});
const createWorkflow = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Store a workflow (a new version only when the content changed)",
  request: { body: definitionBody },
  responses: {
    201: json(SaveResult, "created"),
    200: json(SaveResult, "updated or unchanged"),
    ...errors("invalid_json", "workflow_invalid", "document_too_large"),
  },
});
const listWorkflows = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List stored workflows",
  request: { query: WorkflowListQuery },
  responses: { 200: json(WorkflowList, "the workflows"), ...errors("invalid_request") },
});
const showWorkflow = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "A workflow's latest version (or ?version=n) with its definition",
  request: { ...byId, query: VersionQuery },
  responses: {
    200: json(WorkflowShow, "the version"),
    ...errors("invalid_request", "workflow_not_found", "workflow_version_not_found"),
  },
});
const listVersions = createRoute({
  method: "get",
  path: "/{id}/versions",
  tags,
  summary: "A workflow's versions (without definitions)",
  request: byId,
  responses: { 200: json(WorkflowVersionList, "the versions"), ...errors("workflow_not_found") },
});
const showVersion = createRoute({
  method: "get",
  path: "/{id}/versions/{version}",
  tags,
  summary: "One version of a workflow with its definition",
  request: { params: WorkflowVersionParam },
  responses: {
    200: json(WorkflowShow, "the version"),
    ...errors("invalid_request", "workflow_not_found", "workflow_version_not_found"),
  },
});
const updateWorkflow = createRoute({
  method: "put",
  path: "/{id}",
  tags,
  summary: "Store a new version of a workflow (the body's id, if any, must match)",
  request: { ...byId, body: definitionBody },
  responses: {
    200: json(SaveResult, "updated or unchanged"),
    ...errors(
      "invalid_json",
      "workflow_id_mismatch",
      "workflow_not_found",
      "workflow_invalid",
      "document_too_large",
    ),
  },
});
const toggle = (verb: "enable" | "disable") =>
  createRoute({
    method: "post",
    path: `/{id}/${verb}`,
    tags,
    summary: `${verb === "enable" ? "Enable" : "Disable"} a workflow`,
    request: byId,
    responses: { 200: json(WorkflowEnvelope, "the workflow"), ...errors("workflow_not_found") },
  });
const deleteWorkflow = createRoute({
  method: "delete",
  path: "/{id}",
  tags,
  summary: "Disable a workflow, or with ?purge=true delete it and its versions",
  request: { ...byId, query: DeleteWorkflowQuery },
  responses: {
    200: json(DeleteWorkflowResult, "disabled or deleted"),
    ...errors("invalid_request", "workflow_not_found", "workflow_in_use"),
  },
});

/** The workflow routes, mounted at /api/v1/workflows (starting a run of one is in workflow_runs.ts). */
export function workflowRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const store = ctx.workflows;
  const raw = { body: "raw" } as const;
  openapi(app, validateRoute, async (c) => c.json(await readDefinition(c), 200), raw);
  openapi(app, createWorkflow, async (c) => {
    const result = await readDefinition(c);
    const saved = {
      ...store.save(requireResolvable(ctx, result), { source: "api" }),
      warnings: result.warnings,
    };
    return saved.outcome === "created" ? c.json(saved, 201) : c.json(saved, 200);
  }, raw);
  openapi(app, listWorkflows, (c) => c.json({ workflows: store.list(c.req.valid("query")) }, 200));
  openapi(app, showWorkflow, (c) => {
    const { id } = c.req.valid("param");
    return c.json({ workflow: store.record(id), ...store.get(id, c.req.valid("query").version) }, 200);
  });
  openapi(app, listVersions, (c) => c.json({ versions: store.versions(c.req.valid("param").id) }, 200));
  openapi(app, showVersion, (c) => {
    const { id, version } = c.req.valid("param");
    return c.json({ workflow: store.record(id), ...store.get(id, version) }, 200);
  });
  openapi(app, updateWorkflow, async (c) => {
    const { id } = c.req.valid("param");
    store.record(id);
    const result = await readDefinition(c, id);
    const def = requireResolvable(ctx, result);
    if (def.id !== id) {
      throw new StationError(
        "workflow_id_mismatch",
        `the body defines \`${def.id}\`, the path names \`${id}\``,
        { hint: `PUT /api/v1/workflows/${def.id}, or set id: ${id} (or leave id out)` },
      );
    }
    return c.json({ ...store.save(def, { source: "api" }), warnings: result.warnings }, 200);
  }, raw);
  openapi(app, toggle("enable"), (c) => c.json({ workflow: store.enable(c.req.valid("param").id) }, 200));
  openapi(app, toggle("disable"), (c) => c.json({ workflow: store.disable(c.req.valid("param").id) }, 200));
  openapi(app, deleteWorkflow, (c) => {
    const { id } = c.req.valid("param");
    if (c.req.valid("query").purge === "true") {
      store.delete(id);
      return c.json({ id, deleted: true as const }, 200);
    }
    return c.json({ workflow: store.disable(id), deleted: false as const }, 200);
  });
  return app;
}

const syncRoute = createRoute({
  method: "post",
  path: "/",
  tags,
  summary:
    "Sync an environment's files (MCP server configs, agents, then workflows) into the station (DeclarativeSync)",
  request: { body: { content: { "application/json": { schema: SyncBody } } } },
  responses: {
    200: json(SyncReport, "what the sync did"),
    ...errors("invalid_json", "invalid_request", "environment_not_found", "invalid_environment"),
  },
});

/** POST /api/v1/sync `{environment?}`: DeclarativeSync of an environment's files. */
export function syncRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, syncRoute, async (c) => {
    const body = c.req.valid("json");
    const defaultEnvironment = ctx.config.values.workflows.environment;
    const environment = body.environment ?? defaultEnvironment;
    // The default environment exists on every station, even one started without the start's sync.
    if (environment === defaultEnvironment) {
      await ensureEnvironment(ctx.config.paths.environments, environment);
    }
    const report = await syncWholeEnvironment(environment, {
      db: ctx.db,
      workflows: ctx.workflows,
      environmentsDir: ctx.config.paths.environments,
      trust: body.trust,
      sandbox: ctx.config.values.sandbox,
    });
    return c.json(report, 200);
  });
  return app;
}
