/** Idleness: whether the engine could still do something now, for quiescence in tests (src/testing/quiescence.ts). */

import type { Database } from "../../db/database.ts";
import type { EngineCore } from "./core.ts";
import type { AttemptRow } from "./ledger.ts";
import { Statements } from "./repository.ts";

const ACTIVE_RUN = "r.status NOT IN ('paused','completed','failed','canceled')";

/**
 * Why the engine is busy (docs/testing.md#skipped-time): a task of this process not settled (a message being
 * claimed, a commit waiting for its group, a timer firing), a step running here or anywhere, a step some live
 * process would claim (its message in flight or queued), a timer due. Null when none holds: only a later timer,
 * an approval, a signal or an event can move a run on.
 */
export class Idleness {
  #core: EngineCore;
  #sql: Statements;
  #waitingFor: (a: AttemptRow) => string | null;

  /** `waitingFor` says why a scheduled step has no live process to run it (its queue is unserved). */
  constructor(db: Database, core: EngineCore, waitingFor: (a: AttemptRow) => string | null) {
    this.#core = core;
    this.#sql = new Statements(db);
    this.#waitingFor = waitingFor;
  }

  /** Why the engine is not idle now, else null. */
  busy(): string | null {
    const core = this.#core;
    if (core.pending > 0) return `${core.pending} engine task(s) in progress`;
    if (core.inflight.size > 0) return `${core.inflight.size} step(s) running here`;
    const running = this.#sql.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE a.status = 'running' AND ${ACTIVE_RUN}`,
    )!.n;
    if (running > 0) return `${running} step(s) running`;
    // Scheduled and not waiting out a retry backoff: its message is in flight or queued, or it is claimed soon.
    const claimable = this.#sql.all<AttemptRow>(
      `SELECT a.* FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE a.status = 'scheduled' AND ${ACTIVE_RUN} AND NOT EXISTS
         (SELECT 1 FROM timers t WHERE t.attempt_id = a.id AND t.kind = 'retry' AND t.status = 'pending')`,
    ).filter((a) => this.#waitingFor(a) === null);
    if (claimable.length > 0) return `${claimable.length} step(s) about to run`;
    const next = core.repo.timers.nextFireAt();
    if (next !== null && next <= core.clock.now()) return "timers due";
    return null;
  }
}
