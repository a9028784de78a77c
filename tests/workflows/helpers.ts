import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { Engine } from "../../src/workflows/engine/engine.ts";
import type { AttemptRow, RunRow, RunStatus } from "../../src/workflows/engine/ledger.ts";
import { waitFor } from "../helpers/stn.ts";

/** Parses a definition through the shared schema (defaults applied), as the loader would hand it over. */
export function def(raw: unknown): WorkflowDefinition {
  return WorkflowDefinition.parse(raw);
}

/** Waits until the run reaches one of the statuses; throws with its events when it does not. */
export async function waitRun(
  engine: Engine,
  runId: string,
  statuses: RunStatus[] = ["completed", "failed", "canceled"],
  timeoutMs = 15_000,
): Promise<RunRow> {
  const ok = await waitFor(() => statuses.includes(engine.reads.runs.get(runId)!.status), timeoutMs);
  const run = engine.reads.runs.get(runId)!;
  if (!ok) {
    const events = engine.reads.events.after(runId, 0).map((e) =>
      `${e.seq} ${e.type} ${e.step ?? ""} ${e.data ?? ""}`
    );
    throw new Error(`run ${runId} is ${run.status}, wanted ${statuses.join("|")}\n${events.join("\n")}`);
  }
  return run;
}

/** Every attempt row of a run, oldest first. */
export function attempts(engine: Engine, runId: string): AttemptRow[] {
  return engine.reads.attempts.list(runId);
}

/** The event types of a run, in order. */
export function eventTypes(engine: Engine, runId: string): string[] {
  return engine.reads.events.after(runId, 0, 10_000).map((e) => e.type);
}
