import { z } from "zod";
import { RequestTrigger } from "../contract/runs.ts";

/**
 * What started a run, kept in its context as `workflow.trigger` so a step can tell a scheduled run
 * from one a person started. `manual` is the CLI (it says so in its start request), `api` any other
 * API caller, `mcp` an MCP client; `cron` carries the schedule that fired, `event` the event whose
 * trigger started it; `fork` the run it was forked from and the step it resumed at.
 */

export const RunTrigger = z.discriminatedUnion("type", [
  z.object({ type: RequestTrigger }),
  z.object({
    type: z.literal("cron"),
    /** When the schedule was due (ISO-8601), not when the run happened to start. */
    scheduled_at: z.string(),
    expression: z.string(),
    timezone: z.string(),
  }),
  z.object({
    type: z.literal("event"),
    /** The event's name and id (`stn events list` shows it). */
    event: z.string(),
    event_id: z.string(),
  }),
  z.object({ type: z.literal("fork"), parent_run_id: z.string(), step: z.string() }),
]);
export type RunTrigger = z.infer<typeof RunTrigger>;
