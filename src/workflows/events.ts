/** Sending an event to everyone: the waits it ends (through the engine) and the runs its triggers start. */

import { ulid } from "ulid";
import { log } from "../log.ts";
import { requireSandboxFor } from "../sandbox/required.ts";
import type { WorkflowDefinition } from "./definition/schema.ts";
import type { SendEventRequest, SendEventResult } from "./engine/engine.ts";
import { evaluate, evaluateCondition } from "./expr.ts";
import { checkInput } from "./json_schema.ts";
import { iso } from "./engine/clock.ts";
import type { WorkflowServices } from "./service.ts";

/** An event as a caller sends it (`POST /api/v1/events`, `stn events send`, a webhook). */
export interface IncomingEvent {
  name: string;
  data?: unknown;
  /** Idempotency: a repeat of this id within the retention window does nothing. */
  id?: string;
  /** `api`, or `hook:<name>`. */
  source: string;
  /** A webhook delivery's replay check, inside the recording transaction (see `SendEventRequest`). */
  claim?: SendEventRequest["claim"];
}

type Starts = Pick<SendEventRequest, "starts" | "refused">;

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The runs an event's triggers start: the latest version of every active workflow with a trigger
 * for the event's name whose `if` holds, with its `input` mapped from `{event}` (default: the
 * event's data). A trigger whose `if` or mapping fails, or whose input the workflow refuses, starts
 * nothing and is recorded with the event as refused, with why.
 */
async function triggeredRuns(
  services: WorkflowServices,
  event: { name: string; id: string; data: unknown; received_at: string },
): Promise<Starts> {
  const out: Starts = { starts: [], refused: [] };
  for (const rec of services.workflows.list({ status: "active" })) {
    const { definition, version } = services.workflows.get(rec.id);
    for (const trigger of definition.triggers ?? []) {
      if (trigger.event !== event.name) continue;
      try {
        const scope = { data: { event }, bindings: { event } };
        if (trigger.if && !(await evaluateCondition(trigger.if, scope))) continue;
        const input = await mapInput(trigger.input, event, scope);
        requireSandboxFor(services, definition as WorkflowDefinition);
        out.starts.push({
          definition,
          workflowVersion: version,
          input: checkInput(definition, input),
          trigger: { type: "event", event: event.name, event_id: event.id },
        });
      } catch (err) {
        const message = (err as Error).message;
        log.warn("event trigger did not start a run", {
          workflow: rec.id,
          event: event.name,
          error: message,
        });
        out.refused!.push({ workflow_id: rec.id, error: message });
      }
      break; // one run per workflow and event, whichever of its triggers matched first
    }
  }
  return out;
}

async function mapInput(
  mapping: Record<string, string> | undefined,
  event: { data: unknown },
  scope: { data: unknown; bindings: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  if (!mapping) return isObj(event.data) ? structuredClone(event.data) : {};
  const input: Record<string, unknown> = {};
  for (const [key, expr] of Object.entries(mapping)) {
    const v = await evaluate(expr, scope.data, scope.bindings);
    if (v !== undefined) input[key] = v;
  }
  return input;
}

/** Sends an event to everyone: resumes the matching waits and starts the triggered workflows (issue 20). */
export async function sendEvent(services: WorkflowServices, req: IncomingEvent): Promise<SendEventResult> {
  const id = req.id ?? ulid();
  const data = req.data ?? null;
  // A repeated id is found by the engine, inside the transaction that would record it (and starts nothing).
  const event = { name: req.name, id, data, received_at: iso(services.engine.clock.now()) };
  const { starts, refused } = await triggeredRuns(services, event);
  return await services.engine.sendEvent({
    name: req.name,
    id,
    data,
    source: req.source,
    starts,
    refused,
    claim: req.claim,
  });
}
