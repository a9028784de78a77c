/** What the engine's parts do after a commit: EngineCore's collaborators, handed to it when it is made. */

import type { AttemptRow } from "./ledger.ts";
import type { Slot } from "./slots.ts";

/**
 * What the engine's parts do after a commit, handed to EngineCore when it is made (Engine's constructor wires
 * them to its timers, signals and consumer): the one list of in-process effects besides watchers and run ends.
 */
export interface AfterCommit {
  /** Re-arms the in-process timer after a commit added a timer row (Timers). */
  armTimers(): void;
  /** Offers kept signals to a wait that just started (Signals). */
  waitStarted(runId: string, attemptId: number): void;
  /** Whether this process runs eagerly claimed steps now: its consumer is pulling (Consumer). */
  runsHere(): boolean;
  /** Runs an attempt this process claimed eagerly, holding `slot` until it is done (Consumer). */
  runHere(attempt: AttemptRow, slot: Slot): void;
}

/** No effects: a core nothing else runs beside (a test writing commits by hand). */
export const NO_EFFECTS: AfterCommit = {
  armTimers: () => {},
  waitStarted: () => {},
  runsHere: () => false,
  runHere: () => {},
};
