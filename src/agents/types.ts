/**
 * The seam of the agent layer (docs/design/agents.md#prompt-files): what loading a `.prompt` file produces
 * (its schema is the API's, contract/agent_definition.ts), and the tool shape the agent loop hands to a
 * model. Loading (definition/), MCP tools (mcp/client), sandbox tools and child agents all meet the loop
 * here, so none of them imports another.
 */

export {
  type AgentDefinition,
  AgentDefinitionSchema,
  type AgentSandbox,
  AgentSandboxSchema,
  type AgentSchedule,
  AgentScheduleSchema,
  JsonSchemaObject,
} from "../contract/agent_definition.ts";

/** A tool as the agent loop offers it to a model, whatever serves it (MCP server, sandbox, child agent). */
export interface AgentTool {
  /** The name the model sees, e.g. `__read_file`, `sandbox_run`, `__agent_triage`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  /**
   * Runs the tool and returns its output as text (the loop cuts it to `agents.max_tool_output`).
   * Throws on a tool error; the loop feeds the message back to the model. Aborting `signal` must stop
   * the work (an MCP call sends its cancellation).
   */
  call(args: unknown, signal: AbortSignal): Promise<string>;
  /** The MCP server that serves it, when one does (shown on its trace span). */
  server?: string;
}

/** Tools opened for one agent run; `close` ends their connections or sessions when the run ends. */
export interface Toolbox {
  tools: AgentTool[];
  close(): Promise<void>;
}

/** The exposed name of a child agent's tool: `__agent_` + the name lower-cased, non-alphanumerics as `_`. */
export function childAgentToolName(agent: string): string {
  const normalized = agent.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  return `__agent_${normalized}`;
}
