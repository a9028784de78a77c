import { Cron } from "croner";
import type { Database } from "../../db/database.ts";
import { log } from "../../log.ts";
import type { WorkflowStore } from "../store.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Engine } from "./engine.ts";
import type { ScheduleRow } from "./ledger.ts";
import { Repository } from "./repository.ts";

/** The next instant (ms) a cron fires after `from`, in its time zone; null when it never does. */
export function nextFire(cron: string, timezone: string, from: Date): number | null {
  const next = new Cron(cron, { timezone, paused: true }).nextRun(from);
  return next ? next.getTime() : null;
}

/**
 * Runs workflows on their `schedule` while a runtime is up. Only the latest version of an active
 * workflow is scheduled (older versions and disabled workflows never fire); the `next_run_at`
 * compare-and-set in the ledger makes a fire happen once even with several stn processes.
 */
export class Scheduler {
  #engine: Engine;
  #store: WorkflowStore;
  #repo: Repository;
  #clock: Clock;
  #timer?: ReturnType<typeof setInterval>;
  #ticking = false;
  #lastReconcile = 0;

  constructor(engine: Engine, store: WorkflowStore, db: Database, clock: Clock = systemClock) {
    this.#engine = engine;
    this.#store = store;
    this.#repo = new Repository(db);
    this.#clock = clock;
  }

  /** Reconciles the schedules with the store, then checks for due ones every `everyMs`. */
  start(everyMs = 500): void {
    this.reconcile();
    this.#timer = setInterval(() => this.#tick(), everyMs);
  }

  /** Stops firing. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** Makes the schedules table match the latest enabled versions of active workflows. */
  reconcile(): void {
    const wanted = new Map<string, Omit<ScheduleRow, "next_run_at" | "last_run_at" | "last_run_id">>();
    for (const rec of this.#store.list({ status: "active" })) {
      const { definition, version } = this.#store.get(rec.id);
      const s = definition.schedule;
      if (!s || s.enabled === false) continue;
      wanted.set(rec.id, {
        workflow_id: rec.id,
        version,
        cron: s.cron,
        timezone: s.timezone ?? "UTC",
        input: JSON.stringify(s.input ?? {}),
      });
    }
    const schedules = this.#repo.schedules;
    this.#repo.transaction(() => {
      for (const row of schedules.all()) {
        const w = wanted.get(row.workflow_id);
        if (!w) schedules.delete(row.workflow_id);
        else if (w.version === row.version && w.cron === row.cron && w.timezone === row.timezone) {
          wanted.delete(row.workflow_id);
        }
      }
      for (const w of wanted.values()) {
        const next = nextFire(w.cron, w.timezone, new Date(this.#clock.now()));
        if (next === null) continue;
        schedules.put({ ...w, next_run_at: next });
      }
    });
    this.#lastReconcile = this.#clock.now();
  }

  async #tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      // Definitions change through the API or a sync: pick that up every few seconds.
      if (this.#clock.now() - this.#lastReconcile > 2000) this.reconcile();
      const schedules = this.#repo.schedules;
      for (const row of schedules.due(this.#clock.now())) {
        const now = this.#clock.now();
        const next = nextFire(row.cron, row.timezone, new Date(Math.max(now, row.next_run_at)));
        if (!schedules.advance(row.workflow_id, row.next_run_at, next ?? Number.MAX_SAFE_INTEGER, now)) {
          continue;
        }
        const { definition, version } = this.#store.get(row.workflow_id, row.version);
        try {
          const run = await this.#engine.startRun({
            definition,
            workflowVersion: version,
            input: JSON.parse(row.input),
            trigger: {
              type: "cron",
              scheduled_at: new Date(row.next_run_at).toISOString(),
              expression: row.cron,
              timezone: row.timezone,
            },
          });
          schedules.setLastRun(row.workflow_id, run.id);
        } catch (err) {
          log.warn("scheduled run could not start", {
            workflow: row.workflow_id,
            error: (err as Error).message,
          });
        }
      }
    } catch (err) {
      log.error("scheduler tick failed", { error: (err as Error).message });
    } finally {
      this.#ticking = false;
    }
  }
}
