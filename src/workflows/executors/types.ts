import { StationError } from "../../errors.ts";
import type { SandboxService } from "../../sandbox/service.ts";
import type { Block, State } from "../definition/schema.ts";

/**
 * The executor contract (DESIGN §4): `(step, scope, ctx) → outcome`, with no ledger access, so an
 * executor can run anywhere that has the step, the scope's data context and an abort signal.
 * To plug in a new step type (e.g. `sandbox`), write a function of this type in its own file and
 * list it in `executors/index.ts`; the engine applies the outcome (data flow, retries, routing).
 */

/** The data context a step sees: the run context, or a branch / iteration's copy of it. */
export type Scope = Record<string, unknown>;

/** What an executor gets besides the step and its scope. */
export interface ExecutorContext {
  runId: string;
  workflowId: string;
  /** The step's path in the run (`check`, `fanout/b1/fetch`, `loop/2/work`). */
  path: string;
  attempt: number;
  /** Aborted when the run is canceled or the step's timeout passes; executors stop promptly. */
  signal: AbortSignal;
  /** Docker sandboxes, for `sandbox` steps (undefined when the station has none). */
  sandbox?: SandboxService;
}

/** A failed step: a stable code users can match in `retry.non_retryable` and `_error.code`. */
export interface Failure {
  code: string;
  message: string;
}

/** A nested block to run as durable child steps, on its own copy of the scope. */
export interface ChildBlock {
  /** Branch name, iteration index or try/catch/finally. */
  key: string;
  block: Block;
  /** Extra fields of the child's scope (`item`, `_index`, `_total`, `_error`). */
  vars: Record<string, unknown>;
}

/** What happened, for the engine to record. */
export type Outcome =
  /** Done; `next` overrides the state's own `next` (switch, approval routing). */
  | { kind: "completed"; output: unknown; next?: string | null }
  | { kind: "failed"; error: Failure }
  /** Durable wait until an instant (ms since epoch). */
  | { kind: "sleep"; until: number }
  /** Park the run until someone decides, or until timeoutMs passes. */
  | { kind: "approval"; message: string; approvers: string[]; timeoutMs: number }
  /** Run blocks as child steps: `parallel` joins all into `{name: output}`, `foreach` into `{results, count}`, `try` runs its stages. */
  | { kind: "fanout"; join: "parallel" | "foreach" | "try"; blocks: ChildBlock[]; maxConcurrency: number };

/** An executor for one state type. */
export type Executor<S extends State = State> = (
  step: S,
  scope: Scope,
  ctx: ExecutorContext,
) => Promise<Outcome>;

/** The failure outcome for an error (a StationError keeps its own code, e.g. `expression_timeout`). */
export function failed(code: string, err: unknown): Outcome {
  if (err instanceof StationError) return { kind: "failed", error: { code: err.code, message: err.message } };
  return { kind: "failed", error: { code, message: err instanceof Error ? err.message : String(err) } };
}
