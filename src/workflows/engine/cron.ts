/** Cron schedules: the next instant a cron fires, and the loop that fires a schedule table's due rows. */

import { Cron } from "croner";
import { log } from "../../log.ts";
import type { Clock } from "./clock.ts";

/** The next instant (ms) a cron fires after `from`, in its time zone; null when it never does. */
export function nextFire(cron: string, timezone: string, from: Date): number | null {
  const next = new Cron(cron, { timezone, paused: true }).nextRun(from);
  return next ? next.getTime() : null;
}

/** A schedule row as the loop sees it: when it is next due, by which cron. */
export interface CronRow {
  cron: string;
  timezone: string;
  next_run_at: number;
}

/** The table a CronLoop fires from (workflow schedules, agent schedules). */
export interface CronTable<R extends CronRow> {
  /** Makes the table follow the current definitions. */
  reconcile(): void;
  /** The rows due at `now`. */
  due(now: number): R[];
  /** When the earliest row is due next (null when the table is empty). */
  next(): number | null;
  /** Moves a row's next_run_at from the value read to `next` (compare-and-set); false when another process did. */
  advance(row: R, next: number, now: number): boolean;
  /** Starts the run of one fire; it handles its own failure (nothing started, the next fire tries again). */
  fire(row: R): Promise<void>;
}

/**
 * Fires a schedule table's due rows while a station is up: a tick at a time, re-reconciling every few
 * seconds (definitions change through the API or a sync), each row advanced past now before it fires
 * so a fire missed while the station was down happens once, and the compare-and-set makes each fire
 * happen once even with several stn processes.
 */
export class CronLoop<R extends CronRow> {
  #table: CronTable<R>;
  #clock: Clock;
  #name: string;
  #timer?: ReturnType<typeof setInterval>;
  #offJump?: () => void;
  #ticking = false;
  #lastReconcile = 0;

  /** `name` says which scheduler failed in the log ("scheduler", "agent scheduler"). */
  constructor(table: CronTable<R>, clock: Clock, name: string) {
    this.#table = table;
    this.#clock = clock;
    this.#name = name;
  }

  /** Reconciles the table, then checks for due rows every `everyMs`. */
  start(everyMs: number): void {
    this.reconcile();
    this.#timer = setInterval(() => this.#tick(), everyMs);
    // A virtual clock's jump (to this table's next fire, say) is looked at now, not at the next tick.
    this.#offJump = this.#clock.onJump?.(() => void this.#tick());
  }

  /** Stops firing (runs already started go on). */
  stop(): void {
    clearInterval(this.#timer);
    this.#offJump?.();
  }

  /** Why the loop is not idle now (a tick firing, rows due), else null — for quiescence in tests. */
  busy(): string | null {
    if (this.#ticking) return `${this.#name} firing`;
    return this.#table.due(this.#clock.now()).length > 0 ? `${this.#name} has fires due` : null;
  }

  /** When the table's earliest row is due next (null when none). */
  nextDue(): number | null {
    return this.#table.next();
  }

  /** Makes the table follow the definitions now. */
  reconcile(): void {
    this.#table.reconcile();
    this.#lastReconcile = this.#clock.now();
  }

  async #tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      if (this.#clock.now() - this.#lastReconcile > 2000) this.reconcile();
      for (const row of this.#table.due(this.#clock.now())) {
        const now = this.#clock.now();
        const next = nextFire(row.cron, row.timezone, new Date(Math.max(now, row.next_run_at)));
        if (!this.#table.advance(row, next ?? Number.MAX_SAFE_INTEGER, now)) continue;
        await this.#table.fire(row);
      }
    } catch (err) {
      log.error(`${this.#name} tick failed`, { error: (err as Error).message });
    } finally {
      this.#ticking = false;
    }
  }
}
