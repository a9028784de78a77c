/** Rendering a `.prompt` body with the task and variables into the system text and messages a model gets. */

import { Dotprompt } from "dotprompt";
import { errorMessage, StationError } from "../errors.ts";
import { schemaViolation } from "../workflows/json_schema.ts";
import type { AgentDefinition } from "./types.ts";

/** A rendered prompt: system text apart (the AI SDK takes it as `system`, not as a message), then the conversation. */
export interface RenderedPrompt {
  system?: string;
  messages: { role: "user" | "assistant"; content: string }[];
}

const dotprompt = new Dotprompt();

/** The instruction appended to the task of an agent with an output schema. */
export function outputInstruction(schema: Record<string, unknown>): string {
  return "\n\nRespond with ONLY valid JSON (no prose, no code fences) that conforms to this JSON Schema:\n" +
    JSON.stringify(schema, null, 2);
}

/**
 * Renders an agent's `.prompt` with `{userInput: task, ...variables}` (docs/design/agents.md#prompt-files):
 * the variables are checked against `input_schema` first (with `userInput`, Station's one implicit variable,
 * filled from the task when the schema names it), and the task carries the output instruction when
 * the agent has an output schema. `{{role "system"}}` blocks become the system text.
 */
export async function renderAgentPrompt(
  def: AgentDefinition,
  task: string,
  variables: Record<string, unknown>,
): Promise<RenderedPrompt> {
  const vars = structuredClone(variables);
  // Station gives every prompt `userInput` (the task): a schema that requires it is satisfied by the task.
  const asked = (def.input_schema?.properties ?? {}) as Record<string, unknown>;
  if ("userInput" in asked && vars.userInput === undefined) vars.userInput = task;
  if (def.input_schema) {
    const problem = schemaViolation(def.input_schema, vars);
    if (problem) {
      throw new StationError("agent_input_invalid", `variables of agent ${def.name}: ${problem}`, {
        hint: "pass the variables its input.schema asks for (stn agent show NAME; --var key=value)",
        details: { agent: def.name, problem },
      });
    }
  }
  const userInput = def.output_schema ? task + outputInstruction(def.output_schema) : task;
  let rendered;
  try {
    rendered = await dotprompt.render(def.source, { input: { ...vars, userInput } });
  } catch (err) {
    throw new StationError("agent_render_failed", `${def.path}: ${errorMessage(err).split("\n")[0]}`, {
      hint: "check the Handlebars in the .prompt body (stn agent validate)",
    });
  }
  const system: string[] = [];
  const messages: RenderedPrompt["messages"] = [];
  for (const m of rendered.messages) {
    const text = m.content.map((p) => ("text" in p && typeof p.text === "string" ? p.text : "")).join("")
      .trim();
    if (!text) continue;
    if (m.role === "system") system.push(text);
    else messages.push({ role: m.role === "model" ? "assistant" : "user", content: text });
  }
  // A body with only a system block still gets the task: the model needs a user turn to answer.
  if (!messages.some((m) => m.role === "user")) messages.push({ role: "user", content: userInput });
  return { system: system.length ? system.join("\n\n") : undefined, messages };
}
