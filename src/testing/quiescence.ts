/** Quiescence: whether a station has nothing left to do now, and waiting until it has not. */

import { sleep } from "../lib/async.ts";

/** A part of a station that can say why it is busy now (null: idle) and when it next has a timer due. */
export interface QuiescentPart {
  busy(): string | null;
  /** When this part's earliest timer is due (ms since the epoch; null when none is). */
  nextDue?(): number | null;
}

/** How often quiescence is polled (ms of wall time). */
const POLL_MS = 5;

/**
 * A station's parts asked together (docs/testing.md#skipped-time): the engine (tasks, steps running or about
 * to run — which covers step messages in flight —, group commits, due timers), the workflow and agent
 * schedulers (a fire in progress or due) and the agent service (runs going on). Idle means every part is
 * idle at two polls in a row, so work handed between them across a turn of the event loop is seen.
 */
export class Quiescence {
  #parts: QuiescentPart[];

  constructor(parts: QuiescentPart[]) {
    this.#parts = parts;
  }

  /** Why the station is not idle now (the first busy part's reason), else null. */
  busy(): string | null {
    for (const p of this.#parts) {
      const why = p.busy();
      if (why !== null) return why;
    }
    return null;
  }

  /** When the earliest timer of any part is due (null when none is). */
  nextDue(): number | null {
    let next: number | null = null;
    for (const p of this.#parts) {
      const at = p.nextDue?.() ?? null;
      if (at !== null && (next === null || at < next)) next = at;
    }
    return next;
  }

  /** Resolves once the station is idle (two polls in a row); rejects when `signal` aborts first. */
  async settled(signal?: AbortSignal): Promise<void> {
    for (let idlePolls = 0; idlePolls < 2;) {
      await sleep(POLL_MS, signal);
      idlePolls = this.busy() === null ? idlePolls + 1 : 0;
    }
  }
}
