/**
 * The flow control that falls due with time (docs/workflows.md#flow-control): rate-limit windows moving on
 * (the runs waiting for their keys admitted) and debounced starts whose window ended (their runs started).
 * The timers loop calls it whenever it looks for due timers; the ledger's rows make it survive a restart.
 */

import { errorMessage } from "../../errors.ts";
import { log } from "../../log.ts";
import type { Control } from "./control.ts";
import type { EngineCore } from "./core.ts";

/** Fires what flow control has due. */
export class FlowDue {
  #core: EngineCore;
  #control: Control;

  constructor(core: EngineCore, control: Control) {
    this.#core = core;
    this.#control = control;
  }

  /** Admits the runs a moved-on rate window lets in, then starts the debounced runs that are due. */
  async fire(): Promise<void> {
    const core = this.#core;
    const now = core.clock.now();
    if (core.repo.concurrency.expiring(now)) {
      await core.publishAll(core.commit(() => [{ kind: "expire_rate_windows", beforeMs: now }]), null);
    }
    const debounces = core.repo.debounces;
    for (const s of debounces.due(now)) {
      if (core.stopping) return;
      try {
        await this.#control.startDebounced(s, (runId) => debounces.take(s, { run_id: runId }));
      } catch (err) {
        // Recorded on the event and dropped, so a start that cannot be made is not tried again every second.
        const error = errorMessage(err);
        log.warn("debounced run could not start", { workflow: s.definition.id, error });
        core.repo.transaction(() => debounces.take(s, { error }));
      }
    }
  }
}
