/**
 * One eval case as an ordinary run (docs/evals.md#eval-runs): an agent run with the case's task and vars, or a
 * workflow run with its input — claimed by the case in the transaction that creates it, so a resumed eval
 * waits for the run a crash interrupted instead of starting another — and what the run showed when it ended.
 */

import type { AgentRun } from "../contract/agent_runs.ts";
import type { EvalCaseInput } from "../contract/evals.ts";
import type { AgentRuns } from "../agents/runs.ts";
import type { AgentService } from "../agents/service.ts";
import type { WorkflowRuns } from "../workflows/runs.ts";
import type { RunDoubles } from "../agents/doubles.ts";
import type { RunPlan } from "../agents/loop.ts";
import { sleep } from "../lib/async.ts";
import { sumCosts } from "../telemetry/cost.ts";
import { TERMINAL_RUN } from "../workflows/engine/mod.ts";
import { startWorkflowRun, type WorkflowServices } from "../workflows/service.ts";
import type { CaseKey, EvalKind, EvalLedger } from "./ledger.ts";
import type { Observed } from "./scorers.ts";

/** An agent case's task: `task`, else its `input` (a string as it is, anything else as JSON). */
export function caseTask(c: EvalCaseInput): string {
  if (c.task !== undefined) return c.task;
  return typeof c.input === "string" ? c.input : JSON.stringify(c.input);
}

/** A workflow case's input: `input`, else its `vars`, else `{task}`. */
export function caseInput(c: EvalCaseInput): Record<string, unknown> {
  if (c.input && typeof c.input === "object" && !Array.isArray(c.input)) {
    return c.input as Record<string, unknown>;
  }
  if (c.input !== undefined) return { input: c.input };
  return c.vars ?? { task: c.task };
}

/**
 * The parts of the station evals use (the StationContext has them; named here so evals/ sits below context.ts):
 * what starts workflow runs, the agent service, the read services, and the stop signal.
 */
export interface EvalStation extends WorkflowServices {
  agents: AgentService;
  agentRuns: AgentRuns;
  runs: WorkflowRuns;
  /** Aborted when the station begins to stop: the eval's cases stop waiting, to resume at the next start. */
  shutdown: AbortSignal;
}

/** What the cases of one eval run run against. */
export interface CaseTarget {
  ctx: EvalStation;
  ledger: EvalLedger;
  kind: EvalKind;
  target: string;
  environment: string;
  model?: string;
  /** The dataset's budget of each case's agent run (USD): past it the run ends `budget_exceeded`. */
  maxCost?: number;
  doubles?: RunDoubles;
}

const usage = (r: AgentRun) => r.usage.total_tokens;

function toolCalls(runs: AgentRun[]): Observed["toolCalls"] {
  return runs.flatMap((r) =>
    r.tool_calls.map((t) => ({
      name: t.name,
      status: t.status,
      error: t.error ?? null,
      arguments: t.arguments,
    }))
  );
}

async function agentCase(
  t: CaseTarget,
  key: CaseKey,
  c: EvalCaseInput,
  runId: string | null,
): Promise<Observed> {
  const { agents, agentRuns } = t.ctx;
  const ended = runId ? await agents.wait(runId, t.ctx.shutdown) : await (await agents.start({
    agent: t.target,
    environment: t.environment,
    task: caseTask(c),
    variables: c.vars ?? {},
    model: t.model,
    maxCost: t.maxCost,
    doubles: t.doubles,
    claim: (id) => t.ledger.claim(key, id),
  })).done;
  // A resumed run's doubles were registered again at the start (EvalService.restoreDoubles): they go now.
  if (runId && t.doubles) agents.doubles.release(runId);
  const run = agentRuns.view(ended);
  const plan = JSON.parse(ended.plan) as RunPlan;
  return {
    runId: run.run_id,
    completed: run.status === "completed",
    answer: run.response,
    result: run.result,
    error: run.error,
    totalTokens: usage(run),
    costUsd: run.cost_usd,
    durationMs: run.duration_ms,
    toolCalls: toolCalls([run]),
    outputSchema: plan.output_schema as Record<string, unknown> | undefined,
  };
}

async function workflowCase(
  t: CaseTarget,
  key: CaseKey,
  c: EvalCaseInput,
  runId: string | null,
): Promise<Observed> {
  const { ctx } = t;
  const claim = (id: string) => t.ledger.claim(key, id);
  if (!runId) {
    const row = await startWorkflowRun(ctx, {
      workflowId: t.target,
      input: caseInput(c),
      trigger: { type: "api" },
      claim: t.doubles ? ctx.agents.doubles.claimFor(t.doubles, claim) : claim,
    });
    runId = row.id;
  }
  try {
    let run = ctx.runs.require(runId);
    while (!TERMINAL_RUN.includes(run.status)) {
      t.ctx.shutdown.throwIfAborted();
      await sleep(100);
      run = ctx.runs.require(runId);
    }
    const steps = ctx.agentRuns.ofWorkflowRun(runId);
    const error = run.error ? JSON.parse(run.error) as { code: string; message: string } : null;
    const result = run.result === null ? null : JSON.parse(run.result);
    return {
      runId,
      completed: run.status === "completed",
      answer: result === null ? null : typeof result === "string" ? result : JSON.stringify(result),
      result,
      error: error && { code: error.code, message: error.message },
      totalTokens: steps.reduce((n, r) => n + usage(r), 0),
      costUsd: sumCosts(steps.map((r) => r.cost_usd)),
      durationMs: run.completed_at ? Date.parse(run.completed_at) - Date.parse(run.created_at) : null,
      toolCalls: toolCalls(steps),
    };
  } finally {
    if (t.doubles) ctx.agents.doubles.release(runId);
  }
}

/** Runs a case (or waits for the run it already has) and returns what the run showed. */
export async function runEvalCase(
  t: CaseTarget,
  key: CaseKey,
  c: EvalCaseInput,
  runId: string | null,
): Promise<Observed> {
  return t.kind === "agent" ? await agentCase(t, key, c, runId) : await workflowCase(t, key, c, runId);
}
