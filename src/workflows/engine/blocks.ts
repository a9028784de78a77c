import { ERROR_CODES } from "../../error_codes.ts";
import { parseDuration } from "../../lib/duration.ts";
import type { Block, RetryPolicy, State, WorkflowDefinition } from "../definition/schema.ts";
import { valuesAt } from "../steps/paths.ts";
import { stepType } from "../steps/registry.ts";
import type { Failure, FieldPath, JoinMode, Outcome } from "../steps/types.ts";
import { findState } from "./dataflow.ts";
import type { AttemptRow, ScopeRow } from "./ledger.ts";

/** Pure lookups over a run's definition: which block a scope runs, which state an attempt is, its timeout and retries. */

/** The scope and attempt rows a lookup needs (from a run snapshot, or read from the ledger). */
export interface BlockLookup {
  scope(scope: string): Pick<ScopeRow, "scope" | "key" | "parent_attempt"> | undefined;
  attempt(id: number): Pick<AttemptRow, "scope" | "step_id"> | undefined;
}

/** The block a scope runs: the workflow's states, or a branch / iterator / try block of its parent step. */
export function blockOf(def: WorkflowDefinition, scope: string, lookup: BlockLookup): Block {
  if (scope === "") return def as Block;
  const row = lookup.scope(scope)!;
  const state = stateOf(def, lookup.attempt(row.parent_attempt!)!, lookup);
  const blocks = blocksOf(state);
  // The rule StepType.blocks states: the block named by the key, else its field's, else the only one.
  const found = blocks.find((b) => (b.block as { name?: unknown }).name === row.key) ??
    blocks.find((b) => isField(b.field, row.key)) ?? (blocks.length === 1 ? blocks[0] : undefined);
  if (!found) throw new Error(`scope ${scope} has no block`);
  return found.block;
}

/** The nested blocks of a state, at the fields its step type declares, each with its field path. */
function blocksOf(state: State): Array<{ block: Block; field: FieldPath }> {
  return (stepType(state.type)?.blocks ?? []).flatMap((field) =>
    valuesAt(state, field).map((v) => ({ block: v.value as Block, field }))
  );
}

/** Whether a declared block field is the single field `key`. */
function isField(field: FieldPath, key: string): boolean {
  return field.length === 1 && field[0] === key;
}

/** The block in the state's declared block field `key` (a try stage), if the state has one. */
function stageBlock(state: State, key: string): Block | undefined {
  return blocksOf(state).find((b) => isField(b.field, key))?.block;
}

/** The state an attempt runs. */
export function stateOf(
  def: WorkflowDefinition,
  a: Pick<AttemptRow, "scope" | "step_id">,
  lookup: BlockLookup,
): State {
  return findState(blockOf(def, a.scope, lookup), a.step_id)!;
}

/** The step's own timeout (state, then workflow defaults, then config); null for waits that have their own. */
export function timeoutOf(def: WorkflowDefinition, state: State, defaultMs: number): number | null {
  if (stepType(state.type)?.waits) return null;
  return parseDuration(state.timeout ?? def.defaults?.timeout ?? "") ?? defaultMs;
}

/** The step's retry policy, else the workflow's default one. */
export function retryPolicy(state: State, def: WorkflowDefinition): RetryPolicy | undefined {
  return state.retry ?? def.defaults?.retry;
}

/**
 * 4xx codes a retry can change: a model may answer better the next time, and an expression may read the
 * clock or raise `$error()` on purpose (a flaky check).
 */
const RETRYABLE_CLIENT_ERRORS = new Set([
  "agent_output_invalid",
  "agent_max_steps",
  "agent_run_failed",
  "expression_failed",
  "expression_timeout",
]);

/**
 * True for a step error no retry can fix: a code of stn's catalogue meaning bad config or input, a thing
 * not allowed, or a reference to something that does not exist (HTTP 400, 403, 404, 422: `image_not_allowed`,
 * `agent_not_found`, `input_invalid`, `template_invalid`, …). The engine fails these at once whatever the
 * step's retry policy says; transient codes (5xx, timeouts) and a workflow's own codes follow the policy.
 */
export function permanentError(code: string): boolean {
  const entry = (ERROR_CODES as Record<string, readonly [number, ...unknown[]]>)[code];
  return entry !== undefined && [400, 403, 404, 422].includes(entry[0]) && !RETRYABLE_CLIENT_ERRORS.has(code);
}

/** Exponential backoff with ±20% jitter (`random` in [0, 1)), capped at max_interval. */
export function backoff(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const initial = parseDuration(policy.initial_interval) ?? 1000;
  const max = parseDuration(policy.max_interval) ?? 60_000;
  const base = Math.min(max, initial * policy.backoff_coefficient ** (attempt - 1));
  return Math.round(base * (0.8 + random() * 0.4));
}

/** The outcome of a fanout step whose children have all finished (or the next try stage), joined as `mode` says. */
export function join(mode: JoinMode, state: State, children: ScopeRow[]): Outcome {
  const out = (s: ScopeRow) => (s.output === null ? null : JSON.parse(s.output));
  const err = (s: ScopeRow): Failure => JSON.parse(s.error!);
  if (mode === "try") {
    const catchBlock = stageBlock(state, "catch"), finallyBlock = stageBlock(state, "finally");
    const by = new Map(children.map((c) => [c.key, c]));
    const tryScope = by.get("try")!, catchScope = by.get("catch"), finallyScope = by.get("finally");
    const stage = (key: string, block: Block, vars: Record<string, unknown>): Outcome => ({
      kind: "fanout",
      join: "try",
      maxConcurrency: 1,
      blocks: [{ key, block, vars }],
    });
    const tryError = tryScope.status === "failed" ? { ...err(tryScope) } : undefined;
    if (!catchScope && !finallyScope) {
      if (tryError && catchBlock) return stage("catch", catchBlock, { _error: tryError });
      if (finallyBlock) return stage("finally", finallyBlock, tryError ? { _error: tryError } : {});
    } else if (catchScope && !finallyScope && finallyBlock) {
      return stage("finally", finallyBlock, { _error: tryError });
    }
    if (finallyScope?.status === "failed") return { kind: "failed", error: err(finallyScope) };
    if (catchScope) {
      return catchScope.status === "failed"
        ? { kind: "failed", error: err(catchScope) }
        : { kind: "completed", output: out(catchScope) };
    }
    return tryError ? { kind: "failed", error: tryError } : { kind: "completed", output: out(tryScope) };
  }
  const failedChild = children.find((c) => c.status === "failed");
  if (failedChild) return { kind: "failed", error: err(failedChild) };
  if (mode === "foreach") {
    return { kind: "completed", output: { results: children.map(out), count: children.length } };
  }
  return { kind: "completed", output: Object.fromEntries(children.map((c) => [c.key, out(c)])) };
}
