/** An inline model script: a test case's model answers written out in order (text, structured output, tool calls). */

import { z } from "zod";
import { RunFailure } from "../agents/loop.ts";
import { type AiConfig, modelIdOf, type Models } from "../agents/providers.ts";
import { doubledModel, generateResult } from "./model_calls.ts";

/** One scripted answer. */
export const ScriptAnswerSchema = z.strictObject({
  /** Only a run of this agent takes the answer (a workflow with several agents); default: the next call. */
  agent: z.string().optional(),
  text: z.string().optional().describe("the answer's text"),
  output: z.unknown().optional().describe("a structured answer: sent as its JSON text"),
  tool_calls: z.array(z.strictObject({
    /** The tool's name as the model sees it; `get_weather` also names the MCP tool `__get_weather`. */
    name: z.string(),
    args: z.record(z.string(), z.unknown()).default({}),
  })).optional().describe("tools the model calls in this turn"),
}).refine((a) => a.text !== undefined || a.output !== undefined || a.tool_calls?.length, {
  message: "a scripted answer needs text, output or tool_calls",
});
export type ScriptAnswer = z.infer<typeof ScriptAnswerSchema>;

/** `model: {script: [...]}` of a test case. */
export const ModelScriptSchema = z.array(ScriptAnswerSchema).min(1);

/**
 * Models answering from a script: each model call takes the first unused answer meant for its agent
 * (or for any agent), in order; a call finding none fails its run with `model_script_exhausted`. Tool
 * calls get ids `script_1`, `script_2`, … in the order they are answered.
 */
export class ScriptModels {
  readonly models: Models;
  #answers: ScriptAnswer[];
  #used = new Set<number>();
  #calls = 0;

  constructor(answers: ScriptAnswer[], ai: Pick<AiConfig, "model" | "provider">) {
    this.#answers = answers;
    this.models = {
      resolve: (ref, run) =>
        doubledModel(modelIdOf(ai, ref).id, (o) => {
          const i = this.#answers.findIndex((a, i) =>
            !this.#used.has(i) && (!a.agent || a.agent === run?.agent)
          );
          if (i < 0) {
            return Promise.reject(
              new RunFailure(
                "model_script_exhausted",
                `the model script has no answer left for agent ${
                  run?.agent ?? "?"
                } (${this.#used.size} of ${this.#answers.length} used)`,
                { hint: "add an answer to the case's `model: {script: [...]}`" },
              ),
            );
          }
          this.#used.add(i);
          const a = this.#answers[i];
          const offered = new Set((o.tools ?? []).map((t) => t.name));
          const toolCalls = (a.tool_calls ?? []).map((c) => ({
            id: `script_${++this.#calls}`,
            name: offered.has(c.name) || !offered.has(`__${c.name}`) ? c.name : `__${c.name}`,
            input: JSON.stringify(c.args),
          }));
          const text = a.output !== undefined ? JSON.stringify(a.output) : a.text ?? "";
          return Promise.resolve(generateResult({
            text,
            tool_calls: toolCalls,
            finish_reason: toolCalls.length ? "tool-calls" : "stop",
            usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0 },
          }));
        }),
    };
  }

  /** How many answers no call took. */
  unused(): number {
    return this.#answers.length - this.#used.size;
  }
}
