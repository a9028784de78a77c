import { z } from "zod";

/**
 * The seam of the agent layer (docs/design/agents.md#prompt-files): what loading a `.prompt` file produces,
 * and the tool shape the agent loop hands to a model. Loading (definition/), MCP tools (mcp/client), sandbox
 * tools and child agents all meet the loop here, so none of them imports another.
 */

/** `sandbox:` in a `.prompt` file, normalised (the short form `sandbox: python` is `{mode: compute, runtime: python}`). */
export const AgentSandboxSchema = z.object({
  /** compute → the one-shot `sandbox_run` tool; code → the session tools. */
  mode: z.enum(["compute", "code"]).default("compute"),
  runtime: z.string().optional(),
  image: z.string().optional(),
  /** workflow → one session per workflow run, shared by its agent steps; agent → one per agent run. */
  session: z.enum(["workflow", "agent"]).default("agent"),
  timeout_seconds: z.int().positive().optional(),
  allow_network: z.boolean().default(false),
  limits: z.record(z.string(), z.unknown()).optional(),
  /** Python packages the image must carry; checked once per image before the first tool call (sandbox/packages.ts). */
  pip_packages: z.array(z.string()).optional(),
});
export type AgentSandbox = z.infer<typeof AgentSandboxSchema>;

/** `schedule:` in a `.prompt` file. */
export const AgentScheduleSchema = z.object({
  cron: z.string(),
  timezone: z.string().optional(),
  enabled: z.boolean().default(true),
  task: z.string().optional(),
  variables: z.record(z.string(), z.unknown()).default({}),
});
export type AgentSchedule = z.infer<typeof AgentScheduleSchema>;

/** A JSON Schema object (Picoschema is converted to this when the file is loaded). */
export const JsonSchemaObject = z.record(z.string(), z.unknown());

/** One agent as loaded from `environments/<env>/agents/<name>.prompt` and stored by `stn sync`. */
export const AgentDefinitionSchema = z.object({
  /** The file name without `.prompt`. */
  name: z.string(),
  environment: z.string(),
  /** Where it was loaded from, for messages (absolute path). */
  path: z.string(),
  /** sha256 of the file's bytes: sync stores a new version only when it changes. */
  checksum: z.string(),
  /** `provider/name`; absent → `ai.model` from config. */
  model: z.string().optional(),
  max_steps: z.int().positive(),
  description: z.string().default(""),
  tags: z.array(z.string()).default([]),
  /** MCP tools by their exposed name (`__<tool>`). */
  tools: z.array(z.string()).default([]),
  /** Child agents by name, offered as tools `__agent_<normalized name>`. */
  agents: z.array(z.string()).default([]),
  /** The variables the body uses besides `userInput`, as JSON Schema. */
  input_schema: JsonSchemaObject.optional(),
  /** When set, the final answer must be JSON matching it. */
  output_schema: JsonSchemaObject.optional(),
  sandbox: AgentSandboxSchema.optional(),
  schedule: AgentScheduleSchema.optional(),
  /** The whole run's deadline. */
  timeout_ms: z.int().positive(),
  /** The whole file as written (front matter and Handlebars body): what the renderer renders. */
  source: z.string(),
  /** Front matter keys stn does not use, kept as written (validate reports them as warnings). */
  extra: z.record(z.string(), z.unknown()).default({}),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

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
