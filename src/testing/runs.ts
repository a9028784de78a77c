/** The station's test runs (POST /api/v1/tests): kept in memory, the last RETAINED of them, newest first. */

import type { TestRun } from "../contract/tests.ts";

/** How many test runs a station keeps (the dashboard shows them; a restart forgets them). */
export const RETAINED = 50;

/** The last test runs of a station, by id. */
export class TestRuns {
  #runs: TestRun[] = [];

  /** Keeps a run (the same object the runner fills in), dropping the oldest past RETAINED. */
  add(run: TestRun): void {
    this.#runs.unshift(run);
    this.#runs.length = Math.min(this.#runs.length, RETAINED);
  }

  /** The runs, newest first. */
  list(): TestRun[] {
    return [...this.#runs];
  }

  get(id: string): TestRun | undefined {
    return this.#runs.find((r) => r.id === id);
  }
}
