/**
 * A new workflow run's concurrency keys as transition commands (docs/workflows.md#flow-control); the admission
 * decisions themselves are the shared pure functions of `lib/concurrency.ts`.
 */

import { blockedKeys, type KeySlot, type KeyUsage } from "../../lib/concurrency.ts";
import type { Transition } from "./run_state.ts";

/** The concurrency part of a new run: its keys (evaluated), its priority, and how busy each key is now. */
export interface NewRunConcurrency {
  slots: KeySlot[];
  priority: number;
  usage: (key: string) => KeyUsage;
  /** The run's singleton key: recorded with its keys, never waited for (the caller skipped or canceled). */
  singleton?: KeySlot;
}

/** Records a new run's keys: held when they all have room, else waited for (status and event); true when held. */
export function enqueueRun(t: Transition, c: NewRunConcurrency): boolean {
  const slots = c.singleton ? [...c.slots, c.singleton] : c.slots;
  if (slots.length === 0) return true;
  const runId = t.state.run.id;
  const blocked = blockedKeys(c.slots, c.usage);
  const held = blocked.length === 0;
  t.emit({
    kind: "enqueue_concurrency",
    runId,
    slots,
    priority: c.priority,
    queuedMs: t.env.now,
    held,
  });
  if (held) return true;
  t.emit({ kind: "set_run_status", runId, status: "waiting_for_concurrency", at: t.at });
  const key = blocked[0].key;
  t.event("run_waiting_for_concurrency", null, {
    key,
    position: c.usage(key).waiting + 1,
    priority: c.priority,
  });
  return false;
}
