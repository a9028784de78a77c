import { log } from "../../log.ts";
import type { EngineCore } from "./core.ts";
import { fireTimer, timerOutcome } from "./fencing.ts";
import type { TimerRow } from "./ledger.ts";
import type { Prepared } from "./transitions.ts";

/**
 * Durable timers and recovery (docs/design/ledger-and-engine.md#timers): one in-process timeout for the
 * earliest pending timer row (or flow-control row due with time), and a sweeper that re-dispatches attempts
 * whose message may be lost or whose claim lapsed.
 */
export class Timers {
  #core: EngineCore;
  #timer?: ReturnType<typeof setTimeout>;
  #sweeper?: ReturnType<typeof setInterval>;
  #offJump?: () => void;
  #alsoDue: () => Promise<void>;

  /** `alsoDue` fires what else the ledger has due with time (flow_due.ts), each time timers are looked at. */
  constructor(core: EngineCore, alsoDue: () => Promise<void> = async () => {}) {
    this.#core = core;
    this.#alsoDue = alsoDue;
  }

  /** Re-arms the in-process timer for the earliest pending timer row (after a commit added one). */
  arm(): void {
    this.#arm();
  }

  /** Recovers from the ledger (every scheduled attempt is dispatched again), then sweeps and fires timers. */
  async start(): Promise<void> {
    const core = this.#core;
    await this.#sweep(true);
    this.#sweeper = setInterval(() => core.track(this.#sweep(false)), Math.max(250, core.opts.leaseMs / 2));
    // A virtual clock's jump makes timers due that the armed timeout would only see up to a second later.
    this.#offJump = core.clock.onJump?.(() => this.#arm());
    this.#arm();
  }

  /** Stops sweeping and firing. */
  stop(): void {
    clearInterval(this.#sweeper);
    clearTimeout(this.#timer);
    this.#offJump?.();
  }

  /** Sets one in-process timeout for the earliest pending timer (at most 1s ahead, for other writers). */
  #arm(): void {
    const core = this.#core;
    if (core.stopping) return;
    clearTimeout(this.#timer);
    const next = core.repo.timers.nextFireAt();
    const delay = next === null ? 1000 : Math.max(0, Math.min(1000, next - core.clock.now()));
    this.#timer = setTimeout(() => core.track(this.#fireDue()).finally(() => this.#arm()), delay);
  }

  async #fireDue(): Promise<void> {
    const core = this.#core;
    for (const t of core.repo.timers.due(core.clock.now())) {
      if (core.stopping) return;
      await this.#fire(t);
    }
    if (!core.stopping) await this.#alsoDue();
  }

  /** Fires one timer exactly once (its `pending → fired` change is the fence between processes). */
  async #fire(t: TimerRow): Promise<void> {
    const core = this.#core;
    const a = core.repo.attempts.get(t.attempt_id)!;
    let prepared: Prepared | undefined;
    if (t.kind === "timer" || t.kind === "approval_timeout" || t.kind === "wait_timeout") {
      const state = core.stateOf(a);
      const outcome = timerOutcome(t, state, core.clock.now());
      if (!outcome) return;
      prepared = await core.prepare(a, state, outcome);
    }
    let traceparent: string | null = null;
    const messages = core.commit(() => {
      const run = core.snapshot(t.run_id, t.attempt_id)!;
      traceparent = run.run.traceparent;
      return fireTimer(run, {
        timer: core.repo.timers.get(t.id)!,
        approvalPending: t.kind === "approval_timeout" && core.repo.approvals.pendingFor(a.id),
        waitPending: t.kind === "wait_timeout" && core.repo.waits.get(a.id)?.status === "pending",
        prepared,
      }, core.env());
    });
    core.notify(t.run_id);
    await core.publishAll(messages, traceparent);
  }

  /**
   * Recovery (docs/design/ledger-and-engine.md#recovery): re-dispatch scheduled attempts whose message may be
   * lost and running attempts whose claim lapsed; on start, every scheduled attempt. Duplicates are fenced.
   */
  async #sweep(onStart: boolean): Promise<void> {
    const core = this.#core;
    if (core.stopping) return;
    const now = core.clock.now();
    const lost = onStart ? now : now - Math.max(core.opts.ackWaitMs * 2, 5000);
    const due = core.repo.attempts.lost(lost, now)
      .filter((a) => !core.repo.timers.retryPending(a.id) && !core.inflight.has(a.id));
    for (const a of due) {
      core.repo.apply([{ kind: "mark_dispatched", attemptId: a.id, dispatchedAt: now }]);
      await core.publishAll([{ id: a.id, run: a.run_id, path: a.path, attempt: a.attempt }], a.traceparent);
    }
    if (onStart && due.length) log.info("engine recovered steps", { count: due.length });
  }
}
