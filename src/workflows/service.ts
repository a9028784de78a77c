/** Starting workflow runs: the definition validated or looked up (an inline one run once), the run started. */

import { StationError } from "../errors.ts";
import type { WorkflowDefinition } from "./definition/schema.ts";
import { validateDefinition } from "./definition/validate.ts";
import type { Engine, RunRow } from "./engine/mod.ts";
import type { WorkflowStore } from "./store.ts";
import type { SandboxAvailability } from "../sandbox/required.ts";
import { requireSandboxFor } from "./sandbox_steps.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import type { Database } from "../db/database.ts";
import { requireReferences, type StationReferences } from "./definition/references.ts";
import type { RunTrigger } from "./trigger.ts";

/**
 * What starting a run needs: the definition store, the engine, whether sandboxes are available, and the
 * ledger and config that agent and image references are checked against.
 */
export interface WorkflowServices extends SandboxAvailability {
  workflows: WorkflowStore;
  engine: Engine;
  db: Database;
  config: LoadedConfig;
  /** What agent and sandbox steps may name here: the station's agents and sandbox config. */
  references(): StationReferences;
}

/** What to run: a stored workflow (its latest version, or `version`), or an inline definition. */
export interface StartRunInput {
  workflowId?: string;
  version?: number;
  /** A definition to run as-is, once: validated, kept with the run, not stored as a workflow. */
  definition?: unknown;
  /** With `definition`: store it as a workflow too (a new version when it changed), as `apply` does. */
  save?: boolean;
  input: Record<string, unknown>;
  /** The caller's W3C traceparent, continued by the run's step messages. */
  traceparent?: string;
  /** What started the run (`workflow.trigger`); the routes always say. */
  trigger?: RunTrigger;
  /** An idempotent start's claim on its key, inside the creating transaction (see `StartRunRequest`). */
  claim?: (runId: string) => string | undefined;
  /** Overrides the workflow's `priority`. */
  priority?: number;
}

/**
 * Resolves what to run: an inline definition is validated and run once (so cron and CI can run a file
 * with nothing synced, without piling up versions or switching on its schedule and triggers) — stored
 * only when `save` asks; else the stored workflow (latest or `version`). A one-off run has no version:
 * the run row keeps the exact definition it ran.
 */
export function resolveDefinition(
  services: WorkflowServices,
  req: Omit<StartRunInput, "input" | "traceparent" | "trigger" | "claim" | "priority">,
): { definition: WorkflowDefinition; version: number | null } {
  const { workflows } = services;
  if (req.definition !== undefined) {
    const checked = validateDefinition(req.definition);
    if (!checked.valid) {
      throw new StationError(
        "invalid_definition",
        `the workflow definition is invalid: ${
          checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
        }`,
        { status: 400, details: { errors: checked.errors }, hint: checked.errors[0]?.hint },
      );
    }
    if (!req.save) return { definition: checked.definition!, version: null };
    const saved = workflows.save(checked.definition!, { source: "api" });
    return { definition: checked.definition!, version: saved.version };
  }
  if (!req.workflowId) {
    throw new StationError("invalid_request", "give workflowId (a stored workflow) or definition", {
      status: 400,
    });
  }
  const record = workflows.record(req.workflowId);
  if (record.status === "disabled") {
    throw new StationError("workflow_disabled", `workflow ${record.id} is disabled`, {
      status: 409,
      hint: `enable it first (stn workflow enable ${record.id})`,
    });
  }
  const stored = workflows.get(req.workflowId, req.version);
  return { definition: stored.definition, version: stored.version };
}

/** Validates (or looks up) the definition, stores an inline one when asked, and starts a run of it. */
export async function startWorkflowRun(services: WorkflowServices, req: StartRunInput): Promise<RunRow> {
  const { definition, version } = resolveDefinition(services, req);
  requireSandboxFor(services, definition);
  requireReferences(definition, services.references());
  return await services.engine.startRun({
    definition,
    workflowVersion: version,
    input: req.input,
    traceparent: req.traceparent,
    trigger: req.trigger,
    claim: req.claim,
    priority: req.priority,
  });
}
