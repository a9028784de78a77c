/** The tools an agent run is given: its MCP tools, sandbox tools with `sandbox:`, child agents, under any doubles. */

import { StationError } from "../errors.ts";
import type { SandboxService } from "../sandbox/service.ts";
import { lazyToolbox, type RunDoubles, type runIdentity, withDoubles } from "./doubles.ts";
import type { AgentRunRow } from "./ledger.ts";
import { type LoopTool, loopTool } from "./loop_io.ts";
import { sandboxToolbox } from "./sandbox_tools.ts";
import type { AgentDefinition, AgentTool, Toolbox } from "./types.ts";

/** Where the tools come from (the agent service's options). */
export interface ToolSources {
  mcpTools: (environment: string, def: AgentDefinition, signal: AbortSignal) => Promise<Toolbox>;
  mcpToolSpecs?: (environment: string, def: AgentDefinition) => Omit<AgentTool, "call">[];
  sandbox?: SandboxService;
}

/** One run's side: the run, its agent, its child agents' tools and the run's abort signal. */
export interface RunToolsFor {
  run: AgentRunRow;
  def: AgentDefinition;
  children: LoopTool[];
  signal: AbortSignal;
}

/** Opens a run's tools (doubled: MCP servers started only for live calls); `close` ends them. */
export async function runTools(
  src: ToolSources,
  { run, def, children, signal }: RunToolsFor,
  doubled?: { doubles: RunDoubles; who: ReturnType<typeof runIdentity> },
): Promise<{ tools: LoopTool[]; close(): Promise<void> }> {
  const boxes: Toolbox[] = [];
  const close = async () => {
    for (const b of boxes) await b.close();
  };
  try {
    if (def.tools.length > 0) {
      const { mcpTools, mcpToolSpecs } = src;
      boxes.push(
        doubled?.doubles.tools && mcpToolSpecs
          ? lazyToolbox(mcpToolSpecs(run.environment, def), () => mcpTools(run.environment, def, signal))
          : await mcpTools(run.environment, def, signal),
      );
    }
    if (def.sandbox) {
      // Under tool doubles a mocked sandbox tool needs no sandbox service (Docker).
      if (!src.sandbox && !doubled?.doubles.tools) {
        throw new StationError(
          "agent_tools_unavailable",
          `agent ${def.name} needs a sandbox, and sandboxes are not available here`,
          { hint: "start Docker and check `stn doctor` (sandbox.enabled)" },
        );
      }
      boxes.push(sandboxToolbox(src.sandbox, def.sandbox, run.workflow_run_id ?? undefined));
    }
    const external = new Set(def.tools);
    const tools = boxes.flatMap((b) => b.tools.map(loopTool));
    return {
      tools: [...(doubled ? withDoubles(doubled.doubles, doubled.who, tools, external) : tools), ...children],
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
