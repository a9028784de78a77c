/** A child agent as its parent's tool `__agent_<name>` (docs/agents.md: `agents:`): it runs the child and answers its result. */

import type { AgentLedger, AgentRunRow } from "./ledger.ts";
import type { LoopTool } from "./loop_io.ts";
import { type AgentDefinition, childAgentToolName } from "./types.ts";

const CHILD_TASK_MAX = 10_000;
const MAX_DEPTH = 5;

/** What a child tool needs of the agent service: the ledger (to bound the depth) and running a run to its end. */
export interface ChildRunner {
  ledger: AgentLedger;
  run: (req: {
    agent: string;
    environment: string;
    task: string;
    parent: { runId: string; callId: string };
    traceId?: string;
    signal: AbortSignal;
  }) => Promise<AgentRunRow>;
}

/** The tool that runs `child` for the parent run `run`, one child run per tool call. */
export function childAgentTool(runner: ChildRunner, run: AgentRunRow, child: AgentDefinition): LoopTool {
  const name = child.name;
  return {
    name: childAgentToolName(name),
    description: `Ask the agent ${name} to do a task and get its answer. ${child.description}`.trim(),
    inputSchema: {
      type: "object",
      properties: {
        task: { type: "string", maxLength: CHILD_TASK_MAX, description: "what the agent should do" },
      },
      required: ["task"],
    },
    run: async (args, signal, callId) => {
      // A child that lists its parent would recurse until the timeout: the chain is bounded.
      let depth = 0;
      for (let p = run.parent_run_id; p; p = runner.ledger.get(p)?.parent_run_id ?? null) depth++;
      if (depth >= MAX_DEPTH) throw new Error(`agents nest at most ${MAX_DEPTH} deep; ${name} not started`);
      const task = String((args as { task?: unknown }).task ?? "").slice(0, CHILD_TASK_MAX);
      const ended = await runner.run({
        agent: name,
        environment: run.environment,
        task,
        parent: { runId: run.id, callId },
        traceId: run.trace_id ?? undefined,
        signal,
      });
      if (ended.status !== "completed") {
        const e = ended.error ? JSON.parse(ended.error) as { message: string } : undefined;
        throw new Error(`agent ${name} ${ended.status}: ${e?.message ?? ended.finish_reason}`);
      }
      return ended.result ?? ended.response ?? "";
    },
  };
}
