/**
 * The engine's one door: code outside src/workflows/engine/ imports only this module
 * (tests/architecture_test.ts). It offers the Engine and its settings, the ledger's row types and their
 * API views, the workflow scheduler, and the protocol a remote `stn worker` speaks over NATS.
 */

export {
  Engine,
  type EngineOptions,
  type EngineStats,
  type ForkOptions,
  type LedgerReads,
  type SendEventRequest,
  type SendEventResult,
  type SignalRequest,
  type SignalResult,
  type StartRunRequest,
  type WithDefinition,
  type WorkerView,
} from "./engine.ts";
export { Scheduler } from "./scheduler.ts";
export {
  type ApprovalRow,
  type ApprovalStatus,
  type AttemptRow,
  type AttemptStatus,
  type EventRecordRow,
  type EventRow,
  RUN_STATUSES,
  type RunRow,
  type RunStatus,
  type SignalRow,
  type StepError,
  TERMINAL_RUN,
} from "./ledger.ts";
export type { EventQuery, RunQuery } from "./repository.ts";
export {
  type ApprovalView,
  approvalView,
  eventView,
  type RunView,
  runView,
  signalView,
  type StepView,
  stepView,
} from "./views.ts";
// The remote workers' protocol: the step queues they pull from, and the subjects they ask the station on.
export { CANCEL_SUBJECT } from "./control.ts";
export {
  consumerName,
  defaultReplicas,
  provisionQueue,
  provisionStream,
  type StepMessage,
  STREAM,
} from "./dispatch.ts";
export {
  CLAIM_SUBJECT,
  type ClaimReply,
  type ClaimRequest,
  type Heartbeat,
  HEARTBEAT_SUBJECT,
  OUTCOME_SUBJECT,
  type OutcomeReply,
  type OutcomeRequest,
  RELEASE_SUBJECT,
  type ReleaseRequest,
  RUN_ENDED_SUBJECT,
  type StepRef,
} from "./remote_protocol.ts";
export { stepHolder } from "./step_limits.ts";
