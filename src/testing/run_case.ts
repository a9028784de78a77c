/** Running one test case against a station: start its agent or workflow run, drive it, observe it, check it. */

import { dirname, join } from "node:path";
import { errorMessage } from "../errors.ts";
import type { AgentRun } from "../contract/agent_runs.ts";
import type { Run } from "../contract/runs.ts";
import type { CaseResult, TestCase } from "../contract/tests.ts";
import { getAgentRun, listAgentRuns } from "../client/agent_runs.ts";
import { sendEvent, signalRun } from "../client/events.ts";
import type { StationClient } from "../client/http.ts";
import {
  controlRun,
  decideApproval,
  getRun,
  listApprovals,
  runEvents,
  runSteps,
} from "../client/workflow_runs.ts";
import type { StationContext } from "../context.ts";
import { startWorkflowRun } from "../workflows/service.ts";
import { caseDoubles, cassettePath } from "./case_doubles.ts";
import { type RecordingSettings, rerecording } from "./recordings.ts";
import type { RunDoubles } from "../agents/doubles.ts";
import { sleep } from "../lib/async.ts";
import { checkExpect, type Failure, type Observed } from "./expect.ts";
import type { LoadedCase, ReadText } from "./load.ts";
import type { VirtualTime } from "./virtual_time.ts";

/** The station a suite runs against: its API (to observe and drive runs) and its services (to start them with doubles). */
export interface TestTarget {
  client: StationClient;
  ctx: StationContext;
  /** The environment whose agents the cases run. */
  environment: string;
  /** How long one case may take before it fails (ms). */
  caseTimeoutMs: number;
  /** Skipped time, when the station runs on a virtual clock (`stn test`; not a station started by `stn serve`). */
  time?: VirtualTime;
  /** `stn test --update`: re-record failing cassette cases (the user's key and secrets masked). */
  update?: RecordingSettings;
  /** Reads a file a case names (a cassette): the disk, or the files a POST /api/v1/tests body carried. */
  read: ReadText;
}

/** What a workflow run took: its steps in order and its events, for the steps assertion and coverage. */
export interface WorkflowTrace {
  workflow: string;
  steps: Array<{ step_id: string; path: string; output: unknown }>;
  events: Array<{ type: string; step: string | null; data: unknown }>;
}

/** A case's result, and for a workflow case what its run took (coverage reads it). */
export interface CaseOutcome {
  result: CaseResult;
  trace?: WorkflowTrace;
}

/** Milliseconds between two timestamps of the station's clock (null while the run has not ended). */
const span = (from: string, to: string | null) => to === null ? null : Date.parse(to) - Date.parse(from);

const TERMINAL = new Set(["completed", "failed", "canceled"]);

/** Idle checks in a row, with nothing due, before a waiting run is taken to be stuck. */
const STUCK_CHECKS = 3;

const usageTokens = (r: AgentRun) => r.usage.total_tokens;

/** What an agent run did, as the assertions read it. */
function observeAgent(run: AgentRun): Observed {
  return {
    status: run.status,
    output: run.result !== undefined ? run.result : run.response,
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    steps: [],
    toolCalls: run.tool_calls.map((c) => ({ name: c.name, arguments: c.arguments })),
    turns: run.turns,
    tokens: usageTokens(run),
  };
}

/** Runs an agent case: one agent run with the case's task and variables under its doubles, waited for. */
async function agentCase(
  target: TestTarget,
  c: Extract<TestCase, { agent: string }>,
  doubles: RunDoubles,
  signal: AbortSignal,
) {
  const started = await target.ctx.agents.start({
    agent: c.agent,
    environment: target.environment,
    task: c.task,
    variables: c.vars ?? {},
    doubles,
    signal,
  });
  await (target.time ? target.time.during(started.done) : started.done);
  const run = await getAgentRun(target.client, started.run.id);
  return { runId: run.run_id, seen: observeAgent(run), clockMs: span(run.started_at, run.ended_at) };
}

/** Decides the run's pending approvals the case names (`timeout` ones are left to time out); how many it decided. */
async function decide(target: TestTarget, c: TestCase, runId: string, decided: Set<string>): Promise<number> {
  let n = 0;
  for (const a of await listApprovals(target.client, { run_id: runId, status: "pending" })) {
    const d = c.approvals?.[a.step_id];
    if (!d || d.decision === "timeout" || decided.has(a.id)) continue;
    decided.add(a.id);
    await decideApproval(target.client, a.id, d.decision, { actor: "stn-test", comment: d.comment });
    n++;
  }
  return n;
}

/**
 * Starts a workflow run and follows it to its end, delivering the case's approvals and events while it waits.
 * On a virtual clock they are delivered when the station is idle, before time skips (so an approval is
 * decided before it can time out), and the clock holds from before the run starts until it is followed; a
 * run waiting with nothing due and nothing to deliver is stuck and the case ends there. The wait ends early
 * too when the case expects `waiting`.
 */
async function drive(
  target: TestTarget,
  c: Extract<TestCase, { workflow: string }>,
  start: () => Promise<Run>,
  signal: AbortSignal,
): Promise<Run> {
  let run: Run | undefined;
  const decided = new Set<string>();
  let eventsSent = false;
  let stop = false;
  let stuckChecks = 0;
  const deliver = async (id: string): Promise<boolean> => {
    if ((await getRun(target.client, id)).status !== "waiting") return false;
    let delivered = await decide(target, c, id, decided) > 0;
    if (!eventsSent && c.events?.length) {
      eventsSent = true;
      delivered = true;
      for (const e of c.events) await sendEvent(target.client, { name: e.name, data: e.data });
    }
    if (!delivered && c.expect.status === "waiting") stop = true;
    return delivered;
  };
  const follow = async (): Promise<Run> => {
    const started = await start();
    run = started;
    let pause = 5;
    for (;;) {
      signal.throwIfAborted();
      const now = await getRun(target.client, started.id);
      if (TERMINAL.has(now.status) || stop) return now;
      if (!target.time) await deliver(started.id);
      await sleep(pause);
      pause = Math.min(pause * 2, 50);
    }
  };
  const time = target.time;
  if (!time) return await follow();
  return await time.during(follow(), {
    beforeSkip: async () => {
      if (!run) {
        // Still starting (its signals being sent): the clock waits, yielding so the start can go on.
        await sleep(1);
        return true;
      }
      const status = (await getRun(target.client, run.id)).status;
      if (status === "pending" || status === "running") {
        // Between commits (a step's outcome not yet written): only a waiting run may let time jump.
        await sleep(1);
        return true;
      }
      if (await deliver(run.id)) return true;
      if (time.nextDue() !== null || status !== "waiting") {
        stuckChecks = 0;
        return false;
      }
      // Idle, nothing to deliver and no timer due: nothing will ever move this run on — once that holds a few
      // times in a row, since a timer the last commit set (an approval's timeout) is armed just after it.
      if (++stuckChecks < STUCK_CHECKS) {
        await sleep(10);
        return true;
      }
      stop = true;
      return false;
    },
  });
}

/**
 * Runs a workflow case: a run of the stored workflow with the case's input, its doubles registered before any
 * step runs (they cover its agent steps), driven to its end.
 */
async function workflowCase(
  target: TestTarget,
  c: Extract<TestCase, { workflow: string }>,
  doubles: RunDoubles,
  signal: AbortSignal,
) {
  const registry = target.ctx.agents.doubles;
  let runId: string | undefined;
  const start = async () => {
    const row = await startWorkflowRun(target.ctx, {
      workflowId: c.workflow,
      input: c.input ?? {},
      trigger: { type: "api" },
      claim: registry.claimFor(doubles),
    });
    runId = row.id;
    for (const s of c.signals ?? []) {
      await signalRun(target.client, row.id, { name: s.name, payload: s.data });
    }
    return await getRun(target.client, row.id);
  };
  let run: Run;
  try {
    run = await drive(target, c, start, signal);
  } catch (err) {
    // A case that ran out of time: cancel its run so nothing keeps running on a shared station.
    if (runId) await controlRun(target.client, runId, "cancel").catch(() => undefined);
    throw err;
  } finally {
    if (runId) registry.release(runId); // the run has ended (or was canceled): its doubles go
  }
  const steps = (await runSteps(target.client, run.id)).filter((s) => s.status !== "scheduled");
  const agentRuns = (await listAgentRuns(target.client, { workflow_run_id: run.id, limit: 500 })).runs;
  const full = await Promise.all(agentRuns.map((r) => getAgentRun(target.client, r.run_id)));
  const events: WorkflowTrace["events"] = [];
  for await (const e of runEvents(target.client, run.id, { follow: false })) events.push(e);
  const seen: Observed = {
    status: run.status,
    output: run.result,
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    steps: steps.map((s) => s.step_id),
    toolCalls: full.flatMap((r) => r.tool_calls.map((t) => ({ name: t.name, arguments: t.arguments }))),
    turns: full.reduce((n, r) => n + r.turns, 0),
    tokens: full.reduce((n, r) => n + usageTokens(r), 0),
  };
  const trace: WorkflowTrace = {
    workflow: c.workflow,
    steps: steps.map((s) => ({ step_id: s.step_id, path: s.path, output: s.output })),
    events,
  };
  return { runId: run.id, seen, trace, clockMs: span(run.created_at, run.completed_at) };
}

/** A run of a case under `doubles`, checked: its result, and for a workflow what it took. */
async function attempt(target: TestTarget, loaded: LoadedCase, doubles?: RunDoubles): Promise<CaseOutcome> {
  const c = loaded.case;
  const started = performance.now();
  const timeout = AbortSignal.timeout(target.caseTimeoutMs);
  let done: { runId: string; seen: Observed; trace?: WorkflowTrace; clockMs: number | null } | undefined;
  let failures: Failure[];
  try {
    const envDir = join(target.ctx.config.paths.environments, target.environment);
    doubles ??= await caseDoubles(c, {
      dir: loaded.dir,
      ai: target.ctx.config.values.ai,
      read: target.read,
      environmentDir: envDir,
    });
    done = "agent" in c
      ? await agentCase(target, c, doubles, timeout)
      : await workflowCase(target, c, doubles, timeout);
    failures = await checkExpect(c.expect, done.seen);
  } catch (err) {
    const message = timeout.aborted
      ? `did not finish within ${target.caseTimeoutMs / 1000} s`
      : errorMessage(err);
    failures = [{ assertion: "run", message }];
  }
  const result: CaseResult = {
    file: loaded.file,
    name: c.name,
    kind: "agent" in c ? "agent" : "workflow",
    target: "agent" in c ? c.agent : c.workflow,
    status: failures.length ? "failed" : "passed",
    duration_ms: Math.round(performance.now() - started),
    run_id: done?.runId ?? null,
    clock_ms: done?.clockMs ?? null,
    failures,
    steps: done?.seen.steps ?? [],
  };
  return { result, trace: done?.trace };
}

/**
 * Runs one case and checks its expectations; an error running it is a failure of the case, not of the suite.
 * With `--update`, a failing case with a cassette (missing, or no longer matching) runs once more against the
 * configured model and live tools, its cassette is written from that run, and the case runs again from it.
 */
export async function runCase(target: TestTarget, loaded: LoadedCase): Promise<CaseOutcome> {
  const first = await attempt(target, loaded);
  const path = cassettePath(loaded.case, loaded.dir);
  if (!target.update || !path || first.result.status === "passed") return first;
  const c = loaded.case;
  const what = "agent" in c ? { agent: c.agent } : { workflow: c.workflow };
  const rec = await rerecording({ ...what, environment: target.environment }, target.update, c.mocks);
  const recording = await attempt(target, loaded, rec.doubles);
  if (recording.result.run_id === null) return recording; // it did not even start: say why
  try {
    await Deno.mkdir(dirname(path), { recursive: true });
    await rec.save(path);
  } catch (err) {
    recording.result.status = "failed";
    recording.result.failures.push({ assertion: "update", message: errorMessage(err) });
    return recording;
  }
  const again = await attempt(target, loaded);
  again.result.recorded = true;
  return again;
}
