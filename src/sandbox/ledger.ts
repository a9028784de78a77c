/** Sandbox sessions in the ledger: recorded when opened, so a restarted station adopts its containers. */

import type { Database } from "../db/database.ts";

/** A sandbox session as recorded in the ledger. */
export interface SessionRecord {
  id: string;
  container_id: string;
  image: string;
  runtime: string | null;
  scope: "workflow" | "agent";
  run_id: string | null;
  network: boolean;
  status: "open" | "closed";
  created_at: string;
  last_used_at: string;
  closed_at: string | null;
  close_reason: string | null;
}

type Row = Omit<SessionRecord, "network"> & { network: number };

const fromRow = (row: Row): SessionRecord => ({ ...row, network: row.network === 1 });

/** Records a new open session. */
export function insertSession(
  db: Database,
  s: Omit<SessionRecord, "status" | "closed_at" | "close_reason">,
): void {
  db.prepare(
    `INSERT INTO sandbox_sessions (id, container_id, image, runtime, scope, run_id, network, status, created_at, last_used_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
  ).run(
    s.id,
    s.container_id,
    s.image,
    s.runtime,
    s.scope,
    s.run_id,
    s.network ? 1 : 0,
    s.created_at,
    s.last_used_at,
  );
}

/** One session by id (open or closed). */
export function getSession(db: Database, id: string): SessionRecord | undefined {
  const row = db.prepare("SELECT * FROM sandbox_sessions WHERE id = ?").get(id) as Row | undefined;
  return row && fromRow(row);
}

/** The open workflow-scoped session of a run, if any. */
export function openWorkflowSession(db: Database, runId: string): SessionRecord | undefined {
  const row = db.prepare(
    "SELECT * FROM sandbox_sessions WHERE scope = 'workflow' AND run_id = ? AND status = 'open'",
  ).get(runId) as Row | undefined;
  return row && fromRow(row);
}

/** Sessions, newest first; only open ones unless all is set. */
export function listSessions(db: Database, all = false): SessionRecord[] {
  const rows = db.prepare(
    `SELECT * FROM sandbox_sessions ${all ? "" : "WHERE status = 'open'"} ORDER BY created_at DESC, id DESC`,
  ).all() as Row[];
  return rows.map(fromRow);
}

/** Open sessions not used since the cutoff (ISO time). */
export function idleSessions(db: Database, cutoff: string): SessionRecord[] {
  const rows = db.prepare(
    "SELECT * FROM sandbox_sessions WHERE status = 'open' AND last_used_at < ? ORDER BY last_used_at",
  ).all(cutoff) as Row[];
  return rows.map(fromRow);
}

/** Bumps a session's last-used time. */
export function touchSession(db: Database, id: string, at: string): void {
  db.prepare("UPDATE sandbox_sessions SET last_used_at = ? WHERE id = ? AND status = 'open'").run(at, id);
}

/** Marks a session closed with the reason; false if it was not open. */
export function markClosed(db: Database, id: string, reason: string, at: string): boolean {
  const res = db.prepare(
    "UPDATE sandbox_sessions SET status = 'closed', closed_at = ?, close_reason = ? WHERE id = ? AND status = 'open'",
  ).run(at, reason, id);
  return Number(res.changes) > 0;
}

/** This station's id (labels its containers). */
export function stationId(db: Database): string {
  const row = db.prepare("SELECT value FROM station_meta WHERE key = 'station_id'").get() as
    | { value: string }
    | undefined;
  if (!row) throw new Error("station_meta.station_id missing: migration 0004 did not run");
  return row.value;
}

/** Open workflow sessions whose run has ended (completed, failed or canceled). */
export function sessionsOfEndedRuns(db: Database): SessionRecord[] {
  const rows = db.prepare(
    `SELECT s.* FROM sandbox_sessions s JOIN workflow_runs r ON r.id = s.run_id
     WHERE s.status = 'open' AND s.scope = 'workflow' AND r.status IN ('completed', 'failed', 'canceled')`,
  ).all() as Row[];
  return rows.map(fromRow);
}
