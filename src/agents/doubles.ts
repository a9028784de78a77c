/** The per-run hook through which a test case replaces an agent run's model and tools, or records them. */

import type { AgentLedger, AgentRunRow } from "./ledger.ts";
import type { LoopTool } from "./loop_io.ts";
import type { Models, ResolvedModel, RunIdentity } from "./providers.ts";
import type { AgentTool, Toolbox } from "./types.ts";

export type { RunIdentity } from "./providers.ts";

/** Tool doubles of a test case (mocks, recorded results): they answer a run's tool calls. */
export interface ToolDoubles {
  /**
   * The tool as the run is offered it. `external` tools (MCP) that no double answers fail the run naming the
   * tool unless the doubles allow live calls; the others (sandbox tools) run for real.
   */
  tool(run: RunIdentity, tool: LoopTool, external: boolean): LoopTool;
}

/** Records a run's model calls and tool calls (a cassette being written). */
export interface Recorder {
  model(run: RunIdentity, model: ResolvedModel): ResolvedModel;
  tool(run: RunIdentity, tool: LoopTool): LoopTool;
}

/** What replaces or records the model and tools of the agent runs a registration covers. */
export interface RunDoubles {
  /** Answers the runs' model calls instead of the station's providers (a cassette, a script). */
  models?: Models;
  tools?: ToolDoubles;
  /** Records what the runs' (real or doubled) model and tools did. */
  record?: Recorder;
}

/**
 * Which doubles apply to which runs: registered under a run id (an agent run's, or a workflow run's), they
 * apply to that run and every agent run inside it — a workflow's agent steps and their child agents. With
 * nothing registered every lookup is empty and runs go to the real model and tools.
 */
export class DoublesRegistry {
  #byId = new Map<string, RunDoubles>();

  /** Registers doubles for a run id and what runs inside it; returns the unregistering function. */
  register(runId: string, doubles: RunDoubles): () => void {
    this.#byId.set(runId, doubles);
    return () => {
      if (this.#byId.get(runId) === doubles) this.#byId.delete(runId);
    };
  }

  /** Drops the doubles registered under a run id (a workflow run whose recording is no longer kept). */
  release(runId: string): void {
    this.#byId.delete(runId);
  }

  /**
   * A `claim` for a workflow start (StartRunRequest.claim) that registers doubles under the new run's id
   * inside the creating transaction, before any step can run, then defers to the caller's own claim.
   */
  claimFor(
    doubles: RunDoubles,
    inner?: (runId: string) => string | undefined,
  ): (runId: string) => string | undefined {
    return (runId) => {
      const existing = inner?.(runId);
      if (existing === undefined) this.register(runId, doubles);
      return existing;
    };
  }

  /** The doubles of the nearest of `ids` (innermost first) that has some. */
  find(ids: readonly string[]): RunDoubles | undefined {
    if (this.#byId.size === 0) return undefined;
    for (const id of ids) {
      const d = this.#byId.get(id);
      if (d) return d;
    }
    return undefined;
  }

  /** The doubles an agent run about to be created falls under: its own, its parent's, its workflow run's. */
  forRequest(
    ledger: AgentLedger,
    req: { doubles?: RunDoubles; parent?: { runId: string }; step?: { runId: string } },
  ): RunDoubles | undefined {
    if (req.doubles) return req.doubles;
    const parent = req.parent && ledger.get(req.parent.runId);
    if (parent) return this.forRun(ledger, parent);
    return req.step ? this.find([req.step.runId]) : undefined;
  }

  /** The doubles that apply to an agent run: its own, its parents', its workflow run's. */
  forRun(ledger: AgentLedger, run: AgentRunRow): RunDoubles | undefined {
    if (this.#byId.size === 0) return undefined;
    return this.find(scopeIds(ledger, run));
  }
}

/** An agent run's id, then its ancestors' ids and the workflow run's id, innermost first. */
export function scopeIds(ledger: AgentLedger, run: AgentRunRow): string[] {
  const ids: string[] = [];
  for (
    let r: AgentRunRow | undefined = run;
    r;
    r = r.parent_run_id ? ledger.get(r.parent_run_id) : undefined
  ) {
    ids.push(r.id);
    if (r.workflow_run_id) ids.push(r.workflow_run_id);
  }
  return ids;
}

/** The run's identity for doubles (its key from its place in the run tree). */
export function runIdentity(ledger: AgentLedger, run: AgentRunRow): RunIdentity {
  return {
    id: run.id,
    agent: run.agent,
    environment: run.environment,
    model: run.model,
    key: runKey(ledger, run),
  };
}

function runKey(ledger: AgentLedger, run: AgentRunRow): string {
  const parent = run.parent_run_id ? ledger.get(run.parent_run_id) : undefined;
  if (parent) return `${runKey(ledger, parent)} > ${run.parent_call_id}:${run.agent}`;
  if (run.step_path !== null) return `step:${run.step_path}#${run.step_visit ?? 0}:${run.agent}`;
  return `agent:${run.agent}`;
}

/** A run's tools under its doubles: each answered by the tool doubles, then recorded. */
export function withDoubles(
  doubles: RunDoubles,
  who: RunIdentity,
  tools: LoopTool[],
  external: ReadonlySet<string>,
): LoopTool[] {
  return tools.map((t) => {
    const doubled = doubles.tools ? doubles.tools.tool(who, t, external.has(t.name)) : t;
    return doubles.record ? doubles.record.tool(who, doubled) : doubled;
  });
}

/** A toolbox offering `specs` that connects (`open`) at its first call only, and closes what it opened. */
export function lazyToolbox(specs: Omit<AgentTool, "call">[], open: () => Promise<Toolbox>): Toolbox {
  let opened: Promise<Toolbox> | undefined;
  const live = () => opened ??= open();
  return {
    tools: specs.map((s) => ({
      ...s,
      call: async (args, signal) => {
        const box = await live();
        const t = box.tools.find((x) => x.name === s.name);
        if (!t) throw new Error(`tool ${s.name} is no longer offered by its server`);
        return await t.call(args, signal);
      },
    })),
    close: async () => {
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
