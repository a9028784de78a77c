import { log } from "../../log.ts";
import type { State } from "../definition/schema.ts";
import type { Outcome } from "../steps/types.ts";
import { join } from "./blocks.ts";
import type { EngineCore } from "./core.ts";
import type { StepMessage } from "./dispatch.ts";
import type { ClaimDecision } from "./fencing.ts";
import type { AttemptRow, FanoutMeta } from "./ledger.ts";
import type { Slot } from "./slots.ts";
import type { StepFlow } from "./step_limits.ts";
import { settle } from "./transitions.ts";
import { errorMessage } from "../../errors.ts";

/**
 * Claiming an attempt and recording its outcome, shared by the local consumer and the station's
 * side of remote workers (`remote.ts`): the same fencing whoever runs the executor. `owner` is the
 * process holding the claim (this station, or a `stn worker`'s id).
 */

/**
 * Fencing: decides, in one transaction, whether this message may run its attempt, and claims it for owner;
 * `flow`, its step's limits (`flowFor`), may park it instead.
 */
export function claimStep(core: EngineCore, m: StepMessage, owner: string, flow?: StepFlow): ClaimDecision {
  return core.repo.transaction(() => core.claimIn(m, owner, flow));
}

/** A requeued fanout parent's outcome: its finished children joined (undefined when it has none). */
export function joinedChildren(core: EngineCore, attempt: AttemptRow, state: State): Outcome | undefined {
  const children = core.repo.scopes.children(attempt.id);
  // A requeued fanout parent keeps its FanoutMeta in `output` until its children are joined.
  if (children.length === 0) return undefined;
  return join((JSON.parse(attempt.output!) as FanoutMeta).join, state, children);
}

/** A running attempt's outcome; `owner` is whose claim it must be (this station unless told). */
export interface OutcomeRecord {
  attempt: AttemptRow;
  state: State;
  outcome: Outcome;
  owner?: string;
  slot?: Slot;
}

/**
 * Records a running attempt's outcome in one transaction, if `owner` still holds its claim (a stale
 * or repeated outcome changes nothing), then publishes the steps it dispatched. True when recorded.
 * When this station ran the attempt, its `slot` passes to the steps it dispatched: the same transaction
 * claims them for this station (`EngineCore.commit`'s eager dispatch) while slots are free.
 */
export async function recordOutcome(core: EngineCore, r: OutcomeRecord): Promise<boolean> {
  const { attempt, state, owner = core.owner, slot } = r;
  let { outcome } = r;
  if (outcome.kind === "fanout" && outcome.blocks.length === 0) outcome = join(outcome.join, state, []);
  const prepared = await core.prepare(attempt, state, outcome);
  let traceparent: string | null = null;
  let recorded = false;
  const messages = await core.commitSoon(() => {
    const run = core.snapshot(attempt.run_id, attempt.id);
    if (!run) return [];
    traceparent = run.run.traceparent;
    const commands = settle(run, {
      attemptId: attempt.id,
      from: "running",
      prepared,
      ...(prepared.outcome.kind === "fanout"
        ? { scopeContext: core.scope(attempt.run_id, attempt.scope) }
        : {}),
    }, { ...core.env(), owner });
    recorded = commands.length > 0;
    return commands;
  }, { eager: owner === core.owner, slot });
  core.notify(attempt.run_id);
  try {
    await core.publishAll(messages, traceparent);
  } catch (err) {
    // Recorded all the same: the sweep re-dispatches scheduled steps whose message did not go out.
    log.warn("next steps not published yet", { run: attempt.run_id, error: errorMessage(err) });
  }
  return recorded;
}
