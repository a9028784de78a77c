/**
 * RunClaims: which `stn worker` holds an agent run started on a task queue (migration 0028), and the writes
 * the station already applied for workers. Part of the agent-run ledger (ledger.ts): each change is one
 * transaction with the run's event.
 */

import { type Database, transaction } from "../db/database.ts";
import { Statements } from "../db/statements.ts";
import { type Clock, iso, systemClock } from "../lib/clock.ts";
import type { AgentLedger, AgentRunRow } from "./ledger.ts";
import type { AgentTakeRequest, RunClaim } from "./remote_protocol.ts";

/** Takes, renews, releases and checks the claims of queued agent runs. */
export class RunClaims {
  #db: Database;
  #q: Statements;
  #ledger: AgentLedger;
  #clock: Clock;

  constructor(db: Database, ledger: AgentLedger, clock: Clock = systemClock) {
    this.#db = db;
    this.#q = new Statements(db);
    this.#ledger = ledger;
    this.#clock = clock;
  }

  /**
   * Takes the oldest running run of these queues that no worker holds (never taken, handed back, or its
   * worker's lease lapsed) for `worker`, bumping its claim number; undefined when none waits. A first take
   * starts the run's clock: its timeout counts from here, not from when it was queued.
   */
  take(req: AgentTakeRequest, leaseMs: number): AgentRunRow | undefined {
    const now = this.#clock.now();
    return transaction(this.#db, () => {
      const row = this.#q.get<AgentRunRow>(
        `SELECT * FROM agent_runs WHERE queue IN (SELECT value FROM json_each(?)) AND status = 'running'
           AND (owner IS NULL OR lease_until < ?) ORDER BY id LIMIT 1`,
        JSON.stringify(req.queues),
        now,
      );
      if (!row) return undefined;
      this.#q.run(
        `UPDATE agent_runs SET owner = ?, lease_until = ?, claims = claims + 1,
           started_at = CASE WHEN claims = 0 THEN ? ELSE started_at END WHERE id = ?`,
        req.worker,
        now + leaseMs,
        iso(now),
        row.id,
      );
      this.#ledger.event(row.id, "run_claimed", {
        owner: req.worker,
        worker: req.name,
        queue: row.queue,
        claim: row.claims + 1,
      });
      return this.#ledger.get(row.id);
    });
  }

  /** Renews the leases of the runs these claims still hold. */
  renew(claims: RunClaim[], leaseMs: number): void {
    const until = this.#clock.now() + leaseMs;
    transaction(this.#db, () => {
      for (const c of claims) {
        this.#q.run(
          "UPDATE agent_runs SET lease_until = ? WHERE id = ? AND owner = ? AND claims = ? AND status = 'running'",
          until,
          c.run_id,
          c.worker,
          c.claim,
        );
      }
    });
  }

  /** Hands runs back (a draining worker): no one holds them, so the next worker to ask takes them at once. */
  release(claims: RunClaim[]): number {
    let released = 0;
    transaction(this.#db, () => {
      for (const c of claims) {
        const n = this.#q.run(
          `UPDATE agent_runs SET owner = NULL, lease_until = 0 WHERE id = ? AND owner = ? AND claims = ?
             AND status = 'running'`,
          c.run_id,
          c.worker,
          c.claim,
        );
        if (n > 0) this.#ledger.event(c.run_id, "run_released", { owner: c.worker });
        released += n;
      }
    });
    return released;
  }

  /** Whether the worker holds exactly this claim of the run (another take since means it lost it). */
  holds(c: RunClaim): boolean {
    const row = this.#ledger.get(c.run_id);
    return row !== undefined && row.owner === c.worker && row.claims === c.claim;
  }

  /**
   * Applies a worker's write once per `writeId` (a re-sent write, its answer lost, changes nothing), in one
   * transaction with its record; returns whether it was applied now.
   */
  once(runId: string, writeId: string, apply: () => void): boolean {
    return transaction(this.#db, () => {
      const fresh = this.#q.run(
        "INSERT OR IGNORE INTO agent_run_writes (run_id, write_id) VALUES (?, ?)",
        runId,
        writeId,
      ) > 0;
      if (fresh) apply();
      return fresh;
    });
  }

  /** Forgets a run's write ids once it has ended (a write to an ended run is refused anyway). */
  forget(runId: string): void {
    this.#q.run("DELETE FROM agent_run_writes WHERE run_id = ?", runId);
  }
}
