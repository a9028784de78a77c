/** The cassette contract: a recorded run's model calls and tool calls (docs/testing.md#cassettes). */

import { z } from "zod";

/** The format version a cassette file starts with (`stn_cassette: 1`). */
export const CASSETTE_VERSION = 1;

/** A tool as the model was offered it. */
export const CassetteToolSchema = z.strictObject({
  name: z.string(),
  description: z.string().default(""),
  input_schema: z.record(z.string(), z.unknown()).default({}),
});

/**
 * What the agent loop asked a model, normalised (no provider options, headers or keys): what a replay
 * compares, so a changed prompt, tool list or output schema is caught.
 */
export const ModelRequestSchema = z.strictObject({
  /** `provider/name` of the run. */
  model: z.string(),
  /** The messages the model got (system, user, assistant, tool results), as the AI SDK's prompt. */
  prompt: z.array(z.unknown()),
  tools: z.array(CassetteToolSchema).default([]),
  tool_choice: z.unknown().optional(),
  /** A structured-output request's format (JSON schema), when the call had one. */
  response_format: z.unknown().optional(),
  /** Sampling settings that change the answer (temperature, max output tokens, …), when set. */
  settings: z.record(z.string(), z.unknown()).default({}),
});
export type ModelRequest = z.infer<typeof ModelRequestSchema>;

/** What the model answered. */
export const ModelResponseSchema = z.strictObject({
  /** The answer's text (a structured answer is its JSON text). */
  text: z.string().default(""),
  tool_calls: z.array(z.strictObject({
    id: z.string(),
    name: z.string(),
    /** The arguments as the model sent them (JSON text). */
    input: z.string(),
  })).default([]),
  finish_reason: z.enum(["stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"])
    .default("stop"),
  usage: z.strictObject({
    input_tokens: z.int().nonnegative().default(0),
    output_tokens: z.int().nonnegative().default(0),
    cached_tokens: z.int().nonnegative().default(0),
  }).default({ input_tokens: 0, output_tokens: 0, cached_tokens: 0 }),
});
export type ModelResponse = z.infer<typeof ModelResponseSchema>;

/** A tool call and what it returned (`output`) or the error it threw. */
export const ToolEventSchema = z.strictObject({
  name: z.string(),
  args: z.unknown(),
  output: z.string().optional(),
  error: z.string().optional(),
});
export type ToolEvent = z.infer<typeof ToolEventSchema>;

/** One thing that happened in a run, in order. */
export const CassetteEventSchema = z.union([
  z.strictObject({ model: z.strictObject({ request: ModelRequestSchema, response: ModelResponseSchema }) }),
  z.strictObject({ tool: ToolEventSchema }),
]);
export type CassetteEvent = z.infer<typeof CassetteEventSchema>;

/** One agent run's recording, found by its key (RunIdentity.key) on replay. */
export const CassetteRunSchema = z.strictObject({
  key: z.string(),
  agent: z.string(),
  model: z.string(),
  events: z.array(CassetteEventSchema),
});
export type CassetteRun = z.infer<typeof CassetteRunSchema>;

/** A cassette: every agent run of one recorded agent or workflow run. */
export const CassetteSchema = z.strictObject({
  stn_cassette: z.literal(CASSETTE_VERSION),
  /** What was recorded: an agent (`agent: name`) or a workflow (`workflow: id`), and its environment. */
  recorded: z.strictObject({
    agent: z.string().optional(),
    workflow: z.string().optional(),
    environment: z.string().optional(),
  }).default({}),
  runs: z.array(CassetteRunSchema),
}).meta({ id: "Cassette" });
export type Cassette = z.infer<typeof CassetteSchema>;
