/**
 * Agent runs' concurrency keys (docs/agents.md#concurrency): an agent's `concurrency:` evaluated over a run's
 * input, and, inside the agent ledger's transactions, a new run's keys recorded held or waited for and the
 * waiting runs admitted when a run ends. The decisions are the shared ones of `lib/concurrency.ts`, the rows
 * the shared `run_concurrency` of `db/concurrency_keys.ts`, so the limits hold for every caller and restart.
 */

import {
  acquireKeys,
  AGENT_KEY_PREFIX,
  ConcurrencyKeys,
  enqueueKeys,
  releaseKeys,
} from "../db/concurrency_keys.ts";
import type { Statements } from "../db/statements.ts";
import { blockedKeys, type KeySlot, pickAdmissions, type Waiter } from "../lib/concurrency.ts";
import { DEFAULT_PRIORITY, keyValue } from "../workflows/definition/flow_control.ts";
import { iso } from "../lib/clock.ts";
import type { AgentDefinition } from "./types.ts";

/** How many waiters per key the start-up pass reads (a newer definition may have raised a key's limit). */
const ADMIT_AT_START = 1000;

/** A run's concurrency keys (evaluated) and its priority. */
export interface AgentAdmission {
  slots: KeySlot[];
  priority: number;
}

/** Where a waiting run stands: the first key it waits for and its place in that key's queue (1 = next). */
export interface WaitingFor {
  key: string;
  position: number;
}

/**
 * An agent's keys over a run's input (its variables and `task`): `agent:<env>/<agent>` without a template,
 * `agent:<env>/<agent>/<value>` with one; undefined when the agent has no `concurrency:`.
 */
export async function agentAdmission(
  def: AgentDefinition,
  input: { task: string; variables: Record<string, unknown> },
  priority?: number,
): Promise<AgentAdmission | undefined> {
  if (!def.concurrency) return undefined;
  const base = `${AGENT_KEY_PREFIX}${def.environment}/${def.name}`;
  const data = { ...input.variables, task: input.task };
  const byKey = new Map<string, number>();
  for (const c of def.concurrency) {
    const key = c.key === undefined ? base : `${base}/${await keyValue(c.key, data)}`;
    byKey.set(key, Math.min(c.limit, byKey.get(key) ?? Infinity));
  }
  return {
    slots: [...byKey].map(([key, limit]) => ({ key, limit })),
    priority: priority ?? def.priority ?? DEFAULT_PRIORITY,
  };
}

/** The agent runs' side of the ledger's concurrency keys; every method runs inside the caller's transaction. */
export class AgentKeys {
  readonly reads: ConcurrencyKeys;
  #sql: Statements;
  #event: (runId: string, type: string, data: unknown) => void;

  /** `event` appends a run's event (the ledger's, in the same transaction). */
  constructor(sql: Statements, event: (runId: string, type: string, data: unknown) => void) {
    this.#sql = sql;
    this.#event = event;
    this.reads = new ConcurrencyKeys(sql);
  }

  /** Records a new run's keys: held when they all have room (undefined), else waited for (where it stands). */
  enqueue(runId: string, a: AgentAdmission, now: number): WaitingFor | undefined {
    const blocked = blockedKeys(a.slots, (k) => this.reads.usage(k, now));
    const held = blocked.length === 0;
    const waitingFor = held
      ? undefined
      : { key: blocked[0].key, position: this.reads.usage(blocked[0].key, now).waiting + 1 };
    enqueueKeys(this.#sql, { runId, slots: a.slots, priority: a.priority, queuedMs: now, held });
    return waitingFor;
  }

  /** Gives back an ended run's keys; returns the waiting runs that now hold theirs (best ranked first). */
  release(runId: string, now: number): string[] {
    const freed: string[] = [];
    releaseKeys(this.#sql, runId, freed);
    return this.admit(freed, now);
  }

  /**
   * Admits the runs waiting for these keys that fit now (a key given n times: its first n waiters): they hold
   * their keys and run from now (`started_at`, so their timeout counts from here), with a `run_admitted` event.
   */
  admit(keys: string[], now: number, perKey?: number): string[] {
    const counts = new Map<string, number>();
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    const waiters = new Map<number, Waiter>();
    for (const [key, n] of counts) {
      for (const w of this.reads.firstWaiting(key, perKey ?? n, now)) waiters.set(w.seq, w);
    }
    const ordered = [...waiters.values()].sort((a, b) => a.seq - b.seq);
    const admitted = pickAdmissions(ordered, (k) => this.reads.usage(k, now).held, now);
    const at = iso(now);
    for (const runId of admitted) {
      acquireKeys(this.#sql, runId, now);
      const row = this.#sql.get<{ created_at: string }>(
        `UPDATE agent_runs SET status = 'running', started_at = ? WHERE id = ? AND status = 'waiting_for_concurrency'
         RETURNING created_at`,
        at,
        runId,
      );
      if (row) this.#event(runId, "run_admitted", { waited_ms: now - Date.parse(row.created_at) });
    }
    return admitted;
  }

  /** Admits whatever fits on every agent key some run waits for (at start: limits may have been raised). */
  admitAll(now: number): string[] {
    return this.admit(this.reads.waitedFor(true), now, ADMIT_AT_START);
  }

  /** Agent runs waiting for concurrency keys, per agent (the /metrics gauge). */
  waitingRuns(): { agent: string; n: number }[] {
    return this.#sql.all<{ agent: string; n: number }>(
      "SELECT agent, COUNT(*) AS n FROM agent_runs WHERE status = 'waiting_for_concurrency' GROUP BY agent",
    ).map((r) => ({ ...r }));
  }

  /** Agent runs on a task queue no worker has taken yet, per queue (the /metrics gauge). */
  queuedRuns(): { queue: string; n: number }[] {
    return this.#sql.all<{ queue: string; n: number }>(
      `SELECT queue, COUNT(*) AS n FROM agent_runs WHERE status = 'running' AND queue IS NOT NULL AND owner IS NULL
       GROUP BY queue`,
    ).map((r) => ({ ...r }));
  }
}
