/** The engine's settings (config section `engine`) and the counters it keeps for tests and benchmarks. */

import type { Clock } from "../../lib/clock.ts";
import type { AgentRunner, SandboxRunner } from "../steps/runners.ts";
import type { LedgerSync, StartCounts } from "./step_sync.ts";

/** Engine settings (config section `engine`). */
export interface EngineOptions {
  /** Steps this process executes at once (0: none, remote `stn worker` processes run them all). */
  workers: number;
  /** Copies of the WORKFLOWS stream in a NATS cluster (default: 3 on a cluster, else 1). */
  replicas?: number;
  ackWaitMs: number;
  maxDeliver: number;
  leaseMs: number;
  defaultTimeoutMs: number;
  /** MaxAge of the WORKFLOWS stream (engine.queue_max_age; default 7 days). */
  queueMaxAgeMs?: number;
  /** Handed to executors of `sandbox` steps. */
  sandbox?: SandboxRunner;
  /** Handed to executors of `agent` steps. */
  agents?: AgentRunner;
  /** Where every time decision reads the time (default: the wall clock). */
  clock?: Clock;
  /** How long a sent event's id is remembered (idempotency) and the event listed (default 7 days). */
  eventRetentionMs?: number;
  /** The ledger's sync: step messages are acked, workers' outcomes answered, once it covers them (default: none). */
  ledger?: LedgerSync;
  /** `ledger.durability: step`: a step starts only once what it follows from is on disk (step_sync.ts). */
  stepDurability?: boolean;
}

/** Counters for tests and benchmarks. */
export interface EngineStats extends StartCounts {
  executed: number;
  dropped: number;
  /** Outcomes recorded for remote workers. */
  remote: number;
  /** Steps claimed by this station in the transaction that scheduled them (eager dispatch, no message). */
  eager: number;
}
