/** The contract of /api/v1/agents: an agent as loaded from its `.prompt` file, and lists of them. */

import { z } from "zod";
import { AgentDefinitionSchema } from "./agent_definition.ts";
import { ValidationIssue } from "./workflows.ts";

/** `?environment=` of the agent routes (default: the configured environment, `workflows.environment`). */
export const AgentEnvironmentQuery = z.object({
  environment: z.string().min(1).optional().describe("the environment (default: workflows.environment)"),
});

/** GET /api/v1/agents/{name} */
export const AgentNameParam = z.object({
  name: z.string().min(1).describe("the agent's name: its file name without .prompt"),
});

/**
 * An agent as loaded from its `.prompt` file (docs/design/agents.md#prompt-files), `source` being the file as
 * written.
 */
export const Agent = AgentDefinitionSchema.loose().meta({ id: "Agent" });
export type Agent = z.infer<typeof Agent>;

/** One line of GET /api/v1/agents. */
export const AgentSummary = z.looseObject({
  name: z.string(),
  status: z.enum(["ok", "pending", "invalid"]).describe(
    "pending: it names MCP tools the catalogue lacks while servers are not discovered yet; invalid: no " +
      "discovered server offers them; either way it cannot run",
  ),
  problem: z.string().nullable().describe("why it cannot run"),
  environment: z.string(),
  description: z.string(),
  model: z.string().nullable().describe("provider/name; null: the configured ai.model"),
  tags: z.array(z.string()),
  max_steps: z.number(),
  tools: z.array(z.string()),
  agents: z.array(z.string()),
  sandbox: z.boolean().describe("whether the agent gets sandbox tools"),
  schedule: z.string().nullable().describe("the cron expression, when scheduled"),
  path: z.string(),
  updated_at: z.string(),
}).meta({ id: "AgentSummary" });
export type AgentSummary = z.infer<typeof AgentSummary>;

/** GET /api/v1/agents */
export const AgentList = z.looseObject({
  environment: z.string(),
  agents: z.array(AgentSummary),
  invalid: z.array(z.looseObject({ name: z.string(), file: z.string(), problem: z.string() })).describe(
    "agent files sync refused (not runnable), each with its first problem",
  ),
}).meta({ id: "AgentList" });
export type AgentList = z.infer<typeof AgentList>;

/** GET /api/v1/agents/{name} */
export const AgentShow = z.looseObject({ agent: Agent, created_at: z.string(), updated_at: z.string() })
  .meta({ id: "AgentShow" });
export type AgentShow = z.infer<typeof AgentShow>;

const SyncedAgent = z.looseObject({ name: z.string(), file: z.string() });

/** The `agents` section of a sync report: what syncing `agents/*.prompt` did. */
export const AgentSyncReport = z.looseObject({
  directory: z.string(),
  created: z.array(SyncedAgent),
  updated: z.array(SyncedAgent),
  unchanged: z.array(SyncedAgent),
  deleted: z.array(z.string()).describe("agents whose file is gone"),
  invalid: z.array(z.looseObject({ file: z.string(), errors: z.array(ValidationIssue) })),
  warnings: z.array(z.looseObject({ file: z.string(), warnings: z.array(ValidationIssue) })),
}).meta({ id: "AgentSyncReport" });
export type AgentSyncReport = z.infer<typeof AgentSyncReport>;
