/**
 * An agent as loaded from its `.prompt` file and stored by `stn sync` (docs/design/agents.md#prompt-files):
 * the API answers with it, and agents/ loads into it.
 */

import { z } from "zod";
import { TaskQueue } from "./task_queue.ts";

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

/**
 * A run's context settings (docs/agents.md#context-window), stored on its plan so a resume decides the same:
 * the front matter's `context:`, else config `agents.context`, else the model's known window.
 */
export const ContextSettings = z.object({
  max_tokens: z.int().min(1024).optional(),
  /** Fraction of max_tokens above which old tool outputs are removed (down to it again). */
  threshold: z.number().min(0.1).max(1).optional(),
  /** drop_tool_outputs: remove the oldest tool outputs first; none: send everything (the provider decides). */
  strategy: z.enum(["drop_tool_outputs", "none"]).optional(),
  /** The tool outputs of this many latest turns are never removed. */
  keep_turns: z.int().min(0).optional(),
});
export type ContextSettings = z.infer<typeof ContextSettings>;

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
  /** `max_cost` (an stn extension): the run's budget in USD (docs/agents.md#cost). */
  max_cost: z.number().positive().optional(),
  /** `context:` (an stn extension): the run's context window settings over config's. */
  context: ContextSettings.optional(),
  /** `queue:` (an stn extension): its directly started runs run on a `stn worker` serving this task queue. */
  queue: TaskQueue.optional(),
  /** `concurrency:` (docs/agents.md#concurrency): limits every run must fit; `key` a `${…}` template over the input. */
  concurrency: z.array(z.object({ key: z.string().optional(), limit: z.int().positive() })).optional(),
  /** `priority:` 0–9: how soon a waiting run is admitted when slots are scarce (default 5). */
  priority: z.int().min(0).max(9).optional(),
  /** The whole file as written (front matter and Handlebars body): what the renderer renders. */
  source: z.string(),
  /** Front matter keys stn does not use, kept as written (validate reports them as warnings). */
  extra: z.record(z.string(), z.unknown()).default({}),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;
