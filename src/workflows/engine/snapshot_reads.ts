/** The ledger read behind every transition: a run's state as transitions see it (RunState). */

import type { Statements } from "../../db/statements.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";
import type { AttemptRow, RunHead } from "./ledger.ts";
import type { RunState, ScopeState } from "./run_state.ts";

// An attempt's columns as transitions read them: a waiting one's output (what it waits on), no other's.
const ATTEMPT_COLUMNS = `id, run_id, scope, path, step_id, step_type, visit, attempt, status,
  CASE WHEN status = 'waiting' THEN output END AS output, error, owner, lease_until, dispatched_at,
  created_at, started_at, completed_at`;

/** Reads runs as transitions see them, with only the columns they use (a step's commit reads one each). */
export class SnapshotReads {
  #sql: Statements;
  #head: (runId: string) => RunHead | undefined;

  /** `head` reads a run's head (Repository's `runs.head`). */
  constructor(sql: Statements, head: (runId: string) => RunHead | undefined) {
    this.#sql = sql;
    this.#head = head;
  }

  /**
   * A run as transitions read it: its head (no definition, input or result: `definitionOf` gives the
   * definition, from the engine's cache), its unfinished attempts, the attempts named in `include` whatever
   * their status, and all its scopes (without their data); undefined when there is no such run.
   */
  read(
    runId: string,
    definitionOf: (runId: string) => WorkflowDefinition,
    include: number[] = [],
  ): RunState | undefined {
    const run = this.#head(runId);
    if (!run) return undefined;
    const attempts = this.#sql.all<AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS} FROM step_attempts WHERE run_id = ?
       AND status IN ('scheduled','running','waiting','waiting_for_concurrency')`,
      runId,
    );
    for (const id of include) {
      if (attempts.some((a) => a.id === id)) continue;
      const row = this.#sql.get<AttemptRow>(
        `SELECT ${ATTEMPT_COLUMNS} FROM step_attempts WHERE id = ? AND run_id = ?`,
        id,
        runId,
      );
      if (row) attempts.push(row);
    }
    attempts.sort((x, y) => x.id - y.id);
    const scopes = this.#sql.all<ScopeState>(
      "SELECT run_id, scope, parent_attempt, key, position, status FROM run_scopes WHERE run_id = ?",
      runId,
    );
    return {
      run,
      definition: definitionOf(runId),
      attempts: new Map(attempts.map((a) => [a.id, a])),
      scopes: new Map(scopes.map((s) => [s.scope, s])),
      lastVisit: (path) =>
        this.#sql.get<{ v: number }>(
          "SELECT COALESCE(MAX(visit), 0) AS v FROM step_attempts WHERE run_id = ? AND path = ?",
          runId,
          path,
        )!.v,
    };
  }
}
