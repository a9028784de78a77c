import { countAgentCost, countAgentTokens } from "./metrics.ts";
import { failSpan, inSpan, type Span } from "./tracing.ts";

/**
 * Spans and metrics of agent runs (docs/observability.md): a span per run, per model call and per tool
 * call, nested by the active context — a workflow step's run under its step attempt, a child agent's
 * run under its parent's tool call. Like every span, nothing is made when tracing is off.
 */

/** What a run's span is named and labelled by (an agent run's ledger row). */
export interface TracedRun {
  id: string;
  agent: string;
  model: string;
  environment: string;
  workflow_run_id: string | null;
  step_path: string | null;
  parent_run_id: string | null;
}

/** How a run ended, as its row says after the loop (still `running` when the station stopped under it). */
export interface RunEnd {
  status: string;
  finish_reason: string | null;
  error: string | null;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
}

/** Token counts of one model call. */
export interface CallUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
}

/** Runs an agent run's work inside its span `agent.run <agent>`; a failed or canceled end marks it failed. */
export function traceAgentRun<T extends RunEnd>(run: TracedRun, fn: () => Promise<T>): Promise<T> {
  const attributes = {
    "stn.agent.run.id": run.id,
    "stn.agent.name": run.agent,
    "stn.agent.environment": run.environment,
    "gen_ai.request.model": run.model,
    ...(run.workflow_run_id ? { "stn.run.id": run.workflow_run_id } : {}),
    ...(run.step_path ? { "stn.step.path": run.step_path } : {}),
    ...(run.parent_run_id ? { "stn.agent.parent_run.id": run.parent_run_id } : {}),
  };
  return inSpan(`agent.run ${run.agent}`, attributes, async (span) => {
    const end = await fn();
    span?.setAttributes({
      "stn.agent.status": end.status,
      "stn.agent.finish_reason": end.finish_reason ?? "",
      "stn.agent.turns": end.turns,
      "gen_ai.usage.input_tokens": end.input_tokens,
      "gen_ai.usage.output_tokens": end.output_tokens,
      "stn.agent.cached_tokens": end.cached_tokens,
    });
    if (end.status === "failed" || end.status === "canceled") {
      const e = end.error ? JSON.parse(end.error) as { code?: string; message: string } : undefined;
      failSpan(span, e ?? { message: `agent run ${end.status}` });
    }
    return end;
  });
}

/** Runs one model call inside its span `agent.model <model>`; fn reports its usage with recordModelCall. */
export function traceModelCall<T>(
  call: { runId: string; model: string; turn: number },
  fn: (span?: Span) => Promise<T>,
): Promise<T> {
  return inSpan(`agent.model ${call.model}`, {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": call.model,
    "stn.agent.run.id": call.runId,
    "stn.agent.turn": call.turn,
  }, fn);
}

/**
 * Records a completed model call: its tokens and cost on the span, in `stn_agent_tokens_total` and
 * `stn_agent_cost_usd_total` (a null cost is an unknown price: nothing counted).
 */
export function recordModelCall(
  span: Span | undefined,
  run: { model: string; agent: string },
  usage: CallUsage & { cost_usd: number | null },
  finish: string,
): void {
  countAgentTokens(run.model, usage);
  if (usage.cost_usd !== null) {
    countAgentCost(run.model, run.agent, usage.cost_usd);
    span?.setAttribute("stn.model.cost_usd", usage.cost_usd);
  }
  span?.setAttributes({
    "gen_ai.usage.input_tokens": usage.input_tokens,
    "gen_ai.usage.output_tokens": usage.output_tokens,
    "stn.model.cached_tokens": usage.cached_tokens,
    "stn.model.finish_reason": finish,
  });
}

/** Runs one tool call inside its span `agent.tool <name>` (with its MCP server, when an MCP server serves it). */
export function traceToolCall<T>(
  call: { runId: string; callId: string; name: string; server?: string },
  fn: (span?: Span) => Promise<T>,
): Promise<T> {
  return inSpan(`agent.tool ${call.name}`, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name,
    "gen_ai.tool.call.id": call.callId,
    "stn.agent.run.id": call.runId,
    ...(call.server ? { "stn.mcp.server": call.server } : {}),
  }, fn);
}

/** Records a tool call's result on its span: output size, whether it was cut, its error. */
export function recordToolCall(
  span: Span | undefined,
  r: { output_bytes: number; truncated: boolean; error?: string },
): void {
  if (!span) return;
  span.setAttributes({ "stn.tool.output_bytes": r.output_bytes, "stn.tool.truncated": r.truncated });
  if (r.error !== undefined) failSpan(span, { message: r.error });
}
