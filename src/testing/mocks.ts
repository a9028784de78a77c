/** Tool doubles of a test case: `mocks:` (result, expr, error, sequence), recorded results, live calls. */

import { z } from "zod";
import { RunFailure } from "../agents/loop.ts";
import type { LoopTool } from "../agents/loop_io.ts";
import { evaluate, parseCheck } from "../workflows/expr.ts";
import type { RunIdentity, ToolDoubles } from "../agents/doubles.ts";
import type { CassetteReplay } from "./replay.ts";

/** One answer of a mocked tool. */
export const ToolAnswerSchema = z.union([
  z.strictObject({
    result: z.unknown().describe("the tool's output: a string as it is, anything else as JSON"),
  }),
  z.strictObject({
    expr: z.string().check((ctx) => {
      const problem = parseCheck(ctx.value);
      if (problem) ctx.issues.push({ code: "custom", message: problem.message, input: ctx.value });
    }).describe(
      "JSONata over the call: `$` and `$args` are its arguments; the value is the output (as JSON)",
    ),
  }),
  z.strictObject({ error: z.string().describe("the tool fails with this message (the model sees it)") }),
]);
export type ToolAnswer = z.infer<typeof ToolAnswerSchema>;

/** A mocked tool: one answer for every call, or a `sequence` answered in order (the last one repeats). */
export const ToolMockSchema = z.union([
  ToolAnswerSchema,
  z.strictObject({ sequence: z.array(ToolAnswerSchema).min(1) }),
]);
export type ToolMock = z.infer<typeof ToolMockSchema>;

/** `mocks:` of a test case: by tool name (`__get_weather`, or `get_weather` for the MCP tool `__get_weather`). */
export const ToolMocksSchema = z.record(z.string(), ToolMockSchema);
export type ToolMocks = z.infer<typeof ToolMocksSchema>;

/** What a test case's tool calls are answered from. */
export interface CaseToolsOptions {
  mocks?: ToolMocks;
  /** The cassette being replayed: its recorded results answer calls no mock answers. */
  replay?: CassetteReplay;
  /** `tools: live`: a call neither mocked nor recorded goes to the real tool. */
  live?: boolean;
}

/**
 * The tool doubles of one test case. A call is answered by its mock, else by the cassette's next recorded
 * call of that tool in the same run, else — for sandbox tools, or with `tools: live` — by the real tool;
 * an MCP tool call nothing answers fails the run with `tool_not_mocked`, naming the tool. A sequence's
 * position is shared by every run of the case.
 */
export class CaseTools implements ToolDoubles {
  #o: CaseToolsOptions;
  #calls = new Map<string, number>();

  constructor(o: CaseToolsOptions) {
    this.#o = o;
  }

  tool(run: RunIdentity, t: LoopTool, external: boolean): LoopTool {
    return {
      ...t,
      run: async (args, signal, callId) => {
        const mocked = this.#mockOf(t.name);
        if (mocked) return await this.#answer(mocked, args);
        const recorded = this.#o.replay?.toolAnswer(run, t.name);
        if (recorded) {
          if (recorded.error !== undefined) throw new Error(recorded.error);
          return recorded.output ?? "";
        }
        if (!external || this.#o.live) return await t.run(args, signal, callId);
        throw new RunFailure(
          "tool_not_mocked",
          `agent ${run.agent} called tool ${t.name}, which is neither mocked nor recorded`,
          {
            hint:
              `mock it (mocks: {${t.name}: {result: …}}), re-record the cassette, or let the case call it: tools: live`,
            details: { tool: t.name, args },
          },
        );
      },
    };
  }

  #mockOf(name: string): { key: string; mock: ToolMock } | undefined {
    const mocks = this.#o.mocks ?? {};
    const key = Object.hasOwn(mocks, name)
      ? name
      : name.startsWith("__") && Object.hasOwn(mocks, name.slice(2))
      ? name.slice(2)
      : undefined;
    return key === undefined ? undefined : { key, mock: mocks[key] };
  }

  async #answer({ key, mock }: { key: string; mock: ToolMock }, args: unknown): Promise<string> {
    let answer: ToolAnswer;
    if ("sequence" in mock) {
      const n = this.#calls.get(key) ?? 0;
      this.#calls.set(key, n + 1);
      answer = mock.sequence[Math.min(n, mock.sequence.length - 1)];
    } else answer = mock;
    if ("error" in answer) throw new Error(answer.error);
    const value = "expr" in answer ? await evaluate(answer.expr, args, { args }) : answer.result;
    return typeof value === "string" ? value : JSON.stringify(value ?? null);
  }
}
