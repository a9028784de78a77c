import { z } from "zod";
import { AgentSyncReport } from "./agents.ts";
import { ValidationIssue } from "./workflows.ts";

/** POST /api/v1/sync `{environment?}` (default: the configured environment). */
export const SyncBody = z.strictObject({ environment: z.string().min(1).optional() }).meta({
  id: "SyncBody",
});

const SyncedWorkflow = z.looseObject({ id: z.string(), version: z.number(), file: z.string() });

/** What a sync of an environment's agent and workflow files did, per outcome. */
export const SyncReport = z.looseObject({
  environment: z.string(),
  directory: z.string(),
  created: z.array(SyncedWorkflow),
  updated: z.array(SyncedWorkflow),
  unchanged: z.array(SyncedWorkflow),
  enabled: z.array(z.string()),
  disabled: z.array(z.string()),
  invalid: z.array(z.looseObject({ file: z.string(), errors: z.array(ValidationIssue) })),
  agents: AgentSyncReport.optional().describe("the environment's agents, synced before its workflows"),
}).meta({ id: "SyncReport" });
export type SyncReport = z.infer<typeof SyncReport>;
