/** Scheduler: runs workflows on their `schedule` while a station is up, each fire once. */

import type { Database } from "../../db/database.ts";
import { log } from "../../log.ts";
import type { WorkflowStore } from "../store.ts";
import { type Clock, systemClock } from "./clock.ts";
import { CronLoop, nextFire } from "./cron.ts";
import type { Engine } from "./engine.ts";
import type { ScheduleRow } from "./ledger.ts";
import { Repository } from "./repository.ts";

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
  #loop: CronLoop<ScheduleRow>;

  constructor(engine: Engine, store: WorkflowStore, db: Database, clock: Clock = systemClock) {
    this.#engine = engine;
    this.#store = store;
    this.#repo = new Repository(db);
    this.#clock = clock;
    const schedules = this.#repo.schedules;
    this.#loop = new CronLoop<ScheduleRow>(
      {
        reconcile: () => this.#reconcile(),
        due: (now) => schedules.due(now),
        next: () =>
          schedules.all().reduce<number | null>((m, r) => Math.min(m ?? Infinity, r.next_run_at), null),
        advance: (row, next, now) => schedules.advance(row.workflow_id, row.next_run_at, next, now),
        fire: (row) => this.#fire(row),
      },
      clock,
      "scheduler",
    );
  }

  /** Reconciles the schedules with the store, then checks for due ones every `everyMs`. */
  start(everyMs = 500): void {
    this.#loop.start(everyMs);
  }

  /** Stops firing. */
  stop(): void {
    this.#loop.stop();
  }

  /** Why the scheduler is not idle now (firing, fires due), else null. */
  busy(): string | null {
    return this.#loop.busy();
  }

  /** When the next schedule is due (null when none). */
  nextDue(): number | null {
    return this.#loop.nextDue();
  }

  /** Makes the schedules table match the latest enabled versions of active workflows. */
  reconcile(): void {
    this.#loop.reconcile();
  }

  #reconcile(): void {
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
  }

  async #fire(row: ScheduleRow): Promise<void> {
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
      this.#repo.schedules.setLastRun(row.workflow_id, run.id);
    } catch (err) {
      log.warn("scheduled run could not start", {
        workflow: row.workflow_id,
        error: (err as Error).message,
      });
    }
  }
}
