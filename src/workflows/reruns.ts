/**
 * Repairing runs (docs/workflows.md#retry-fork-and-re-run): the definition a retry or fork goes on with, checked
 * as a start's would be; bulk retry over a filter; and `stn workflow eval` against the data a step saw.
 */

import type { z } from "zod";
import type {
  BulkRetryBody,
  BulkRetryResult,
  EvalBody,
  EvalResult,
  ForkBody,
  RetryBody,
} from "../contract/reruns.ts";
import { errorMessage, StationError } from "../errors.ts";
import { iso } from "../lib/clock.ts";
import { parseDuration } from "../lib/duration.ts";
import type { WorkflowDefinition } from "./definition/schema.ts";
import type { RunRow } from "./engine/mod.ts";
import { contextScope, evaluate } from "./expr.ts";
import { requireReferences } from "./definition/references.ts";
import { requireSandboxFor } from "./sandbox_steps.ts";
import { resolveDefinition, type WorkflowServices } from "./service.ts";

type Chosen = { definition?: WorkflowDefinition; workflowVersion?: number | null };

/**
 * The definition to go on with: the one given (a file's, or a stored version), else for a stored workflow
 * its latest version (the fix applied since), else the run's own (undefined: the engine keeps it).
 */
function chosenDefinition(
  services: WorkflowServices,
  run: RunRow,
  req: { version?: number; definition?: unknown },
): Chosen {
  const stored = run.workflow_version !== null && services.workflows.has(run.workflow_id);
  if (req.definition === undefined && req.version === undefined && !stored) return {};
  const resolved = resolveDefinition(services, {
    workflowId: run.workflow_id,
    version: req.version,
    definition: req.definition,
  });
  if (resolved.definition.id !== run.workflow_id) {
    throw new StationError(
      "definition_incompatible",
      `the definition is workflow ${resolved.definition.id}, the run is of ${run.workflow_id}`,
      { status: 422, hint: "give a version of the run's own workflow" },
    );
  }
  requireSandboxFor(services, resolved.definition);
  requireReferences(resolved.definition, services.references());
  return { definition: resolved.definition, workflowVersion: resolved.version };
}

function requireRun(services: WorkflowServices, runId: string): RunRow {
  const run = services.engine.reads.runs.get(runId);
  if (!run) {
    throw new StationError("run_not_found", `no workflow run ${runId}`, {
      status: 404,
      hint: "list runs with `stn workflow runs`",
    });
  }
  return run;
}

/** Retries one run with the chosen definition. */
export function retryWorkflowRun(
  services: WorkflowServices,
  runId: string,
  body: RetryBody,
): Promise<RunRow> {
  const run = requireRun(services, runId);
  return services.engine.retry(runId, chosenDefinition(services, run, body));
}

/** Forks one run from a step. */
export function forkWorkflowRun(
  services: WorkflowServices,
  runId: string,
  body: z.output<typeof ForkBody>,
): Promise<RunRow> {
  const run = requireRun(services, runId);
  return services.engine.fork(runId, {
    ...chosenDefinition(services, run, body),
    step: body.from,
    input: body.input,
  });
}

/**
 * Retries every run of a workflow that ended in `status` within `since` (and has `error_code`), each once: a
 * run already retried within the window is skipped, so running it again (or after a crash) retries only the
 * rest. With `dry_run`, lists what it would do.
 */
export async function bulkRetry(
  services: WorkflowServices,
  body: z.output<typeof BulkRetryBody>,
): Promise<BulkRetryResult> {
  const ms = parseDuration(body.since);
  if (ms === null || ms <= 0) {
    throw new StationError("invalid_request", `since: ${JSON.stringify(body.since)} is not a duration`, {
      status: 400,
      hint: "write e.g. 30m, 1h or 2d",
    });
  }
  if (!services.workflows.has(body.workflow_id)) {
    throw new StationError("workflow_not_found", `no workflow ${body.workflow_id}`, {
      status: 404,
      hint: "list workflows with `stn workflow list`",
    });
  }
  const since = iso(services.engine.clock.now() - ms);
  const rows = services.engine.reads.runs.ended({ workflowId: body.workflow_id, status: body.status, since });
  const runs: BulkRetryResult["runs"] = [];
  let retried = 0;
  for (const row of rows) {
    const code = row.error ? (JSON.parse(row.error) as { code?: string }).code ?? null : null;
    if (body.error_code !== undefined && code !== body.error_code) continue;
    const item = { run_id: row.id, error_code: code, ended_at: row.completed_at };
    if (row.retried_at) {
      runs.push({ ...item, outcome: "skipped", reason: `already retried at ${row.retried_at}` });
    } else if (body.dry_run) {
      runs.push({ ...item, outcome: "would_retry", reason: null });
    } else {
      try {
        await retryWorkflowRun(services, row.id, { version: body.version });
        runs.push({ ...item, outcome: "retried", reason: null });
        retried++;
      } catch (err) {
        if (!(err instanceof StationError)) throw err;
        runs.push({ ...item, outcome: "refused", reason: `${err.code}: ${errorMessage(err)}` });
      }
    }
  }
  return { dry_run: body.dry_run, runs, retried };
}

/** Evaluates an expression as a transform step would, over the data a step of the run saw (or `input`). */
export async function evalAgainstRun(
  services: WorkflowServices,
  runId: string,
  body: EvalBody,
): Promise<EvalResult> {
  requireRun(services, runId);
  const data = body.input !== undefined ? body.input : await services.engine.contextAt(runId, body.step);
  const scope = data !== null && typeof data === "object" && !Array.isArray(data)
    ? contextScope(data as Record<string, unknown>)
    : { data, bindings: {} };
  const value = await evaluate(body.expression, scope.data, scope.bindings);
  return { value: value ?? null, data };
}
