/** The name of a task queue, shared by workflow states, `stn worker --queue` and agents' `queue:`. */

import { z } from "zod";

/** What a task queue's name may hold: one NATS subject token. */
export const QUEUE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A task queue's name (`gpu`, `docker`, `eu-west`). */
export const TaskQueue = z.string().regex(QUEUE_NAME, "a queue name is lowercase letters, digits, _ and -")
  .describe("task queue");
