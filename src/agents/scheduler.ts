import { type Database, transaction } from "../db/database.ts";
import { log } from "../log.ts";
import { type Clock, systemClock } from "../workflows/engine/clock.ts";
import { nextFire } from "../workflows/engine/scheduler.ts";
import { Statements } from "../workflows/engine/repository.ts";
import type { AgentService } from "./service.ts";
import { scheduledAgents } from "./store.ts";

/** One row of `agent_schedules` (migration 0014). */
interface AgentScheduleRow {
  environment: string;
  agent: string;
  checksum: string;
  cron: string;
  timezone: string;
  task: string;
  variables: string;
  next_run_at: number;
  last_run_at: number | null;
  last_run_id: string | null;
}

type Wanted = Omit<AgentScheduleRow, "next_run_at" | "last_run_at" | "last_run_id">;

/**
 * Runs agents on their `.prompt` `schedule:` while a station is up, through the one entry every caller
 * uses (AgentService), with trigger `schedule`. Works like the workflow scheduler: the table follows the
 * synced agents (a disabled schedule or a removed file drops its row at the next reconcile), a fire
 * missed while the station was down happens once at start, and the `next_run_at` compare-and-set makes
 * each fire happen once even with several stn processes.
 */
export class AgentScheduler {
  #agents: AgentService;
  #q: Statements;
  #clock: Clock;
  #timer?: ReturnType<typeof setInterval>;
  #ticking = false;
  #lastReconcile = 0;

  constructor(agents: AgentService, db: Database, clock: Clock = systemClock) {
    this.#agents = agents;
    this.#q = new Statements(db);
    this.#clock = clock;
  }

  /** Reconciles the schedules with the agents table, then checks for due ones every `everyMs`. */
  start(everyMs = 500): void {
    this.reconcile();
    this.#timer = setInterval(() => this.#tick(), everyMs);
  }

  /** Stops firing (runs already started go on under the agent service). */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** Makes `agent_schedules` match the synced agents' enabled schedules; a changed file restarts its clock. */
  reconcile(): void {
    const key = (env: string, agent: string) => `${env}\u0000${agent}`;
    const wanted = new Map<string, Wanted>();
    for (const def of scheduledAgents(this.#q.db)) {
      const s = def.schedule!;
      wanted.set(key(def.environment, def.name), {
        environment: def.environment,
        agent: def.name,
        checksum: def.checksum,
        cron: s.cron,
        timezone: s.timezone ?? "UTC",
        task: s.task ?? `Scheduled run of ${def.name}`,
        variables: JSON.stringify(s.variables ?? {}),
      });
    }
    transaction(this.#q.db, () => {
      for (const row of this.#q.all<AgentScheduleRow>("SELECT * FROM agent_schedules")) {
        const w = wanted.get(key(row.environment, row.agent));
        if (!w) {
          this.#q.run(
            "DELETE FROM agent_schedules WHERE environment = ? AND agent = ?",
            row.environment,
            row.agent,
          );
        } else if (w.checksum === row.checksum) wanted.delete(key(row.environment, row.agent));
      }
      for (const w of wanted.values()) {
        const next = nextFire(w.cron, w.timezone, new Date(this.#clock.now()));
        if (next === null) continue;
        this.#q.run(
          `INSERT INTO agent_schedules (environment, agent, checksum, cron, timezone, task, variables, next_run_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (environment, agent) DO UPDATE SET checksum = excluded.checksum, cron = excluded.cron,
             timezone = excluded.timezone, task = excluded.task, variables = excluded.variables,
             next_run_at = excluded.next_run_at`,
          w.environment,
          w.agent,
          w.checksum,
          w.cron,
          w.timezone,
          w.task,
          w.variables,
          next,
        );
      }
    });
    this.#lastReconcile = this.#clock.now();
  }

  async #tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      // Agents change with `stn sync` (CLI or API): pick that up every few seconds.
      if (this.#clock.now() - this.#lastReconcile > 2000) this.reconcile();
      const due = this.#q.all<AgentScheduleRow>(
        "SELECT * FROM agent_schedules WHERE next_run_at <= ?",
        this.#clock.now(),
      );
      for (const row of due) {
        const now = this.#clock.now();
        const next = nextFire(row.cron, row.timezone, new Date(Math.max(now, row.next_run_at)));
        const moved = this.#q.run(
          `UPDATE agent_schedules SET next_run_at = ?, last_run_at = ?
           WHERE environment = ? AND agent = ? AND next_run_at = ?`,
          next ?? Number.MAX_SAFE_INTEGER,
          now,
          row.environment,
          row.agent,
          row.next_run_at,
        );
        if (moved === 0) continue;
        try {
          const { run } = await this.#agents.start({
            agent: row.agent,
            environment: row.environment,
            task: row.task,
            variables: JSON.parse(row.variables),
            trigger: "schedule",
          });
          this.#q.run(
            "UPDATE agent_schedules SET last_run_id = ? WHERE environment = ? AND agent = ?",
            run.id,
            row.environment,
            row.agent,
          );
        } catch (err) {
          // A missing key or a bad variable: nothing started; the next fire tries again.
          log.warn("scheduled agent run could not start", {
            agent: row.agent,
            environment: row.environment,
            error: (err as Error).message,
          });
        }
      }
    } catch (err) {
      log.error("agent scheduler tick failed", { error: (err as Error).message });
    } finally {
      this.#ticking = false;
    }
  }
}
