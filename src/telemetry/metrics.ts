import { Counter, type Family, Histogram } from "./prometheus.ts";

const runsStarted = new Counter({
  name: "stn_workflow_runs_started_total",
  help: "Workflow runs started in this process, by workflow id",
  labelNames: ["workflow"] as const,
});

const runsFinished = new Counter({
  name: "stn_workflow_runs_finished_total",
  help: "Workflow runs that ended in this process, by workflow id and status (completed, failed, canceled)",
  labelNames: ["workflow", "status"] as const,
});

const redeliveries = new Counter({
  name: "stn_workflow_step_redeliveries_total",
  help: "Step messages this process received again (a worker died, stalled or was busy)",
});

const stepDuration = new Histogram({
  name: "stn_workflow_step_duration_seconds",
  help: "Time a step attempt's executor took, by step type and outcome",
  labelNames: ["type", "outcome"] as const,
  buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600],
});

const httpDuration = new Histogram({
  name: "stn_http_request_duration_seconds",
  help: "Time to answer an API request (until its headers), by method, route pattern and status",
  labelNames: ["method", "route", "status"] as const,
  buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2, 10],
});

/** Counts a run that was just created (after its transaction committed). */
export function countRunStarted(workflow: string): void {
  runsStarted.inc({ workflow });
}

/** Counts a run that just ended. */
export function countRunFinished(workflow: string, status: string): void {
  runsFinished.inc({ workflow, status });
}

/** Counts a step message delivered more than once. */
export function countRedelivery(): void {
  redeliveries.inc();
}

/** Records one step attempt's executor time. */
export function observeStep(type: string, outcome: string, seconds: number): void {
  stepDuration.observe({ type, outcome }, seconds);
}

/** Records one API request's time to answer. */
export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  httpDuration.observe({ method, route, status: String(status) }, seconds);
}

const agentTokens = new Counter({
  name: "stn_agent_tokens_total",
  help: "Tokens agents' model calls used in this process, by model and kind (input, output, cached)",
  labelNames: ["model", "kind"] as const,
});

const agentCost = new Counter({
  name: "stn_agent_cost_usd_total",
  help:
    "US dollars agents' model calls cost in this process at ai.prices, by model and agent (calls of a model " +
    "with no known price are not counted)",
  labelNames: ["model", "agent"] as const,
});

const agentRunsFinished = new Counter({
  name: "stn_agent_runs_finished_total",
  help: "Agent runs that ended in this process, by agent and status (completed, failed, canceled)",
  labelNames: ["agent", "status"] as const,
});

const agentRunDuration = new Histogram({
  name: "stn_agent_run_duration_seconds",
  help: "Time from an agent run's start to its end, by agent and status",
  labelNames: ["agent", "status"] as const,
  buckets: [1, 5, 15, 60, 300, 900, 3600],
});

/** Counts one model call's tokens (cached tokens are a part of the input ones, counted again under their kind). */
export function countAgentTokens(
  model: string,
  usage: { input_tokens: number; output_tokens: number; cached_tokens: number },
): void {
  agentTokens.inc({ model, kind: "input" }, usage.input_tokens);
  agentTokens.inc({ model, kind: "output" }, usage.output_tokens);
  agentTokens.inc({ model, kind: "cached" }, usage.cached_tokens);
}

/** Adds one model call's cost (USD) to its model's and agent's series. */
export function countAgentCost(model: string, agent: string, usd: number): void {
  agentCost.inc({ model, agent }, usd);
}

/** Counts an agent run that just ended, and its duration. */
export function countAgentRunFinished(agent: string, status: string, seconds: number): void {
  agentRunsFinished.inc({ agent, status });
  agentRunDuration.observe({ agent, status }, seconds);
}

const modelThrottled = new Counter({
  name: "stn_model_throttled_seconds_total",
  help: "Seconds model calls waited for their ai.limits or a provider's Retry-After, by limit key and reason",
  labelNames: ["key", "reason"] as const,
});

/** Counts a model call's wait (the key is an `ai.limits` key, so the label set is bounded by the config). */
export function countModelThrottled(key: string, reason: string, seconds: number): void {
  modelThrottled.inc({ key, reason }, seconds);
}

const filesReaped = new Counter({
  name: "stn_files_reaped_total",
  help: "Expired files the file reaper (or stn files prune) deleted in this process",
});

const filesReapedBytes = new Counter({
  name: "stn_files_reaped_bytes_total",
  help: "Bytes of the expired files the file reaper (or stn files prune) deleted in this process",
});

/** Counts the files (and their bytes) one reaper sweep deleted. */
export function countFilesReaped(files: number, bytes: number): void {
  filesReaped.inc({}, files);
  filesReapedBytes.inc({}, bytes);
}

/**
 * The process's own Prometheus instruments (docs/observability.md lists them). Counting costs a map
 * lookup and an add; nothing is formatted until `/metrics` is scraped. Values the station can read at
 * scrape time (queue depth, sandboxes, store bytes) are gauges of the route, not counters kept here.
 * They are listed in the order `/metrics` writes them.
 */
export const processMetrics: readonly Family[] = [
  runsStarted,
  runsFinished,
  redeliveries,
  stepDuration,
  httpDuration,
  agentTokens,
  agentCost,
  agentRunsFinished,
  agentRunDuration,
  modelThrottled,
  filesReaped,
  filesReapedBytes,
];
