/**
 * What step executors need of the station's services, narrowed: `agent` steps an AgentRunner, `sandbox` steps
 * a SandboxRunner. The services (agents/service.ts, sandbox/service.ts) fit them by shape, so steps and the
 * engine do not import the agent loop (docs/design/layers.md).
 */

import type { SandboxService } from "../../sandbox/service.ts";

/** An agent run as an `agent` step reads its end (the fields of the agent ledger's row it uses). */
export interface AgentStepRun {
  id: string;
  status: string;
  finish_reason: string | null;
  response: string | null;
  result: string | null;
  error: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  total_tokens: number;
}

/** A tool call of an agent run as a step's output lists it. */
export interface AgentStepToolCall {
  name: string;
  status: string;
  truncated: number;
}

/** Runs agents for `agent` steps (agents/service.ts's AgentService is one). */
export interface AgentRunner {
  /** The environment an agent reference without `@env` runs in. */
  readonly environment: string;
  /** Runs an agent to its end as one step attempt's run (a redelivered attempt finds the run it started). */
  run(request: {
    agent: string;
    environment: string;
    task: string;
    variables?: Record<string, unknown>;
    step?: { runId: string; path: string; visit: number; attempt: number };
    signal?: AbortSignal;
  }): Promise<AgentStepRun>;
  /** The run's tool calls, for the step's output. */
  readonly ledger: { toolCalls(runId: string): AgentStepToolCall[] | Promise<AgentStepToolCall[]> };
  /** Whether a step's agent must run on the station rather than a `stn worker` (child agents, doubles). */
  stationOnly?(agent: string, environment: string, workflowRunId: string): boolean;
}

/** Runs `sandbox` steps in a run's container (sandbox/service.ts's SandboxService is one). */
export type SandboxRunner = Pick<SandboxService, "config" | "open" | "stage" | "exec" | "publish">;
