/**
 * Debounced starts in the ledger (docs/workflows.md#flow-control): an event's start of a workflow with
 * `debounce` waits in `debounced_starts` under its key; a later event of that key replaces it (the earlier
 * event's record says it was superseded) and restarts the window; when the window ends the engine starts the
 * run once, in the transaction that takes the row (`take`), and the event's record names the run.
 */

import type { Statements } from "../../db/statements.ts";
import { iso } from "../../lib/clock.ts";
import { parseDuration } from "../../lib/duration.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";
import type { RunTrigger } from "../trigger.ts";
import { keyOf } from "./flow_keys.ts";

/** A start that waits for its debounce window to end. */
export interface DebouncedStart {
  key: string;
  definition: WorkflowDefinition;
  workflowVersion: number | null;
  input: Record<string, unknown>;
  trigger: RunTrigger;
  /** The event that asked for it (its record says what became of the start). */
  eventId: string;
  /** When the window ends and the run starts (ms). */
  fireMs: number;
}

/** What an event's record says of a start it asked for. */
type StartedEntry = {
  workflow_id: string;
  run_id?: string;
  error?: string;
  debounced_until?: string;
  superseded_by?: string;
};

/** A debounced start as the ledger keeps it. */
interface DebouncedRow {
  key: string;
  workflow_version: number | null;
  definition: string;
  input: string;
  trig: string;
  event_id: string;
  fire_ms: number;
}

/** The debounce key of an event's start (`<workflow id>` or `<workflow id>/<value>`), or undefined without debounce. */
export async function debounceKey(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
): Promise<string | undefined> {
  return def.debounce ? await keyOf(def, def.debounce.key, input) : undefined;
}

/** The start an event asks for at `now`, waiting out the workflow's debounce period. */
export function debounced(
  s: Omit<DebouncedStart, "fireMs">,
  now: number,
): { start: DebouncedStart; entry: StartedEntry } {
  const fireMs = now + parseDuration(s.definition.debounce!.period)!;
  return {
    start: { ...s, fireMs },
    entry: { workflow_id: s.definition.id, debounced_until: iso(fireMs) },
  };
}

/** Records a debounced start in place of its key's pending one; the event that asked for that one is told. */
export function applyDebounce(sql: Statements, s: DebouncedStart): void {
  const before = sql.get<{ event_id: string }>("SELECT event_id FROM debounced_starts WHERE key = ?", s.key);
  sql.run(
    `INSERT INTO debounced_starts (key, workflow_id, workflow_version, definition, input, trig, event_id, fire_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET workflow_id = excluded.workflow_id,
       workflow_version = excluded.workflow_version, definition = excluded.definition, input = excluded.input,
       trig = excluded.trig, event_id = excluded.event_id, fire_ms = excluded.fire_ms`,
    s.key,
    s.definition.id,
    s.workflowVersion,
    JSON.stringify(s.definition),
    JSON.stringify(s.input),
    JSON.stringify(s.trigger),
    s.eventId,
    s.fireMs,
  );
  if (before) {
    setStarted(sql, before.event_id, { workflow_id: s.definition.id, superseded_by: s.eventId });
  }
}

/** Rewrites what an event's record says of the start it asked of one workflow. */
function setStarted(sql: Statements, eventId: string, entry: StartedEntry): void {
  sql.run(
    `UPDATE events SET started = (SELECT json_group_array(CASE WHEN json_extract(value, '$.workflow_id') = ?
       THEN json(?) ELSE json(value) END) FROM json_each(events.started)) WHERE id = ?`,
    entry.workflow_id,
    JSON.stringify(entry),
    eventId,
  );
}

/** The debounced starts in the ledger: which are due, and taking one (once) as its run starts. */
export class DebounceStore {
  #sql: Statements;

  constructor(sql: Statements) {
    this.#sql = sql;
  }

  /** The starts whose window ended by `now`, earliest first (at most 100). */
  due(now: number): DebouncedStart[] {
    return this.#sql.all<DebouncedRow>(
      "SELECT * FROM debounced_starts WHERE fire_ms <= ? ORDER BY fire_ms LIMIT 100",
      now,
    ).map((r) => ({
      key: r.key,
      definition: JSON.parse(r.definition),
      workflowVersion: r.workflow_version,
      input: JSON.parse(r.input),
      trigger: JSON.parse(r.trig),
      eventId: r.event_id,
      fireMs: r.fire_ms,
    }));
  }

  /**
   * Takes a due start (call inside the transaction creating its run): false when it was taken already or
   * replaced by a later event; the event's record then names the run, or why none started.
   */
  take(s: DebouncedStart, outcome: { run_id: string } | { error: string }): boolean {
    const taken = this.#sql.run(
      "DELETE FROM debounced_starts WHERE key = ? AND event_id = ? AND fire_ms = ?",
      s.key,
      s.eventId,
      s.fireMs,
    ) > 0;
    if (taken) setStarted(this.#sql, s.eventId, { workflow_id: s.definition.id, ...outcome });
    return taken;
  }
}
