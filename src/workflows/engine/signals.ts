/**
 * Signals: events and signals into the engine, ending waits and starting triggered runs in one transaction.
 */

import { ulid } from "ulid";
import { runAdmission, usageWith } from "./admission.ts";
import { debounced, debounceKey } from "./debounce.ts";
import { CANCEL_SUBJECT } from "./control.ts";
import { errorMessage, StationError } from "../../errors.ts";
import { log } from "../../log.ts";
import { countRunStarted } from "../../telemetry/metrics.ts";
import { startedRunSpan } from "../../telemetry/tracing.ts";
import { evaluateCondition } from "../expr.ts";
import { stepType } from "../steps/registry.ts";
import type { ReceivedEvent, Scope } from "../steps/types.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import type { EngineCore } from "./core.ts";
import { consumeKept, deliverIn, type Delivery, signalRun } from "./delivery.ts";
import { newTraceparent } from "./dispatch.ts";
import type { EventRecordRow, SignalRow } from "./ledger.ts";
import type { WaitCandidate } from "./repository.ts";
import { Transition } from "./run_state.ts";
import { createRun, type NewRun } from "./transitions.ts";

/** An event sent to everyone (`POST /api/v1/events`, a webhook). */
export interface SendEventRequest {
  name: string;
  data: unknown;
  /** Makes sending idempotent within the retention window (default: a new id). */
  id?: string;
  /** `api`, or `hook:<name>` for a webhook. */
  source: string;
  /** The runs its triggers start (already mapped and checked by the caller). */
  starts: Omit<NewRun, "id" | "traceparent">[];
  /** Trigger matches that could not start a run (bad input), recorded with the event. */
  refused?: { workflow_id: string; error: string }[];
  /**
   * Called inside the transaction that would record the event (as `eventId`, at `nowMs`): the id of a
   * recorded event this one repeats (a replayed webhook delivery: nothing is done), or undefined to go on.
   */
  claim?: (eventId: string, nowMs: number) => string | undefined;
}

/** What sending did: the event as recorded, and whether it was a repeat (which did nothing). */
export interface SendEventResult {
  event: EventRecordRow;
  duplicate: boolean;
}

/** A signal to one run. */
export interface SignalRequest {
  name: string;
  data: unknown;
  /** Makes the signal idempotent for its run (default: a new id). */
  id?: string;
}

/** What signalling did: the signal as recorded, and the step it reached (null: kept on the run). */
export interface SignalResult {
  signal: SignalRow;
  deliveredTo: string | null;
  duplicate: boolean;
}

/**
 * Events and signals into the engine (issue 20): an event resumes every waiting `await` step of
 * that name whose `match` holds, and starts the runs its triggers asked for, all in the one
 * transaction that records it; a signal goes to one run's waiting step, or is kept on the run until
 * a step waits for its name. `match` is evaluated before the transaction, and the wait's `pending`
 * row is the fence inside it, so concurrent events, timeouts and cancels end each wait once.
 */
export class Signals {
  #core: EngineCore;

  constructor(core: EngineCore) {
    this.#core = core;
  }

  /** Offers kept signals to a wait that just started (after the commit that parked it). */
  waitStarted(runId: string, attemptId: number): void {
    void this.#core.track(this.#offerKept(runId, attemptId));
  }

  /** Offers kept signals to the waits that were parked when the station stopped. */
  async start(): Promise<void> {
    for (const w of this.#core.repo.waits.withKeptSignals()) await this.#offerKept(w.run_id, w.attempt_id);
  }

  /** Records an event, resumes the waits it matches and starts its triggered runs, in one transaction. */
  async send(req: SendEventRequest): Promise<SendEventResult> {
    const core = this.#core;
    const retentionMs = core.opts.eventRetentionMs ?? 7 * 86_400_000;
    const known = req.id === undefined ? undefined : core.repo.eventLog.get(req.id);
    const now = core.clock.now();
    if (known && known.received_ms >= now - retentionMs) return { event: known, duplicate: true };
    const event: ReceivedEvent = {
      name: req.name,
      id: req.id ?? ulid(),
      data: req.data ?? null,
      received_at: iso(now),
    };
    const deliveries: (Delivery & { runId: string; path: string })[] = [];
    for (const c of core.repo.waits.candidates(event.name, now)) {
      const d = await this.#offer(c, event);
      if (d) deliveries.push({ ...d, runId: c.run_id, path: c.path });
    }
    const starts = await Promise.all(req.starts.map(async (s) => {
      const id = ulid();
      const admission = await runAdmission(s.definition, s.input);
      const debounce = await debounceKey(s.definition, s.input);
      // A debounced start makes no run now: its span is made when the run starts (flow_due.ts).
      const span = debounce === undefined ? startedRunSpan(s.definition.id, id) : undefined;
      return { ...s, id, admission, debounce, traceparent: span ?? newTraceparent(null) };
    }));
    const traceparents = new Map<string, string | null>(starts.map((s) => [s.id, s.traceparent]));
    let duplicate: EventRecordRow | undefined;
    const skipped = new Map<string, string>();
    const entries = new Map<string, { workflow_id: string; debounced_until?: string }>(); // debounced starts
    const canceled: string[] = [];
    const messages = core.commit(() => {
      const again = core.repo.eventLog.get(event.id);
      if (again && again.received_ms >= now - retentionMs) {
        duplicate = again;
        return [];
      }
      const repeatOf = req.claim?.(event.id, now);
      if (repeatOf) {
        duplicate = core.repo.eventLog.get(repeatOf)!;
        return [];
      }
      const commands: Command[] = [];
      const resumed: { run_id: string; step: string }[] = [];
      // One transition per run, so two waits of one run (parallel branches) see each other's end.
      const byRun = Map.groupBy(deliveries, (d) => d.runId);
      for (const [runId, ds] of byRun) {
        const state = core.snapshot(runId, ...ds.map((d) => d.attemptId));
        if (!state) continue;
        const t = new Transition(state, core.env());
        for (const d of ds) {
          const waitPending = core.repo.waits.get(d.attemptId)?.status === "pending";
          if (deliverIn(t, { ...d, waitPending })) resumed.push({ run_id: runId, step: d.path });
        }
        commands.push(...t.commands);
        traceparents.set(runId, state.run.traceparent);
      }
      const singletons = new Map<string, string>();
      for (const { admission, debounce, ...s } of starts) {
        if (debounce !== undefined) {
          const trigger = s.trigger ?? { type: "event", event: event.name, event_id: event.id };
          const d = debounced({ ...s, key: debounce, trigger, eventId: event.id }, now);
          commands.push({ kind: "debounce_start", start: d.start });
          entries.set(s.id, d.entry);
          continue;
        }
        const single = core.admission.singleton(admission);
        const active = single.active ?? (admission?.singleton && singletons.get(admission.singleton.key));
        if (active && admission?.singleton?.mode === "skip") {
          skipped.set(s.id, active);
          continue;
        }
        if (admission?.singleton) singletons.set(admission.singleton.key, s.id);
        commands.push(...single.commands), canceled.push(...single.canceled);
        // Several runs of one key may start here: each sees the keys the ones before it took.
        const usage = usageWith((k) => core.repo.concurrency.usage(k, now), commands);
        const concurrency = admission && { ...admission, singleton: single.slot, usage };
        commands.push(...createRun({ ...s, concurrency }, core.env()));
      }
      const started = [
        ...starts.map((s) =>
          entries.get(s.id) ?? (skipped.has(s.id)
            ? {
              workflow_id: s.definition.id,
              error: `singleton: run ${skipped.get(s.id)} is active; skipped`,
            }
            : { workflow_id: s.definition.id, run_id: s.id })
        ),
        ...(req.refused ?? []),
      ];
      commands.push({ kind: "prune_events", beforeMs: now - retentionMs }, {
        kind: "record_event",
        id: event.id,
        name: event.name,
        data: event.data,
        source: req.source,
        receivedMs: now,
        at: event.received_at,
        resumed,
        started,
      });
      return commands;
    });
    if (duplicate) return { event: duplicate, duplicate: true };
    for (const runId of traceparents.keys()) core.notify(runId);
    for (const s of starts) if (!skipped.has(s.id) && !entries.has(s.id)) countRunStarted(s.definition.id);
    for (const runId of canceled) core.notify(runId), core.nc.publish(`${CANCEL_SUBJECT}.${runId}`);
    await Promise.all(messages.map((m) => core.dispatch.publish(m, traceparents.get(m.run) ?? null)));
    return { event: core.repo.eventLog.get(event.id)!, duplicate: false };
  }

  /** Sends a signal to one run: to its waiting step of that name whose `match` holds, else kept on the run. */
  async signal(runId: string, req: SignalRequest): Promise<SignalResult> {
    const core = this.#core;
    if (!core.repo.runs.get(runId)) {
      throw new StationError("run_not_found", `no workflow run ${runId}`, {
        status: 404,
        hint: "list runs with `stn workflow runs`",
      });
    }
    const known = req.id === undefined ? undefined : core.repo.signals.byId(runId, req.id);
    if (known) return { signal: known, deliveredTo: this.#pathOf(known), duplicate: true };
    const now = core.clock.now();
    const event: ReceivedEvent = {
      name: req.name,
      id: req.id ?? ulid(),
      data: req.data ?? null,
      received_at: iso(now),
    };
    let delivery: Delivery | undefined;
    for (const c of core.repo.waits.candidates(event.name, now, runId)) {
      if ((delivery = await this.#offer(c, event))) break;
    }
    let deliveredTo: string | null = null;
    let duplicate: SignalRow | undefined;
    const messages = core.commit(() => {
      if (req.id !== undefined && (duplicate = core.repo.signals.byId(runId, req.id))) return [];
      const state = core.snapshot(runId, ...(delivery ? [delivery.attemptId] : []))!;
      const d = delivery &&
        { ...delivery, waitPending: core.repo.waits.get(delivery.attemptId)?.status === "pending" };
      const out = signalRun(state, { event, delivery: d }, core.env());
      deliveredTo = out.deliveredTo;
      return out.commands;
    });
    if (duplicate) return { signal: duplicate, deliveredTo: this.#pathOf(duplicate), duplicate: true };
    core.notify(runId);
    await core.publishAll(messages, core.repo.runs.get(runId)!.traceparent);
    // A wait that parked while this signal was being matched missed it: offer it again now that it is kept.
    if (deliveredTo === null) {
      for (const c of core.repo.waits.candidates(event.name, core.clock.now(), runId)) {
        await this.#offerKept(runId, c.attempt_id);
      }
    }
    return { signal: core.repo.signals.byId(runId, event.id)!, deliveredTo, duplicate: false };
  }

  #pathOf(s: SignalRow): string | null {
    return s.consumed_by === null ? null : this.#core.repo.attempts.get(s.consumed_by)?.path ?? null;
  }

  /** The delivery of an event to a pending wait when its `match` holds (a failing match is no match). */
  async #offer(c: WaitCandidate, event: ReceivedEvent): Promise<Delivery | undefined> {
    const core = this.#core;
    if (c.match) {
      const ctx = JSON.parse(c.context) as Scope;
      const workflow = ctx.workflow as { input?: unknown } | undefined;
      try {
        const data = { ...ctx, event };
        const ok = await evaluateCondition(c.match, {
          data,
          bindings: { ctx, input: workflow?.input, event },
        });
        if (!ok) return undefined;
      } catch (err) {
        log.debug("await match failed", { run_id: c.run_id, step: c.path, error: errorMessage(err) });
        return undefined;
      }
    }
    const attempt = core.repo.attempts.get(c.attempt_id)!;
    const state = core.stateOf(attempt);
    const outcome = stepType(state.type)?.wait?.received(state, event);
    if (!outcome) return undefined;
    const prepared = await core.prepare(attempt, state, outcome);
    return { attemptId: attempt.id, waitPending: true, event, prepared };
  }

  /** Offers a run's kept signals of a wait's name to it, oldest first, until one is accepted. */
  async #offerKept(runId: string, attemptId: number): Promise<void> {
    const core = this.#core;
    if (core.stopping) return;
    const wait = core.repo.waits.get(attemptId);
    if (wait?.status !== "pending") return;
    for (const s of core.repo.signals.kept(runId, wait.event)) {
      const event: ReceivedEvent = {
        name: s.name,
        id: s.signal_id,
        data: JSON.parse(s.data),
        received_at: s.received_at,
      };
      const [candidate] = core.repo.waits.candidates(wait.event, Number.MAX_SAFE_INTEGER, runId)
        .filter((c) => c.attempt_id === attemptId);
      if (!candidate) return;
      const delivery = await this.#offer(candidate, event);
      if (!delivery) continue;
      const messages = core.commit(() => {
        const state = core.snapshot(runId, attemptId);
        if (!state) return [];
        return consumeKept(state, {
          signalRowId: s.id,
          signalKept: core.repo.signals.get(s.id)?.consumed_by === null,
          delivery: { ...delivery, waitPending: core.repo.waits.get(attemptId)?.status === "pending" },
        }, core.env());
      });
      core.notify(runId);
      await core.publishAll(messages, core.repo.runs.get(runId)!.traceparent);
      return;
    }
  }
}
