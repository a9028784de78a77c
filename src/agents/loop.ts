/** THE agent loop: model turns, tool calls and the checkpoint of each before the next (runLoop). */

import {
  generateText,
  jsonSchema,
  type JSONSchema7,
  type LanguageModel,
  type ModelMessage,
  tool,
  type ToolSet,
} from "ai";
import { errorMessage, StationError } from "../errors.ts";
import { type ContextPlan, RunContext } from "./context.ts";
import { schemaViolation } from "../workflows/json_schema.ts";
import type { AgentRunRow, FinishReason, RunError, ToolCallRow } from "./ledger.ts";
import type { LoopLedger, LoopTool } from "./loop_io.ts";
import type { RenderedPrompt } from "./render.ts";
import { cutToolOutput } from "./tool_output.ts";
import { checkToolInput } from "./tool_input.ts";
import { recordModelCall, recordToolCall, traceModelCall, traceToolCall } from "../telemetry/agents.ts";
import type { Span } from "../telemetry/tracing.ts";
import type { ModelThrottle } from "./throttle.ts";
import { costOf } from "../telemetry/cost.ts";
import type { ModelPrice } from "../telemetry/model_price.ts";

/**
 * A tool's error that fails the run instead of going back to the model (a test double with no answer for
 * the call: the model must not improvise around a missing recording).
 */
export class RunFailure extends StationError {}

/** What a run starts with, stored on its row: a resume replays exactly this, whatever the file says now. */
export interface RunPlan extends RenderedPrompt {
  max_steps: number;
  output_schema?: Record<string, unknown>;
  timeout_ms: number;
  /** The context window settings (absent on runs started before them: the model's defaults). */
  context?: ContextPlan;
  /** The model's price when the run started (docs/agents.md#cost); absent: unknown, the run has no cost. */
  price?: ModelPrice;
  /** The budget in USD: past it, the run ends `budget_exceeded` instead of calling the model again. */
  max_cost?: number;
}

export interface LoopOptions {
  ledger: LoopLedger;
  model: LanguageModel;
  tools: LoopTool[];
  /** Aborted by cancel (reason code `canceled`), the timeout (`agent_timeout`) or shutdown (`shutdown`). */
  signal: AbortSignal;
  maxToolOutput: number;
  /** log.agent_turns (STATION_DEBUG=true): one stderr line per turn. */
  debug: boolean;
  /** `ai.limits`: spaces the model calls and waits out a provider's Retry-After. */
  throttle?: ModelThrottle;
  /**
   * Resolves once the ledger's commits so far are on disk (`ledger.durability` fsync or step): each model call
   * and tool call waits for it, so none begins before the turns and results it follows from are synced.
   */
  durable?: () => Promise<void>;
}

interface Call {
  id: string;
  name: string;
  input: unknown;
}

const REPAIR = "Your last answer is not valid JSON matching the required JSON Schema";

/**
 * THE agent loop (docs/design/agents.md#the-loop): runs model turns up to the plan's `max_steps`, executes the tools each
 * turn asks for, and ends the run in the ledger. Each completed turn and tool result is checkpointed
 * before the next begins; a run that already has turns (a resume after a crash) replays them from the
 * ledger instead of calling the model or the tools again. Tool errors go back to the model as
 * `{error}`, among them arguments that are not JSON or break the tool's input schema (the tool is then
 * not called); with an output schema, the final answer is validated, with one repair turn. Returns the
 * ended run, or undefined when the station is shutting down (the run stays `running` and resumes).
 */
export async function runLoop(
  run: AgentRunRow,
  plan: RunPlan,
  o: LoopOptions,
): Promise<AgentRunRow | undefined> {
  const { ledger, signal } = o;
  const stored = await ledger.turns(run.id);
  const recordedCalls = await ledger.toolCalls(run.id);
  const results = new Map(recordedCalls.map((c) => [c.call_id, c]));
  const byName = new Map(o.tools.map((t) => [t.name, t]));
  const toolSet: ToolSet = Object.fromEntries(
    o.tools.map((
      t,
    ) => [
      t.name,
      tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema as JSONSchema7) }),
    ]),
  );
  const messages: ModelMessage[] = plan.messages.map((m) => ({ role: m.role, content: m.content }));
  const context = new RunContext(plan, run.model, o.tools, recordedCalls);
  let repaired = false;
  // The repair turn may go one past max_steps: the model answered, only its form was wrong.
  let allowance = 0;
  let lastText = "";
  // The input tokens the provider reported for the last turn: the base of the next request's estimate.
  let reportedInput = 0;
  // What the turns so far cost (recorded ones included), against the plan's max_cost.
  let spent = 0;
  const end = async (
    finish: FinishReason,
    response: string,
    extra: { result?: unknown; error?: RunError } = {},
  ) => {
    const status = finish === "stop" || finish === "max_steps" ? "completed" : "failed";
    await ledger.finish(run.id, { status, finish_reason: finish, response, ...extra });
    return await ledger.get(run.id);
  };
  try {
    for (let turn = 1;; turn++) {
      if (turn > plan.max_steps + allowance) {
        return await end("max_steps", lastText, {
          error: {
            code: "agent_max_steps",
            message: `the agent used its ${plan.max_steps} turns (max_steps)`,
          },
        });
      }
      if (plan.max_cost !== undefined && spent > plan.max_cost) {
        return end("error", lastText, {
          error: {
            code: "budget_exceeded",
            message: `the run cost $${spent.toFixed(6)} in ${turn - 1} turn(s), past its budget max_cost ` +
              `$${plan.max_cost}`,
          },
        });
      }
      const done = stored[turn - 1];
      // The context is fitted before every turn, so a replay rebuilds the history a new turn would have sent.
      const fit = context.before(turn, messages, done ? undefined : reportedInput);
      if (fit?.removed.length) {
        await ledger.contextCompacted(run.id, turn, fit.removed.map((r) => r.call_id), { turn, ...fit });
      }
      const step = done
        ? {
          messages: JSON.parse(done.messages) as ModelMessage[],
          text: done.text,
          input: done.input_tokens,
          cost: done.cost_usd ?? 0,
        }
        : await traceModelCall(
          { runId: run.id, model: run.model, turn },
          (span) => modelTurn({ run, plan, turn, messages, tools: toolSet, span }, o),
        );
      messages.push(...step.messages);
      reportedInput = step.input;
      spent += step.cost;
      if (step.text) lastText = step.text;
      const calls = toolCallsOf(step.messages);
      if (calls.length > 0) {
        const outputs: string[] = [];
        for (const [position, call] of calls.entries()) {
          const traced = {
            runId: run.id,
            callId: call.id,
            name: call.name,
            server: byName.get(call.name)?.server,
          };
          outputs.push(
            await traceToolCall(
              traced,
              (span) =>
                runTool({
                  runId: run.id,
                  turn,
                  position,
                  call,
                  done: results.get(call.id),
                  tools: byName,
                  span,
                }, o),
            ),
          );
        }
        messages.push({
          role: "tool",
          content: calls.map((c, i) => ({
            type: "tool-result" as const,
            toolCallId: c.id,
            toolName: c.name,
            output: { type: "text" as const, value: outputs[i] },
          })),
        });
        continue;
      }
      if (!plan.output_schema) return await end("stop", step.text);
      const problem = outputProblemOf(step.text, plan.output_schema);
      if (problem === null) return await end("stop", step.text, { result: parseJson(step.text) });
      if (repaired) {
        return await end("output_invalid", step.text, {
          error: {
            code: "agent_output_invalid",
            message: `the final answer does not match the output schema: ${problem}`,
          },
        });
      }
      repaired = true;
      allowance = 1;
      messages.push({ role: "user", content: `${REPAIR} (${problem}). Answer again with only the JSON.` });
    }
  } catch (err) {
    const reason = signal.aborted ? signal.reason : undefined;
    const code = reason instanceof StationError ? reason.code : undefined;
    if (code === "shutdown") return undefined;
    if (code === "agent_timeout") {
      return await end("timeout", lastText, { error: { code, message: errorMessage(reason) } });
    }
    if (signal.aborted) {
      await ledger.finish(run.id, {
        status: "canceled",
        finish_reason: "canceled",
        response: lastText,
        error: { code: "canceled", message: reason instanceof Error ? reason.message : "agent run canceled" },
      });
      return await ledger.get(run.id);
    }
    const e = err instanceof StationError ? err : context.overflowOf(err);
    return await end("error", lastText, {
      error: { code: e?.code ?? "model_error", message: e?.message ?? errorMessage(err) },
    });
  }
}

/** What one model call works on. */
interface TurnInput {
  run: AgentRunRow;
  plan: RunPlan;
  turn: number;
  messages: ModelMessage[];
  tools: ToolSet;
  span?: Span;
}

/** One model call, checkpointed with its usage when it completes. */
async function modelTurn(
  { run, plan, turn, messages, tools, span }: TurnInput,
  o: LoopOptions,
): Promise<{ messages: ModelMessage[]; text: string; input: number; cost: number }> {
  await o.ledger.event(run.id, "turn_started", { turn });
  await o.durable?.();
  const started = performance.now();
  const limited = o.throttle?.limited(run.model) ?? false;
  const request = { model: o.model, system: plan.system, messages, tools, abortSignal: o.signal };
  // A limited model's 429/503 are waited out by the throttle, durably, instead of the SDK's two retries.
  const call = () => generateText({ ...request, ...(limited ? { maxRetries: 0 } : {}) });
  const r = limited
    ? await o.throttle!.call(run.model, {
      signal: o.signal,
      onWait: (w) => o.ledger.event(run.id, "model_throttled", { turn, ...w }),
    }, async () => {
      const r = await call();
      return { value: r, tokens: r.usage.totalTokens ?? 0 };
    })
    : await call();
  const usage = {
    input_tokens: r.usage.inputTokens ?? 0,
    output_tokens: r.usage.outputTokens ?? 0,
    cached_tokens: r.usage.inputTokenDetails?.cacheReadTokens ?? 0,
    total_tokens: r.usage.totalTokens ?? (r.usage.inputTokens ?? 0) + (r.usage.outputTokens ?? 0),
  };
  const cost_usd = plan.price ? costOf(usage, plan.price) : null;
  recordModelCall(span, run, { ...usage, cost_usd }, r.finishReason);
  const out = withRawInvalidInputs(r.response.messages as ModelMessage[], r.content);
  const names = toolCallsOf(out).map((c) => c.name);
  await o.ledger.turnCompleted({
    run_id: run.id,
    turn,
    messages: JSON.stringify(out),
    text: r.text,
    finish_reason: r.finishReason,
    duration_ms: Math.round(performance.now() - started),
    ...usage,
    cost_usd,
  }, { turn, text: r.text.slice(0, 200), tool_calls: names, finish_reason: r.finishReason, usage, cost_usd });
  if (o.debug) {
    console.error(
      `[agent ${run.id}] turn ${turn} model=${run.model} tokens in=${usage.input_tokens} out=${usage.output_tokens}` +
        ` cached=${usage.cached_tokens} tools=${names.join(",") || "-"}`,
    );
  }
  return { messages: out, text: r.text, input: usage.input_tokens, cost: cost_usd ?? 0 };
}

/** One tool call of a turn, with its checkpointed row when an earlier attempt got that far. */
interface ToolCallInput {
  runId: string;
  turn: number;
  position: number;
  call: Call;
  done: ToolCallRow | undefined;
  tools: Map<string, LoopTool>;
  span?: Span;
}

/** Runs one tool call (or takes its checkpointed result) and returns what the model is shown. */
async function runTool(
  { runId, turn, position, call, done, tools, span }: ToolCallInput,
  o: LoopOptions,
): Promise<string> {
  if (done && done.status !== "running") return done.output ?? "";
  await o.ledger.toolStarted({
    run_id: runId,
    call_id: call.id,
    turn,
    position,
    name: call.name,
    arguments: JSON.stringify(call.input ?? {}),
    server: tools.get(call.name)?.server,
  });
  const started = performance.now();
  let text: string;
  let error: string | undefined;
  try {
    const t = tools.get(call.name);
    if (!t) {
      throw new Error(`no tool named ${call.name}; the tools are ${[...tools.keys()].join(", ") || "none"}`);
    }
    const input = checkToolInput(call.input, t.inputSchema);
    if ("problem" in input) throw new Error(input.problem);
    await o.durable?.();
    text = await t.run(input.value, o.signal, call.id);
  } catch (err) {
    // An abort ends the run (the call stays `running`, so a resume runs it again), and so does a RunFailure;
    // anything else is the model's to handle.
    if (o.signal.aborted || err instanceof RunFailure) throw err;
    error = errorMessage(err) || String(err);
    text = JSON.stringify({ error });
  }
  const cut = cutToolOutput(text, o.maxToolOutput);
  await o.ledger.toolFinished(runId, call.id, {
    output: cut.text,
    output_bytes: cut.bytes,
    truncated: cut.truncated,
    error,
    duration_ms: Math.round(performance.now() - started),
  });
  recordToolCall(span, { output_bytes: cut.bytes, truncated: cut.truncated, error });
  return cut.text;
}

/**
 * The turn's messages as the loop runs them. For a call whose arguments are not JSON the SDK puts `{}` in
 * the message and answers it with a tool message of its own; the loop answers every call itself (checking
 * its arguments first and recording a refusal on the call), so that message goes and the call keeps the
 * text the model sent — checkpointed, a resume refuses it the same way.
 */
function withRawInvalidInputs(messages: ModelMessage[], content: readonly unknown[]): ModelMessage[] {
  const raw = new Map<string, unknown>();
  for (const part of content as { type: string; invalid?: boolean; toolCallId?: string; input?: unknown }[]) {
    if (part.type === "tool-call" && part.invalid) raw.set(part.toolCallId!, part.input);
  }
  return messages.filter((m) => m.role !== "tool").map((m) =>
    m.role !== "assistant" || typeof m.content === "string" ? m : {
      ...m,
      content: m.content.map((p) =>
        p.type === "tool-call" && raw.has(p.toolCallId) ? { ...p, input: raw.get(p.toolCallId) } : p
      ),
    }
  );
}

function toolCallsOf(messages: ModelMessage[]): Call[] {
  const calls: Call[] = [];
  for (const m of messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const part of m.content) {
      if (part.type === "tool-call") {
        calls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
      }
    }
  }
  return calls;
}

/** The answer as JSON: a model often fences it in ```json … ``` despite being told not to. */
function parseJson(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  return JSON.parse(fenced ? fenced[1] : text);
}

function outputProblemOf(text: string, schema: Record<string, unknown>): string | null {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    return `not JSON: ${errorMessage(err)}`;
  }
  return schemaViolation(schema, value);
}
