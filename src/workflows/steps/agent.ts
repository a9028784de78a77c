/** The `agent` step: runs an agent through the one agent loop, linked to the step's attempt. */

import { z } from "zod";
import { common, rule, templates } from "./fields.ts";
import { contextScope, renderTemplates } from "../expr.ts";
import type { AgentStepRun, AgentStepToolCall } from "./runners.ts";
import type { Executor, Outcome, StepType } from "./types.ts";

const AGENT_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]*(@[A-Za-z0-9][A-Za-z0-9_.-]*)?$/;

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("agent"),
    /** `name` or `name@environment`. */
    agent: z.string().min(1).check(rule((a) =>
      AGENT_REF.test(a) ? undefined : {
        code: "invalid_agent",
        message: `invalid agent reference ${JSON.stringify(a)}`,
        hint: "write `name` or `name@environment`",
      }
    )),
    task: z.string().check(templates).optional(),
    input: z.strictObject({ variables: z.record(z.string(), z.unknown()).optional() })
      .describe("agent input").check(templates).optional(),
  });
export type AgentState = z.infer<ReturnType<typeof schema>>;

/**
 * agent: runs an agent through THE agent loop (docs/design/agents.md#the-loop). `task` and
 * `input.variables` are templated over the run context; the agent run is linked to this step
 * attempt, so a redelivered attempt finds the run it started instead of starting another. The
 * step's output is `{response, result, tool_calls, usage}` (docs/workflows.md), `result` being the
 * JSON answer (an output schema's, or the response parsed when it is JSON). Canceling the workflow run
 * aborts the signal, which cancels the agent run.
 */
const execute: Executor<AgentState> = async (step, scope, ctx): Promise<Outcome> => {
  if (!ctx.agents) {
    return {
      kind: "failed",
      error: { code: "agent_steps_unavailable", message: `step ${step.id}: this process runs no agents` },
    };
  }
  const rendered = await renderTemplates(
    { task: step.task ?? "", variables: step.input?.variables ?? {} },
    contextScope(scope),
  ) as { task: unknown; variables: Record<string, unknown> };
  const [name, environment] = step.agent.split("@");
  const run = await ctx.agents.run({
    agent: name,
    environment: environment ?? ctx.agents.environment,
    // The run input's text is the user's, never a template.
    task: step.task === undefined
      ? inputTask(scope)
      : typeof rendered.task === "string"
      ? rendered.task
      : JSON.stringify(rendered.task),
    variables: rendered.variables,
    step: { runId: ctx.runId, path: ctx.path, visit: ctx.visit, attempt: ctx.attempt },
    signal: ctx.signal,
  });
  if (run.status === "completed" && (run.finish_reason === "stop" || run.response)) {
    return { kind: "completed", output: stepOutput(run, await ctx.agents.ledger.toolCalls(run.id)) };
  }
  const error = run.error ? JSON.parse(run.error) as { code: string; message: string } : undefined;
  return {
    kind: "failed",
    error: {
      code: error?.code ?? `agent_${run.finish_reason}`,
      message: `step ${step.id}: agent ${name} run ${run.id} ${run.status}: ${
        error?.message ?? run.finish_reason
      }`,
    },
  };
};

/** A step without `task` gets the run input's `task` or `userInput`, as Station's did; else the empty task. */
function inputTask(scope: Record<string, unknown>): string {
  const input = (scope.workflow as { input?: unknown } | undefined)?.input;
  if (typeof input !== "object" || input === null) return "";
  const { task, userInput } = input as Record<string, unknown>;
  return typeof task === "string" ? task : typeof userInput === "string" ? userInput : "";
}

/** The step output: the answer as text and as JSON, the tool calls made and the tokens used. */
function stepOutput(run: AgentStepRun, calls: AgentStepToolCall[]): Record<string, unknown> {
  let result: unknown = run.result !== null ? JSON.parse(run.result) : undefined;
  if (result === undefined) {
    try {
      result = JSON.parse(run.response ?? "");
    } catch {
      // Plain text: no `result`.
    }
  }
  return {
    response: run.response ?? "",
    ...(result !== undefined ? { result } : {}),
    tool_calls: calls.map((c) => ({ name: c.name, status: c.status, truncated: c.truncated === 1 })),
    usage: {
      input_tokens: run.input_tokens,
      output_tokens: run.output_tokens,
      cached_tokens: run.cached_tokens,
      total_tokens: run.total_tokens,
    },
  };
}

export const agent: StepType<AgentState> = {
  type: "agent",
  station: "unless_agent_worker",
  schema,
  notes: (s) => [
    ...(typeof s.agent === "string" && AGENT_REF.test(s.agent)
      ? [{
        code: "agent_not_checked",
        message: "agent references are checked when the workflow is synced with its environment's agents",
        hint:
          "put the file in environments/<env>/workflows/ and run `stn sync`: an unknown agent is an error there",
        at: ["agent"],
      }]
      : []),
    ...(s.task === undefined
      ? [{
        code: "agent_task_missing",
        message: "this agent step (and any other) has no `task`: it gets the run input's `task` or " +
          "`userInput` when the input has one, else an empty task",
        hint: 'write `task: "…"` (templated over the run context, e.g. "Review ${input.repo}")',
      }]
      : []),
  ],
  executor: execute,
};
