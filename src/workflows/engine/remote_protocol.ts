import { z } from "zod";

/**
 * What the station and `stn worker` processes say to each other over NATS request/reply
 * (docs/design/scale-out.md#one-writer-many-runners). A worker pulls step messages from JetStream itself; the
 * station stays the single writer of the ledger: it claims the attempt for the worker (fencing), hands it
 * what the step needs, renews its lease on heartbeats and records its outcome. Every request is idempotent.
 */

export const CLAIM_SUBJECT = "stn.workers.claim";
export const OUTCOME_SUBJECT = "stn.workers.outcome";
export const HEARTBEAT_SUBJECT = "stn.workers.heartbeat";
export const RELEASE_SUBJECT = "stn.workers.release";
/** `stn.workers.run_ended.<run>`: published when a run ends, so workers close what they kept for it (a sandbox). */
export const RUN_ENDED_SUBJECT = "stn.workers.run_ended";

/** A step message as JetStream carries it (`dispatch.ts`). */
const StepRef = z.object({
  id: z.int(),
  run: z.string().min(1),
  path: z.string().min(1),
  attempt: z.int().min(1),
});
export type StepRef = z.infer<typeof StepRef>;

/** A worker asks to run the attempt a step message names. */
export const ClaimRequest = z.object({ worker: z.string().min(1), step: StepRef });
export type ClaimRequest = z.infer<typeof ClaimRequest>;

/**
 * The station's answer: `run` (claimed for the worker, with what the executor needs), `drop` (stale
 * or duplicate: ack it), `busy` (claimed by someone alive: nak for retryMs) or `settled` (a fan-out
 * parent whose children the station joined itself: ack it).
 */
export type ClaimReply =
  | {
    kind: "run";
    state: unknown;
    scope: Record<string, unknown>;
    workflowId: string;
    /** Which visit of its path the attempt is (a step visited twice has two attempt-1 rows). */
    visit: number;
    timeoutMs: number;
    leaseMs: number;
  }
  | { kind: "drop" }
  | { kind: "busy"; retryMs: number }
  | { kind: "settled" }
  | { kind: "error"; message: string };

/** A worker's outcome of an attempt it claimed; a repeat of one already recorded changes nothing. */
export const OutcomeRequest = z.object({
  worker: z.string().min(1),
  step: StepRef,
  outcome: z.looseObject({ kind: z.enum(["completed", "failed", "sleep", "approval", "await", "fanout"]) }),
});
export type OutcomeRequest = z.infer<typeof OutcomeRequest>;

/** `recorded: false` means the claim had lapsed or the outcome was already recorded (fenced). */
export type OutcomeReply = { recorded: boolean } | { error: string };

/** Who a worker is and what it runs now; sent every lease/3, it renews the leases of its in-flight steps. */
export const Heartbeat = z.object({
  worker: z.string().min(1),
  name: z.string(),
  host: z.string(),
  pid: z.int(),
  queues: z.array(z.string()).min(1),
  concurrency: z.int().min(1),
  started_at: z.string(),
  steps: z.array(StepRef),
  /** The worker is draining (SIGTERM): it takes no new step. */
  draining: z.boolean().default(false),
  /** The worker runs `agent` steps (docs/workers.md#agent-steps); an older one hands them to the station. */
  agents: z.boolean().default(false),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/** A draining worker hands steps back: their leases lapse at once, so another worker reclaims them now. */
export const ReleaseRequest = z.object({ worker: z.string().min(1), steps: z.array(StepRef) });
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;
