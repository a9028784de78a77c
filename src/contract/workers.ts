/** The contract of /api/v1/workers: the live `stn worker` processes and the steps they run. */

import { z } from "zod";

/** A step a worker runs now. */
const InFlightStep = z.looseObject({ run_id: z.string(), path: z.string(), attempt: z.number() });

/** One live `stn worker` (a heartbeat within the engine lease). */
export const Worker = z.looseObject({
  id: z.string().describe("the worker's id in attempt claims (`owner`)"),
  name: z.string().describe("--name, else host:pid"),
  host: z.string(),
  pid: z.number(),
  queues: z.array(z.string()).describe("the task queues it takes steps from"),
  concurrency: z.number(),
  agents: z.boolean().describe("it runs `agent` steps (an older worker hands them to the station)"),
  draining: z.boolean().describe("stopping (SIGTERM): it takes no new step"),
  in_flight: z.array(InFlightStep),
  started_at: z.string(),
  last_heartbeat: z.string(),
}).meta({ id: "Worker" });
export type Worker = z.infer<typeof Worker>;

/** A task queue with steps waiting and nobody serving it. */
const UnservedQueue = z.looseObject({
  queue: z.string(),
  waiting: z.number().describe("scheduled steps on it"),
});

/** GET /api/v1/workers */
export const WorkerList = z.looseObject({
  workers: z.array(Worker),
  local_workers: z.number().describe("steps the station runs itself at once (0 with --no-local-workers)"),
  unserved: z.array(UnservedQueue).describe(
    "queues whose steps wait for a worker: no live process serves them",
  ),
  queued_agent_runs: z.array(z.looseObject({ queue: z.string(), waiting: z.number() })).describe(
    "agent runs started on a task queue that no worker has taken yet, per queue (docs/workers.md)",
  ),
}).meta({ id: "WorkerList" });
export type WorkerList = z.infer<typeof WorkerList>;
