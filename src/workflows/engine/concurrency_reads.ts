/** The engine's reads of concurrency keys: the shared ones (`db/concurrency_keys.ts`) and waiting runs per workflow. */

import { ConcurrencyKeys } from "../../db/concurrency_keys.ts";

export type { WaitingFor } from "../../db/concurrency_keys.ts";

/** How busy each concurrency key is, which runs wait for it, and how many runs of each workflow wait. */
export class ConcurrencyReads extends ConcurrencyKeys {
  /** Runs waiting for concurrency keys, per workflow. */
  readonly waitingRuns = (): { workflow_id: string; n: number }[] =>
    this.sql.all<{ workflow_id: string; n: number }>(
      `SELECT workflow_id, COUNT(*) AS n FROM workflow_runs WHERE status = 'waiting_for_concurrency'
       GROUP BY workflow_id`,
    ).map((r) => ({ ...r }));
  /** Step attempts waiting for concurrency keys, per workflow (their runs go on running). */
  readonly waitingSteps = (): { workflow_id: string; n: number }[] =>
    this.sql.all<{ workflow_id: string; n: number }>(
      `SELECT r.workflow_id, COUNT(*) AS n FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE a.status = 'waiting_for_concurrency' GROUP BY r.workflow_id`,
    ).map((r) => ({ ...r }));
}
