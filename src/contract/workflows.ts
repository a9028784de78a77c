/** The contract of /api/v1/workflows: stored workflows, versions and validation results. */

import { z } from "zod";

/** A stored workflow (its latest version number, status and origin). */
export const WorkflowRecord = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  status: z.enum(["active", "disabled"]),
  disabled_reason: z.enum(["user", "file_removed"]).nullable(),
  version: z.number(),
  source: z.enum(["api", "file"]),
  environment: z.string().nullable(),
  source_path: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: "Workflow" });
export type WorkflowRecord = z.infer<typeof WorkflowRecord>;

/**
 * A normalised workflow definition as stored. Only its frame is spelled out here; the step types and
 * their fields are the workflow DSL's (docs/workflows), which the validator checks.
 */
export const Definition = z.looseObject({
  id: z.string(),
  states: z.array(z.looseObject({ id: z.string(), type: z.string() })),
}).meta({ id: "WorkflowDefinition" });

/** A definition as sent: JSON here, or the YAML file with Content-Type: application/yaml. */
export const DefinitionInput = z.record(z.string(), z.unknown()).meta({ id: "WorkflowDefinitionInput" });

/** One version of a workflow, without its definition. */
export const WorkflowVersionInfo = z.looseObject({
  workflow_id: z.string(),
  version: z.number(),
  hash: z.string(),
  label: z.string().nullable(),
  created_at: z.string(),
}).meta({ id: "WorkflowVersionInfo" });
export type WorkflowVersionInfo = z.infer<typeof WorkflowVersionInfo>;

/** A version with its definition and its workflow's record (GET /api/v1/workflows/{id}[/versions/{n}]). */
export const WorkflowShow = WorkflowVersionInfo.extend({ definition: Definition, workflow: WorkflowRecord })
  .meta({ id: "WorkflowShow" });
export type WorkflowShow = z.infer<typeof WorkflowShow>;

/** One problem (or warning) the validator found, with its position in the file when known. */
export const ValidationIssue = z.looseObject({
  code: z.string(),
  path: z.string().describe("JSON pointer into the definition as written"),
  line: z.number().optional(),
  column: z.number().optional(),
  message: z.string(),
  hint: z.string().optional(),
}).meta({ id: "ValidationIssue" });
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/** POST /api/v1/workflows/validate */
export const ValidationReport = z.looseObject({
  valid: z.boolean(),
  errors: z.array(ValidationIssue),
  warnings: z.array(ValidationIssue),
  definition: Definition.optional().describe("the normalised definition, when valid"),
}).meta({ id: "ValidationReport" });
export type ValidationReport = z.infer<typeof ValidationReport>;

/** POST /api/v1/workflows, PUT /api/v1/workflows/{id} */
export const SaveResult = z.looseObject({
  workflow: WorkflowRecord,
  version: z.number(),
  outcome: z.enum(["created", "updated", "unchanged"]),
  enabled: z.boolean().describe("true when this save re-enabled a disabled workflow"),
  warnings: z.array(ValidationIssue),
}).meta({ id: "SaveResult" });
export type SaveResult = z.infer<typeof SaveResult>;

export const WorkflowList = z.looseObject({ workflows: z.array(WorkflowRecord) }).meta({
  id: "WorkflowList",
});
export const WorkflowVersionList = z.looseObject({ versions: z.array(WorkflowVersionInfo) })
  .meta({ id: "WorkflowVersionList" });
export const WorkflowEnvelope = z.looseObject({ workflow: WorkflowRecord }).meta({ id: "WorkflowEnvelope" });
export type WorkflowEnvelope = z.infer<typeof WorkflowEnvelope>;

/** DELETE /api/v1/workflows/{id}: disabled (kept), or with ?purge=true deleted with its versions. */
export const DeleteWorkflowResult = z.union([
  z.looseObject({ id: z.string(), deleted: z.literal(true) }),
  z.looseObject({ workflow: WorkflowRecord, deleted: z.literal(false) }),
]).meta({ id: "DeleteWorkflowResult" });

export const WorkflowListQuery = z.strictObject({ status: z.enum(["active", "disabled"]).optional() });
export const VersionQuery = z.object({ version: z.coerce.number().int().min(1).optional() });
export const DeleteWorkflowQuery = z.strictObject({ purge: z.enum(["true", "false"]).optional() });
export const WorkflowIdParam = z.object({ id: z.string().min(1) });
export const WorkflowVersionParam = z.object({
  id: z.string().min(1),
  version: z.coerce.number().int().min(1),
});
