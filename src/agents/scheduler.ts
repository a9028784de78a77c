/** AgentScheduler: runs agents on their `.prompt` `schedule:` while a station is up, each fire once. */

import { type Database, transaction } from "../db/database.ts";
import { log } from "../log.ts";
import { type Clock, systemClock } from "../workflows/engine/clock.ts";
import { CronLoop, nextFire } from "../workflows/engine/cron.ts";
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
  #loop: CronLoop<AgentScheduleRow>;

  constructor(agents: AgentService, db: Database, clock: Clock = systemClock) {
    this.#agents = agents;
    this.#q = new Statements(db);
    this.#clock = clock;
    this.#loop = new CronLoop<AgentScheduleRow>(
      {
        reconcile: () => this.#reconcile(),
        due: (now) =>
          this.#q.all<AgentScheduleRow>("SELECT * FROM agent_schedules WHERE next_run_at <= ?", now),
        next: () => this.#q.get<{ n: number | null }>("SELECT MIN(next_run_at) AS n FROM agent_schedules")!.n,
        advance: (row, next, now) =>
          this.#q.run(
            `UPDATE agent_schedules SET next_run_at = ?, last_run_at = ?
           WHERE environment = ? AND agent = ? AND next_run_at = ?`,
            next,
            now,
            row.environment,
            row.agent,
            row.next_run_at,
          ) > 0,
        fire: (row) => this.#fire(row),
      },
      clock,
      "agent scheduler",
    );
  }

  /** Reconciles the schedules with the agents table, then checks for due ones every `everyMs`. */
  start(everyMs = 500): void {
    this.#loop.start(everyMs);
  }

  /** Stops firing (runs already started go on under the agent service). */
  stop(): void {
    this.#loop.stop();
  }

  /** Why the scheduler is not idle now (firing, fires due), else null. */
  busy(): string | null {
    return this.#loop.busy();
  }

  /** When the next agent schedule is due (null when none). */
  nextDue(): number | null {
    return this.#loop.nextDue();
  }

  /** Makes `agent_schedules` match the synced agents' enabled schedules; a changed file restarts its clock. */
  reconcile(): void {
    this.#loop.reconcile();
  }

  #reconcile(): void {
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
  }

  async #fire(row: AgentScheduleRow): Promise<void> {
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
}
