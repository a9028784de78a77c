import type { Command } from "./commands.ts";
import type { StepMessage } from "./dispatch.ts";
import type { Statements } from "../../db/statements.ts";
import { applyConcurrency } from "./apply_concurrency.ts";

const json = (v: unknown) => JSON.stringify(v ?? null);

/**
 * Writes a command list to the ledger, in order (the caller holds the transaction). Attempts
 * created by the list get their rowid here, and later commands' temporary ids are mapped to it.
 * Returns the `dispatch` commands as step messages; `freed` gets each key a released run held or waited for
 * that runs still wait for (once per run released).
 */
export function applyCommands(sql: Statements, commands: Command[], freed?: string[]): StepMessage[] {
  const ids = new Map<number, number>();
  const id = (n: number) => (n < 0 ? ids.get(n)! : n);
  const out: StepMessage[] = [];
  const seqs = new Map<string, number>();
  for (const c of commands) {
    switch (c.kind) {
      case "create_run":
        sql.run(
          `INSERT INTO workflow_runs (id, workflow_id, workflow_version, definition, status, input, traceparent,
             created_at, updated_at, parent_run_id, forked_from) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)`,
          c.runId,
          c.definition.id,
          c.workflowVersion,
          JSON.stringify(c.definition),
          JSON.stringify(c.input),
          c.traceparent,
          c.at,
          c.at,
          c.parent?.runId ?? null,
          c.parent?.step ?? null,
        );
        sql.run(
          "INSERT INTO run_scopes (run_id, scope, status, context) VALUES (?, '', 'running', ?)",
          c.runId,
          JSON.stringify(c.context),
        );
        break;
      case "reopen_run":
        sql.run(
          `UPDATE workflow_runs SET status = 'running', result = NULL, error = NULL, completed_at = NULL,
             definition = ?, workflow_version = ?, updated_at = ? WHERE id = ?`,
          JSON.stringify(c.definition),
          c.workflowVersion,
          c.at,
          c.runId,
        );
        sql.run("UPDATE run_scopes SET status = 'running' WHERE run_id = ? AND scope = ''", c.runId);
        break;
      case "reuse_attempt":
        ids.set(
          c.ref,
          sql.insert(
            `INSERT INTO step_attempts (run_id, scope, path, step_id, step_type, visit, attempt, status, output,
               reused_from, created_at, completed_at) VALUES (?, '', ?, ?, ?, ?, 1, 'completed', ?, ?, ?, ?)`,
            c.runId,
            c.path,
            c.stepId,
            c.stepType,
            c.visit,
            json(c.output),
            c.reusedFrom,
            c.at,
            c.at,
          ),
        );
        break;
      case "mark_run_started":
        sql.run("UPDATE workflow_runs SET started_at = ? WHERE id = ?", c.at, c.runId);
        break;
      case "set_run_status":
        sql.run("UPDATE workflow_runs SET status = ?, updated_at = ? WHERE id = ?", c.status, c.at, c.runId);
        break;
      case "finish_run":
        sql.run(
          "UPDATE workflow_runs SET status = ?, result = ?, error = ?, updated_at = ?, completed_at = ? WHERE id = ?",
          c.status,
          c.status === "completed" ? json(c.result) : null,
          c.error ? JSON.stringify(c.error) : null,
          c.at,
          c.at,
          c.runId,
        );
        break;
      case "append_event": {
        // Read once per run and command list; later events of the same list follow on from it.
        const seq = (seqs.get(c.runId) ?? sql.get<{ seq: number }>(
          "SELECT COALESCE(MAX(seq), 0) AS seq FROM run_events WHERE run_id = ?",
          c.runId,
        )!.seq) + 1;
        seqs.set(c.runId, seq);
        sql.run(
          "INSERT INTO run_events (run_id, seq, type, step, data, time) VALUES (?, ?, ?, ?, ?, ?)",
          c.runId,
          seq,
          c.type,
          c.step,
          c.data === undefined ? null : JSON.stringify(c.data),
          c.at,
        );
        break;
      }
      case "schedule_attempt":
        ids.set(
          c.ref,
          sql.insert(
            `INSERT INTO step_attempts (run_id, scope, path, step_id, step_type, visit, attempt, status, dispatched_at,
               created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'scheduled', ?, ?)`,
            c.runId,
            c.scope,
            c.path,
            c.stepId,
            c.stepType,
            c.visit,
            c.attempt,
            c.dispatchedAt,
            c.at,
          ),
        );
        break;
      case "claim_attempt":
        sql.run(
          `UPDATE step_attempts SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
           WHERE id = ?`,
          c.owner,
          c.leaseUntil,
          c.at,
          id(c.attemptId),
        );
        break;
      case "renew_lease":
        sql.run(
          "UPDATE step_attempts SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
          c.leaseUntil,
          id(c.attemptId),
          c.owner,
        );
        break;
      case "mark_dispatched":
        sql.run("UPDATE step_attempts SET dispatched_at = ? WHERE id = ?", c.dispatchedAt, id(c.attemptId));
        break;
      case "complete_attempt":
        sql.run(
          "UPDATE step_attempts SET status = 'completed', output = ?, completed_at = ?, owner = NULL WHERE id = ?",
          json(c.output),
          c.at,
          id(c.attemptId),
        );
        break;
      case "fail_attempt":
        sql.run(
          "UPDATE step_attempts SET status = 'failed', error = ?, completed_at = ?, owner = NULL WHERE id = ?",
          JSON.stringify(c.error),
          c.at,
          id(c.attemptId),
        );
        break;
      case "cancel_attempt":
        sql.run(
          "UPDATE step_attempts SET status = 'canceled', completed_at = ?, owner = NULL WHERE id = ?",
          c.at,
          id(c.attemptId),
        );
        break;
      case "wait_attempt":
        if (c.fanout) {
          sql.run(
            "UPDATE step_attempts SET status = 'waiting', owner = NULL, output = ? WHERE id = ?",
            JSON.stringify(c.fanout),
            id(c.attemptId),
          );
        } else {sql.run(
            "UPDATE step_attempts SET status = 'waiting', owner = NULL WHERE id = ?",
            id(c.attemptId),
          );}
        break;
      case "requeue_attempt":
        sql.run(
          "UPDATE step_attempts SET status = 'scheduled', dispatched_at = ? WHERE id = ? AND status = 'waiting'",
          c.dispatchedAt,
          id(c.attemptId),
        );
        break;
      case "set_scope_context":
        sql.run(
          "UPDATE run_scopes SET context = ? WHERE run_id = ? AND scope = ?",
          JSON.stringify(c.context),
          c.runId,
          c.scope,
        );
        break;
      case "insert_scope":
        sql.run(
          `INSERT INTO run_scopes (run_id, scope, parent_attempt, key, position, status, context)
           VALUES (?, ?, ?, ?, ?, 'pending', ?)`,
          c.runId,
          c.scope,
          id(c.parentAttempt),
          c.key,
          c.position,
          JSON.stringify(c.context),
        );
        break;
      case "start_scope":
        sql.run("UPDATE run_scopes SET status = 'running' WHERE run_id = ? AND scope = ?", c.runId, c.scope);
        break;
      case "end_scope":
        sql.run(
          "UPDATE run_scopes SET status = ?, output = ?, error = ? WHERE run_id = ? AND scope = ?",
          c.status,
          json(c.output),
          c.error ? JSON.stringify(c.error) : null,
          c.runId,
          c.scope,
        );
        break;
      case "cancel_scope":
        sql.run("UPDATE run_scopes SET status = 'canceled' WHERE run_id = ? AND scope = ?", c.runId, c.scope);
        break;
      case "cancel_open_scopes":
        sql.run(
          "UPDATE run_scopes SET status = 'canceled' WHERE run_id = ? AND status IN ('pending','running')",
          c.runId,
        );
        break;
      case "add_timer":
        sql.run(
          "INSERT INTO timers (run_id, attempt_id, kind, fire_at, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?)",
          c.runId,
          id(c.attemptId),
          c.timerKind,
          c.fireAt,
          c.at,
        );
        break;
      case "cancel_timers":
        if (c.timerKind) {
          sql.run(
            "UPDATE timers SET status = 'canceled' WHERE attempt_id = ? AND kind = ? AND status = 'pending'",
            id(c.attemptId),
            c.timerKind,
          );
        } else {
          sql.run(
            "UPDATE timers SET status = 'canceled' WHERE attempt_id = ? AND status = 'pending'",
            id(c.attemptId),
          );
        }
        break;
      case "fire_timer":
        sql.run("UPDATE timers SET status = 'fired' WHERE id = ? AND status = 'pending'", c.timerId);
        break;
      case "request_approval":
        sql.run(
          `INSERT INTO approvals (id, run_id, attempt_id, step_id, message, approvers, status, timeout_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
          c.approvalId,
          c.runId,
          id(c.attemptId),
          c.stepId,
          c.message,
          JSON.stringify(c.approvers),
          c.timeoutAt,
          c.at,
        );
        break;
      case "decide_approval":
        sql.run(
          "UPDATE approvals SET status = ?, decided_by = ?, comment = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
          c.status,
          c.decidedBy,
          c.comment,
          c.at,
          c.approvalId,
        );
        break;
      case "time_out_approval":
        sql.run(
          "UPDATE approvals SET status = 'timed_out', decided_at = ? WHERE attempt_id = ? AND status = 'pending'",
          c.at,
          id(c.attemptId),
        );
        break;
      case "cancel_approval":
        sql.run(
          "UPDATE approvals SET status = 'canceled' WHERE attempt_id = ? AND status = 'pending'",
          id(c.attemptId),
        );
        break;
      case "request_wait":
        sql.run(
          `INSERT INTO waits (attempt_id, run_id, path, event, match, status, timeout_at, created_ms, created_at)
           VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
          id(c.attemptId),
          c.runId,
          c.path,
          c.event,
          c.match,
          c.timeoutAt,
          c.createdMs,
          c.at,
        );
        break;
      case "end_wait":
        sql.run(
          "UPDATE waits SET status = ?, event_id = ?, ended_at = ? WHERE attempt_id = ? AND status = 'pending'",
          c.status,
          c.eventId,
          c.at,
          id(c.attemptId),
        );
        break;
      case "cancel_wait":
        sql.run(
          "UPDATE waits SET status = 'canceled', ended_at = ? WHERE attempt_id = ? AND status = 'pending'",
          c.at,
          id(c.attemptId),
        );
        break;
      case "record_event":
        sql.run(
          `INSERT INTO events (id, name, data, source, received_at, received_ms, resumed, started)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          c.id,
          c.name,
          json(c.data),
          c.source,
          c.at,
          c.receivedMs,
          JSON.stringify(c.resumed),
          JSON.stringify(c.started),
        );
        break;
      case "prune_events":
        sql.run("DELETE FROM events WHERE received_ms < ?", c.beforeMs);
        break;
      case "record_signal":
        sql.run(
          `INSERT INTO run_signals (run_id, signal_id, name, data, received_at, consumed_by)
           VALUES (?, ?, ?, ?, ?, ?)`,
          c.runId,
          c.signalId,
          c.name,
          json(c.data),
          c.at,
          c.consumedBy === null ? null : id(c.consumedBy),
        );
        break;
      case "consume_signal":
        sql.run(
          "UPDATE run_signals SET consumed_by = ? WHERE id = ? AND consumed_by IS NULL",
          id(c.attemptId),
          c.signalRowId,
        );
        break;
      case "enqueue_concurrency":
      case "acquire_concurrency":
      case "release_concurrency":
      case "record_rate":
        applyConcurrency(sql, c, freed);
        break;
      case "wait_for_concurrency":
        sql.run(
          "UPDATE step_attempts SET status = 'waiting_for_concurrency', owner = NULL WHERE id = ?",
          id(c.attemptId),
        );
        break;
      case "admit_attempt":
        sql.run(
          `UPDATE step_attempts SET status = 'scheduled', dispatched_at = ?
           WHERE id = ? AND status = 'waiting_for_concurrency'`,
          c.dispatchedAt,
          id(c.attemptId),
        );
        break;
      case "dispatch":
        out.push({ id: id(c.attemptId), run: c.runId, path: c.path, attempt: c.attempt });
        break;
    }
  }
  return out;
}
