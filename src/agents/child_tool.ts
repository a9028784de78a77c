/** The tool that offers a child agent (`agents:` of a `.prompt`) to its parent's model. */

import type { AgentRunRow } from "./ledger.ts";
import type { LoopTool } from "./loop_io.ts";
import { type AgentDefinition, childAgentToolName } from "./types.ts";

const CHILD_TASK_MAX = 10_000;
const MAX_DEPTH = 5;

/** What a child's tool needs of the agent service: the parent chain, and running the child to its end. */
export interface ChildRuns {
  ledger: { get(id: string): AgentRunRow | undefined };
  run(req: {
    agent: string;
    environment: string;
    task: string;
    parent: { runId: string; callId: string };
    traceId?: string;
    signal?: AbortSignal;
  }): Promise<AgentRunRow>;
}

/** The `__agent_<name>` tool of parent run `run`: runs the child on `{task}` and answers its result. */
export function childAgentTool(run: AgentRunRow, child: AgentDefinition, runs: ChildRuns): LoopTool {
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
      for (let p = run.parent_run_id; p; p = runs.ledger.get(p)?.parent_run_id ?? null) depth++;
      if (depth >= MAX_DEPTH) throw new Error(`agents nest at most ${MAX_DEPTH} deep; ${name} not started`);
      const task = String((args as { task?: unknown }).task ?? "").slice(0, CHILD_TASK_MAX);
      const ended = await runs.run({
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
