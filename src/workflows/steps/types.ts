import type { z } from "zod";
import { StationError } from "../../errors.ts";
import type { Problem } from "../../lib/schema_rules.ts";
import type { AgentRunner, SandboxRunner } from "./runners.ts";

export type { Problem };

/**
 * What a step type is (one module per type in this folder, listed in `registry.ts`): its zod schema,
 * where its transitions and nested blocks are (for the validator's graph pass), and its executor.
 *
 * The executor contract (docs/design/ledger-and-engine.md#executors): `(step, scope, ctx) → outcome`, with no
 * ledger access, so an executor can run anywhere that has the step, the scope's data context and an abort
 * signal; the engine applies the outcome (data flow, retries, routing).
 */

/**
 * Where registry.ts names the union of the registered types' states (module augmentation): the states of a
 * block are of every type, and each type's schema holds blocks, so the union is declared here without this
 * module importing the list of types.
 */
// deno-lint-ignore no-empty-interface
export interface StateRegistry {}

/** Any registered state, discriminated by `type` (registry.ts fills it in). */
export type State = StateRegistry[keyof StateRegistry];

/** A nested list of states with its own transitions (parallel branch, foreach iterator, try blocks). */
export interface Block {
  start?: string;
  states: States;
}

/** A list of states (an interface, so the types of states holding states can refer to it). */
export interface States extends Array<State> {
  readonly [index: number]: State;
}

/** The schemas a step type's schema is built from that depend on every registered type. */
export interface SchemaKit {
  /** `{start?, states}`: a nested block of any registered states. */
  block: z.ZodType<Block>;
  /** A non-empty list of any registered states. */
  states: z.ZodType<States>;
}

/** A field path inside a state; `"*"` stands for every item of a list. */
export type FieldPath = readonly (string | number)[];

/** One step type: everything stn knows about `type: <name>`. */
// deno-lint-ignore no-explicit-any -- the registry holds step types of every state shape; each executor reads its own
export interface StepType<S extends { type: string; id: string } = any> {
  type: string;
  /** The state's strict schema: the common fields (steps/fields.ts), `type: z.literal(<name>)` and its own. */
  schema(kit: SchemaKit): z.ZodObject;
  /** Fields holding state ids to move to, besides `next` (e.g. a switch's `defaultNext`). */
  targets?: readonly FieldPath[];
  /**
   * Fields holding nested blocks `{start?, states}`. A child scope's key (ChildBlock.key) finds its
   * block: the block whose `name` is the key, else the one in the field of that name, else the
   * type's only block.
   */
  blocks?: readonly FieldPath[];
  /** Whether a state can end its block rather than always moving on (default: when it has no `next`). */
  canExit?(state: Record<string, unknown>): boolean;
  /** Warnings about a state (each code reported once per definition); reads the state as written. */
  notes?(state: Record<string, unknown>): Problem[];
  /** Whether the step parks on a durable wait with its own deadline (approval, timer): no step timeout applies. */
  waits?: boolean;
  /**
   * Whether the step needs the station's own services: a `stn worker` that takes it hands it to the
   * station, which runs it (docs/workers.md). `unless_agent_worker`: an `agent` step, run by a worker that
   * runs agents unless the AgentRunner's `stationOnly` keeps it here.
   */
  station?: boolean | "unless_agent_worker";
  /** For a step whose executor parks it on an approval: how a decision, or the approval's timeout, ends it. */
  approval?: ApprovalEnd<S>;
  /** For a step whose executor parks it until an event (`await`): how the event, or the wait's timeout, ends it. */
  wait?: WaitEnd<S>;
  /** Runs one attempt of the step. */
  executor: Executor<S>;
}

/** A decision on an approval as recorded (it becomes the step's output). */
export interface ApprovalDecision {
  approved: boolean;
  timed_out?: boolean;
  decided_by: string | null;
  comment: string | null;
  decided_at: string;
}

/** The outcomes that end an approval step's wait. */
export interface ApprovalEnd<S> {
  /** After someone approved or rejected. */
  decided(step: S, decision: ApprovalDecision): Outcome;
  /** After the approval's timeout passed with no decision. */
  timedOut(step: S, decision: ApprovalDecision): Outcome;
}

/** An event as a waiting step receives it (it becomes the step's output). */
export interface ReceivedEvent {
  name: string;
  id: string;
  data: unknown;
  received_at: string;
}

/** The outcomes that end a wait for an event. */
export interface WaitEnd<S> {
  /** After a matching event or signal arrived. */
  received(step: S, event: ReceivedEvent): Outcome;
  /** After the wait's timeout passed with no event (`at`: when). */
  timedOut(step: S, at: string): Outcome;
}

/** The data context a step sees: the run context, or a branch / iteration's copy of it. */
export type Scope = Record<string, unknown>;

/** What an executor gets besides the step and its scope. */
export interface ExecutorContext {
  runId: string;
  workflowId: string;
  /** The step's path in the run (`check`, `fanout/b1/fetch`, `loop/2/work`). */
  path: string;
  attempt: number;
  /** Which visit of the step this is (a step a run loops back to is visited again). */
  visit: number;
  /** Aborted when the run is canceled or the step's timeout passes; executors stop promptly. */
  signal: AbortSignal;
  /** Docker sandboxes, for `sandbox` steps (undefined when the station has none). */
  sandbox?: SandboxRunner;
  /** Agent runs, for `agent` steps (undefined in a process that runs none). */
  agents?: AgentRunner;
  /** The engine clock's now in ms (a virtual clock in tests); default the wall clock. */
  now?: () => number;
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
  /** Park the run until an event of that name (and `match`) arrives, or until timeoutMs passes (null: no deadline). */
  | { kind: "await"; event: string; match: string | null; timeoutMs: number | null }
  /** Run blocks as child steps, joined as `join` says. */
  | { kind: "fanout"; join: JoinMode; blocks: ChildBlock[]; maxConcurrency: number };

/**
 * How the engine joins a fanout's children (a value kept in the ledger and `step_fanout` events):
 * `parallel` into `{key: output}`, `foreach` into `{results, count}`, both failing fast; `try` runs
 * the state's `try`, `catch` (on failure) and `finally` blocks as stages, one after the other.
 */
export type JoinMode = "parallel" | "foreach" | "try";

/** An executor for one state type. */
export type Executor<S = State> = (
  step: S,
  scope: Scope,
  ctx: ExecutorContext,
) => Promise<Outcome>;

/** The failure outcome for an error (a StationError keeps its own code, e.g. `expression_timeout`). */
export function failed(code: string, err: unknown): Outcome {
  if (err instanceof StationError) return { kind: "failed", error: { code: err.code, message: err.message } };
  return { kind: "failed", error: { code, message: err instanceof Error ? err.message : String(err) } };
}
