/** The contract of events and signals: sending them, the events as recorded, lists. */

import { z } from "zod";
import { Run } from "./runs.ts";

/** Event names: what `await.event`, `triggers[].event`, signals and webhooks agree on. */
export const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:\/-]*$/;

/** An event or signal name (`order.paid`, `ci.finished`, `github/push`). */
export const EventName = z.string().min(1).max(200).regex(EVENT_NAME, {
  message: "event names start with a letter or digit and contain only letters, digits and _ . : / -",
});

const EventId = z.string().min(1).max(200).describe(
  "idempotency key: a repeat with the same id (within events.retention) does nothing",
);

/** POST /api/v1/events */
export const EventBody = z.strictObject({
  name: EventName,
  data: z.unknown().optional().describe("any JSON; waiting steps see it as event.data"),
  id: EventId.optional(),
}).meta({ id: "EventBody" });
export type EventBody = z.infer<typeof EventBody>;

/** An event as recorded: what it resumed and which runs its triggers started (or why not). */
export const EventRecord = z.looseObject({
  id: z.string(),
  name: z.string(),
  data: z.unknown(),
  source: z.string().describe("`api`, or `hook:<name>` for a webhook"),
  received_at: z.string(),
  resumed: z.array(z.looseObject({ run_id: z.string(), step: z.string() })),
  started: z.array(z.looseObject({
    workflow_id: z.string(),
    run_id: z.string().optional(),
    error: z.string().optional().describe("why a matching trigger started no run"),
    debounced_until: z.string().optional().describe(
      "a debounced workflow: its run starts then, unless a later event of its key supersedes this one",
    ),
    superseded_by: z.string().optional().describe(
      "a debounced workflow: the later event that took its start",
    ),
  })),
}).meta({ id: "EventRecord" });
export type EventRecord = z.infer<typeof EventRecord>;

/** The answer of sending an event. */
export const SendEventAnswer = z.looseObject({
  event: EventRecord,
  duplicate: z.boolean().describe("true: the id was seen before; nothing was done this time"),
}).meta({ id: "SendEventAnswer" });
export type SendEventAnswer = z.infer<typeof SendEventAnswer>;

/** GET /api/v1/events */
export const EventListQuery = z.object({
  name: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional().describe("next_cursor of the previous page"),
});
export type EventListQuery = z.input<typeof EventListQuery>;

export const EventList = z.looseObject({
  events: z.array(EventRecord),
  next_cursor: z.string().nullable(),
}).meta({ id: "EventList" });
export type EventList = z.infer<typeof EventList>;

/** POST /api/v1/workflow-runs/{run_id}/signal (Station's shape, plus an optional id). */
export const SignalBody = z.strictObject({
  name: EventName,
  payload: z.unknown().optional().describe("any JSON; the waiting step sees it as event.data"),
  id: EventId.optional(),
}).meta({ id: "SignalBody" });
export type SignalBody = z.infer<typeof SignalBody>;

/** A signal sent to a run: consumed by a waiting step (`delivered_to`), or kept until one waits for it. */
export const Signal = z.looseObject({
  id: z.string(),
  name: z.string(),
  data: z.unknown(),
  received_at: z.string(),
  delivered_to: z.string().nullable().describe("the step path that received it; null while kept"),
}).meta({ id: "Signal" });
export type Signal = z.infer<typeof Signal>;

export const SignalAnswer = z.looseObject({
  run: Run,
  signal: Signal,
  duplicate: z.boolean(),
  message: z.string(),
}).meta({ id: "SignalAnswer" });
export type SignalAnswer = z.infer<typeof SignalAnswer>;

export const SignalList = z.looseObject({ signals: z.array(Signal) }).meta({ id: "SignalList" });

export const HookParam = z.object({ name: z.string().min(1) });
