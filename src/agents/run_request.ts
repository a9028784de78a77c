/** What starts (or finds) an agent run through the agent service, and what `start` answers. */

import type { RunDoubles } from "./doubles.ts";
import type { AgentRunRow, RunTrigger } from "./ledger.ts";

/** What starts (or finds) an agent run. */
export interface AgentRunRequest {
  agent: string;
  environment: string;
  task: string;
  variables?: Record<string, unknown>;
  /** A child agent's run: the parent run and its tool call. */
  parent?: { runId: string; callId: string };
  /** A workflow step's run: the step attempt it belongs to (and its session scope). */
  step?: { runId: string; path: string; visit: number; attempt: number };
  traceId?: string;
  /** `schedule` for the agent scheduler's runs (the others are derived from `parent` and `step`). */
  trigger?: RunTrigger;
  /** The caller's cancel (a workflow run's cancel, a parent's abort). */
  signal?: AbortSignal;
  /** An idempotent start's claim on its key, inside the creating transaction (see the ledger's `NewRun`). */
  claim?: (runId: string) => string | undefined;
  /** Doubles for this run and the runs inside it (a recording, a test case's model and tools). */
  doubles?: RunDoubles;
  /** A budget in USD for this run (an eval's), over the agent's own `max_cost`: the lower one holds. */
  maxCost?: number;
  /** Run on this model instead of the agent's (`stn eval run --model`). */
  model?: string;
  /** Run on a `stn worker` serving this task queue, over the agent's `queue:` (a run started directly). */
  queue?: string;
  /** 0–9 over the agent's `priority:`: how soon it is admitted when its concurrency keys are full. */
  priority?: number;
}

/** A run that has started, and its end. */
export interface StartedRun {
  run: AgentRunRow;
  done: Promise<AgentRunRow>;
}
