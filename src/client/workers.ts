/** Calls of /api/v1/workers: the live `stn worker` processes. */

import type { WorkerList } from "../contract/workers.ts";
import * as workersAnswers from "./answers/workers.ts";
import type { StationClient } from "./http.ts";

export type { WorkerList };

/** GET /api/v1/workers */
export function listWorkers(client: StationClient): Promise<WorkerList> {
  return client.json("GET", "/api/v1/workers", { answer: workersAnswers.WorkerList });
}
