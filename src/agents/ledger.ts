import type { SQLInputValue } from "node:sqlite";
import { ulid } from "ulid";
import { type Database, transaction } from "../db/database.ts";
import { Watchers } from "../lib/watchers.ts";
import { countAgentRunFinished } from "../telemetry/metrics.ts";
import { toolCallView } from "./views.ts";
import { Statements } from "../db/statements.ts";
import { type Clock, iso, systemClock } from "../lib/clock.ts";
import { AgentKeys } from "./admission.ts";
import type {
  AgentEventRow,
  AgentRunQuery,
  AgentRunRow,
  NewRun,
  RunEnd,
  ToolCallRow,
  TurnRow,
} from "./run_rows.ts";

export type * from "./run_rows.ts";

/**
 * The agent runs' ledger (migration 0007): the only code that reads or writes its tables. Every
 * change is one transaction that also appends the run's event, so a run's record and its event log
 * never disagree, and each completed model turn and tool result is on disk before the next begins. A run's
 * concurrency keys (admission.ts) are taken and given back in the transactions that create and end it.
 */

const TERMINAL_EVENT: Record<RunEnd["status"], string> = {
  completed: "run_completed",
  failed: "run_failed",
  canceled: "run_canceled",
};

/** Reads and writes of the agent-run tables; `watch` wakes event followers in this process. */
export class AgentLedger {
  #db: Database;
  #q: Statements;
  #watchers = new Watchers();
  #clock: Clock;
  readonly keys: AgentKeys;
  /** Hears the waiting runs a commit admitted (the agent service launches them). */
  onAdmitted: (runIds: string[]) => void = () => {};

  /** `clock` stamps the runs and their events (the engine's, so a virtual clock in tests stamps both alike). */
  constructor(db: Database, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#q = new Statements(db);
    this.keys = new AgentKeys(this.#q, (runId, type, data) => this.#event(runId, type, data));
  }

  #now(): string {
    return iso(this.#clock.now());
  }

  /** Creates a running run and its `run_started` event (or returns the run `claim` names). */
  create(r: NewRun): AgentRunRow {
    const id = `arun_${ulid()}`;
    const at = this.#now();
    const trigger = r.trigger ?? (r.parentRunId ? "agent" : r.step ? "workflow" : "manual");
    let existing: string | undefined;
    this.#write(id, () => {
      existing = r.claim?.(id);
      if (existing) return;
      const waiting = r.admission && this.keys.enqueue(id, r.admission, this.#clock.now());
      this.#q.run(
        `INSERT INTO agent_runs (id, agent, environment, model, task, variables, plan, status, parent_run_id,
           parent_call_id, workflow_run_id, step_path, step_visit, step_attempt, trace_id, trigger, created_at,
           started_at, cost_usd, queue)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        r.agent,
        r.environment,
        r.model,
        r.task,
        JSON.stringify(r.variables),
        JSON.stringify(r.plan),
        waiting ? "waiting_for_concurrency" : "running",
        r.parentRunId ?? null,
        r.parentCallId ?? null,
        r.step?.runId ?? null,
        r.step?.path ?? null,
        r.step?.visit ?? null,
        r.step?.attempt ?? null,
        r.traceId ?? null,
        trigger,
        at,
        at,
        r.priced ? 0 : null,
        r.queue ?? null,
      );
      this.#event(id, "run_started", {
        agent: r.agent,
        model: r.model,
        task: r.task,
        trigger,
        parent_run_id: r.parentRunId,
        ...(r.queue ? { queue: r.queue } : {}),
      });
      if (waiting) {
        this.#event(id, "run_waiting_for_concurrency", { ...waiting, priority: r.admission!.priority });
      }
    });
    return this.get(existing ?? id)!;
  }

  /** Appends an event that changes no row (`turn_started`, `run_resumed`). */
  event(runId: string, type: string, data: unknown): void {
    this.#write(runId, () => this.#event(runId, type, data));
  }

  /** Checkpoints a completed model turn and adds its usage to the run's totals. */
  turnCompleted(t: Omit<TurnRow, "created_at">, event: unknown): void {
    this.#write(t.run_id, () => {
      this.#q.run(
        `INSERT INTO agent_turns (run_id, turn, messages, text, finish_reason, input_tokens, output_tokens,
           cached_tokens, total_tokens, duration_ms, cost_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        t.run_id,
        t.turn,
        t.messages,
        t.text,
        t.finish_reason,
        t.input_tokens,
        t.output_tokens,
        t.cached_tokens,
        t.total_tokens,
        t.duration_ms,
        t.cost_usd,
        this.#now(),
      );
      this.#q.run(
        `UPDATE agent_runs SET turns = ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
           cached_tokens = cached_tokens + ?, total_tokens = total_tokens + ?,
           cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE COALESCE(cost_usd, 0) + ? END WHERE id = ?`,
        t.turn,
        t.input_tokens,
        t.output_tokens,
        t.cached_tokens,
        t.total_tokens,
        t.cost_usd,
        t.cost_usd,
        t.run_id,
      );
      this.#event(t.run_id, "model_responded", event);
    });
  }

  /** Records a tool call as started (a resume re-runs a call left `running`). */
  toolStarted(
    c: Pick<ToolCallRow, "run_id" | "call_id" | "turn" | "position" | "name" | "arguments"> & {
      server?: string;
    },
  ): void {
    this.#write(c.run_id, () => {
      const at = this.#now();
      this.#q.run(
        `INSERT INTO agent_tool_calls (run_id, call_id, turn, position, name, arguments, status, started_at, server)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)
         ON CONFLICT (run_id, call_id) DO UPDATE SET started_at = excluded.started_at`,
        c.run_id,
        c.call_id,
        c.turn,
        c.position,
        c.name,
        c.arguments,
        at,
        c.server ?? null,
      );
      this.#event(c.run_id, "tool_called", {
        turn: c.turn,
        call_id: c.call_id,
        name: c.name,
        arguments: JSON.parse(c.arguments),
        server: c.server ?? null,
        started_at: at,
      });
    });
  }

  /** Records tool outputs removed from the model's context before `turn`, and a `context_compacted` event. */
  contextCompacted(runId: string, turn: number, callIds: string[], event: unknown): void {
    this.#write(runId, () => {
      this.#q.run(
        `UPDATE agent_tool_calls SET removed_at_turn = ? WHERE run_id = ? AND call_id IN (SELECT value FROM json_each(?))`,
        turn,
        runId,
        JSON.stringify(callIds),
      );
      this.#event(runId, "context_compacted", event);
    });
  }

  /** Checkpoints a tool's result (what the model will see) or its error. */
  toolFinished(
    runId: string,
    callId: string,
    r: { output: string; output_bytes: number; truncated: boolean; error?: string; duration_ms: number },
  ): void {
    this.#write(runId, () => {
      this.#q.run(
        `UPDATE agent_tool_calls SET status = ?, output = ?, output_bytes = ?, truncated = ?, error = ?,
           duration_ms = ?, ended_at = ? WHERE run_id = ? AND call_id = ?`,
        r.error === undefined ? "completed" : "failed",
        r.output,
        r.output_bytes,
        r.truncated ? 1 : 0,
        r.error ?? null,
        r.duration_ms,
        this.#now(),
        runId,
        callId,
      );
      const row = this.#q.get<ToolCallRow>(
        "SELECT * FROM agent_tool_calls WHERE run_id = ? AND call_id = ?",
        runId,
        callId,
      )!;
      // The event holds the call as the API shows it by default, its output cut for display (docs/agents.md#tool-calls).
      const { arguments: _, ...call } = toolCallView(row);
      this.#event(runId, "tool_returned", call);
    });
  }

  /** Ends a running run (a run already ended stays as it was); returns whether this call ended it. */
  finish(runId: string, end: RunEnd): boolean {
    let ended = false;
    let admitted: string[] = [];
    this.#write(runId, () => {
      const at = this.#now();
      ended = this.#q.run(
        `UPDATE agent_runs SET status = ?, finish_reason = ?, response = ?, result = ?, error = ?, ended_at = ?,
           duration_ms = CAST(ROUND((julianday(?) - julianday(started_at)) * 86400000) AS INTEGER)
         WHERE id = ? AND status IN ('running', 'waiting_for_concurrency')`,
        end.status,
        end.finish_reason,
        end.response,
        end.result === undefined ? null : JSON.stringify(end.result),
        end.error ? JSON.stringify(end.error) : null,
        at,
        at,
        runId,
      ) > 0;
      if (ended) {
        const { agent, duration_ms } = this.get(runId)!;
        countAgentRunFinished(agent, end.status, (duration_ms ?? 0) / 1000);
        this.#event(runId, TERMINAL_EVENT[end.status], {
          finish_reason: end.finish_reason,
          ...(end.error ? { error: end.error } : {}),
        });
        admitted = this.keys.release(runId, this.#clock.now());
      }
    });
    this.#announce(admitted);
    return ended;
  }

  /** Admits whatever waiting runs fit now (at start: a run may have ended unseen, a limit may have been raised). */
  admitWaiting(): void {
    let admitted: string[] = [];
    transaction(this.#db, () => admitted = this.keys.admitAll(this.#clock.now()));
    this.#announce(admitted);
  }

  #announce(admitted: string[]): void {
    for (const id of admitted) this.#watchers.notify(id);
    this.onAdmitted(admitted);
  }

  get(id: string): AgentRunRow | undefined {
    return this.#q.get<AgentRunRow>("SELECT * FROM agent_runs WHERE id = ?", id);
  }

  /** The run a workflow step attempt started, if any. */
  byStepAttempt(
    step: { runId: string; path: string; visit: number; attempt: number },
  ): AgentRunRow | undefined {
    return this.#q.get<AgentRunRow>(
      `SELECT * FROM agent_runs WHERE workflow_run_id = ? AND step_path = ? AND step_visit = ? AND step_attempt = ?
         AND parent_run_id IS NULL`,
      step.runId,
      step.path,
      step.visit,
      step.attempt,
    );
  }

  /** The child run a parent's tool call started, if any. */
  byParentCall(parentRunId: string, callId: string): AgentRunRow | undefined {
    return this.#q.get<AgentRunRow>(
      "SELECT * FROM agent_runs WHERE parent_run_id = ? AND parent_call_id = ?",
      parentRunId,
      callId,
    );
  }

  /** Runs left `running` nobody else resumes: not a child's (its parent does), a step's (the engine) or queued (a worker). */
  orphans(): AgentRunRow[] {
    return this.#q.all<AgentRunRow>(
      `SELECT * FROM agent_runs WHERE status = 'running' AND parent_run_id IS NULL AND workflow_run_id IS NULL
         AND queue IS NULL ORDER BY id`,
    );
  }

  /** What each workflow run's agent runs cost (USD): 0 when it started none, null when one has no price. */
  workflowRunCosts(workflowRunIds: string[]): Map<string, number | null> {
    const costs = new Map<string, number | null>(workflowRunIds.map((id) => [id, 0]));
    for (
      const r of this.#q.all<{ id: string; cost: number | null }>(
        // Its steps' runs and, through parent_run_id, the child agents' runs under them.
        `WITH RECURSIVE tree (id, wf, cost) AS (
           SELECT id, workflow_run_id, cost_usd FROM agent_runs
           WHERE workflow_run_id IN (SELECT value FROM json_each(?))
           UNION SELECT a.id, tree.wf, a.cost_usd FROM agent_runs a JOIN tree ON a.parent_run_id = tree.id)
         SELECT wf AS id, CASE WHEN COUNT(cost) = COUNT(*) THEN SUM(cost) END AS cost FROM tree GROUP BY wf`,
        JSON.stringify(workflowRunIds),
      )
    ) costs.set(r.id, r.cost);
    return costs;
  }

  /** The runs a workflow run's steps started (for `stn workflow inspect`). */
  byWorkflowRun(workflowRunId: string): AgentRunRow[] {
    return this.#q.all<AgentRunRow>(
      "SELECT * FROM agent_runs WHERE workflow_run_id = ? ORDER BY id",
      workflowRunId,
    );
  }

  list(q: AgentRunQuery): { runs: AgentRunRow[]; nextCursor: string | null } {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (q.agent) where.push("agent = ?"), params.push(q.agent);
    if (q.workflowRunId) where.push("workflow_run_id = ?"), params.push(q.workflowRunId);
    // `queued` is a running run on a task queue that no worker has taken yet (agents/views.ts).
    if (q.status === "queued") where.push("status = 'running' AND queue IS NOT NULL AND owner IS NULL");
    else if (q.status === "running") {
      where.push("status = 'running' AND (queue IS NULL OR owner IS NOT NULL)");
    } else if (q.status) where.push("status = ?"), params.push(q.status);
    if (q.cursor) where.push("id < ?"), params.push(q.cursor);
    // node:sqlite types rows as Record<string, SQLOutputValue>; agent_runs' columns are AgentRunRow's.
    const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const runs = this.#db.prepare(`SELECT * FROM agent_runs ${filter} ORDER BY id DESC LIMIT ?`)
      .all(...params, q.limit + 1) as unknown as AgentRunRow[];
    const more = runs.length > q.limit;
    if (more) runs.length = q.limit;
    return { runs, nextCursor: more ? runs[runs.length - 1].id : null };
  }

  turns(runId: string): TurnRow[] {
    return this.#q.all<TurnRow>("SELECT * FROM agent_turns WHERE run_id = ? ORDER BY turn", runId);
  }

  toolCalls(runId: string): ToolCallRow[] {
    return this.#q.all<ToolCallRow>(
      "SELECT * FROM agent_tool_calls WHERE run_id = ? ORDER BY turn, position",
      runId,
    );
  }

  eventsAfter(runId: string, seq: number, limit = 500): AgentEventRow[] {
    return this.#q.all<AgentEventRow>(
      "SELECT * FROM agent_run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      runId,
      seq,
      limit,
    );
  }

  lastSeq(runId: string): number {
    return this.#q.get<{ s: number | null }>(
      "SELECT MAX(seq) AS s FROM agent_run_events WHERE run_id = ?",
      runId,
    )
      ?.s ?? 0;
  }

  /** Calls fn whenever events are appended to the run (in this process). Returns the unsubscribe. */
  watch(runId: string, fn: () => void): () => void {
    return this.#watchers.watch(runId, fn);
  }

  #write(runId: string, fn: () => void): void {
    transaction(this.#db, fn);
    this.#watchers.notify(runId);
  }

  #event(runId: string, type: string, data: unknown): void {
    this.#q.run(
      `INSERT INTO agent_run_events (run_id, seq, type, data, time)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_run_events WHERE run_id = ?), ?, ?, ?)`,
      runId,
      runId,
      type,
      data === undefined ? null : JSON.stringify(data),
      this.#now(),
    );
  }
}
