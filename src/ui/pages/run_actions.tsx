/**
 * What a run page shows about waiting and acts with: decided approvals (who, when), pending timers (when they
 * fire), and the forms that run it again with edited input, send an event, or signal the run.
 */

import type { ApprovalView, RunRow, RunView, StepView } from "../../workflows/engine/mod.ts";
import type { PendingTimer } from "../../workflows/runs.ts";
import { ApiForm, Time } from "../parts.tsx";

const DECIDED: Record<string, string> = {
  approved: "approved",
  rejected: "rejected",
  timed_out: "timed out",
  canceled: "canceled",
};

/** Each decided approval of the run: "approve: approved by ops at …", with the comment. */
export function Decisions(props: { approvals: ApprovalView[] }) {
  const decided = props.approvals.filter((a) => a.status !== "pending");
  if (decided.length === 0) return null;
  return (
    <ul class="decisions" aria-label="Approval decisions">
      {decided.map((a) => (
        <li>
          Approval <code>{a.step_id}</code>: {DECIDED[a.status] ?? a.status}
          {a.decided_by
            ? (
              <>
                {" by "}
                <strong>{a.decided_by}</strong>
              </>
            )
            : null} at <Time iso={a.decided_at ?? a.timeout_at} />
          {a.comment ? <span class="muted">{` — “${a.comment}”`}</span> : null}
        </li>
      ))}
    </ul>
  );
}

const FIRES: Record<string, string> = {
  timer: "timer fires at",
  approval_timeout: "approval times out at",
  wait_timeout: "wait times out at",
  retry: "retry at",
  step_timeout: "step times out at",
};

/** The run's pending timers: "cool-down: timer fires at …". */
export function Timers(props: { timers: PendingTimer[] }) {
  if (props.timers.length === 0) return null;
  return (
    <ul class="timers" aria-label="Pending timers">
      {props.timers.map((t) => (
        <li>
          <code>{t.step}</code>: {FIRES[t.kind] ?? `${t.kind} at`} <Time iso={t.fires_at} />
        </li>
      ))}
    </ul>
  );
}

/**
 * Run again with the same or an edited input, through the same API as `stn workflow run`: a stored workflow's
 * run starts the version it ran; a one-off file run starts its kept definition once more (not stored).
 */
export function RunAgain(props: { run: RunView; row: RunRow }) {
  const { run, row } = props;
  const stored = run.workflow_version !== null;
  return (
    <ApiForm
      action="/api/v1/workflow-runs"
      json={stored ? "input version" : "input definition"}
      then="/ui/runs/{id}"
      label="Run again"
    >
      {stored
        ? (
          <>
            <input type="hidden" name="workflow_id" value={run.workflow_id} />
            <input type="hidden" name="version" value={String(run.workflow_version)} />
          </>
        )
        : <input type="hidden" name="definition" value={row.definition} />}
      <input type="hidden" name="trigger" value="manual" />
      <div class="field">
        <label for="rerun-input">Input (JSON; edit it to run with another)</label>
        <textarea id="rerun-input" name="input" rows={4}>{JSON.stringify(run.input ?? {}, null, 2)}</textarea>
      </div>
      <button type="submit" class="secondary">
        {stored ? `Run v${run.workflow_version} again` : "Run this definition again"}
      </button>
    </ApiForm>
  );
}

/** The event an await step of the run waits for, to fill in the event form. */
export function awaitedEvent(definition: string, steps: StepView[]): string | undefined {
  const waiting = steps.find((s) => s.type === "await" && !s.completed_at);
  if (!waiting) return undefined;
  let found: string | undefined;
  JSON.parse(definition, (_key, value) => {
    if (value && typeof value === "object" && value.type === "await" && value.id === waiting.step_id) {
      found ??= typeof value.event === "string" ? value.event : undefined;
    }
    return value;
  });
  return found;
}

/** Send an event to the station (POST /api/v1/events), and a signal to this run (POST …/signal). */
export function EventForms(props: { runId: string; event?: string }) {
  return (
    <div class="send">
      <ApiForm action="/api/v1/events" json="data" label="Send an event">
        <div class="field">
          <label for="event-name">Event name</label>
          <input id="event-name" name="name" required value={props.event} placeholder="ci.finished" />
        </div>
        <div class="field">
          <label for="event-data">Data (JSON)</label>
          <textarea id="event-data" name="data" rows={3}>{"{}"}</textarea>
        </div>
        <button type="submit" class="secondary">Send event</button>
      </ApiForm>
      <ApiForm action={`/api/v1/workflow-runs/${props.runId}/signal`} json="payload" label="Signal this run">
        <div class="field">
          <label for="signal-name">Signal name</label>
          <input id="signal-name" name="name" required placeholder="go-ahead" />
        </div>
        <div class="field">
          <label for="signal-payload">Payload (JSON)</label>
          <textarea id="signal-payload" name="payload" rows={3}>{"{}"}</textarea>
        </div>
        <button type="submit" class="secondary">Send signal</button>
      </ApiForm>
    </div>
  );
}
