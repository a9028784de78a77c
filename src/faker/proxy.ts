/**
 * The faker's MCP catalog (docs/faker.md): the real server's tools (or a tools file's), each call forwarded
 * to the real server and answered with its answer (passthrough) or with generated data of the same shape,
 * and recorded in the session.
 */

import type { ResolvedModel } from "../agents/providers.ts";
import { checkToolInput } from "../agents/tool_input.ts";
import { errorMessage } from "../errors.ts";
import type { McpConnection, McpToolResult } from "../mcp/client/mod.ts";
import type { McpCatalog } from "../mcp/server/mod.ts";
import type { McpToolSpec } from "../mcp/server/tool.ts";
import { VERSION } from "../version.ts";
import { generateAnswer, type Generated } from "./generate.ts";
import type { FakerCall, FakerResult, FakerTool, SessionRecorder } from "./session.ts";
import { answerShape, resultOf, resultText } from "./shape.ts";

/** What a faker serves with. */
export interface FakerSetup {
  /** The real server (not in standalone mode). */
  connection?: McpConnection;
  /** The model of generated answers (not in passthrough mode). */
  model?: ResolvedModel;
  instruction?: string;
  recorder: SessionRecorder;
  /** Each tool's title and annotations as the real server listed them. */
  listing?: Map<string, Listing>;
}

/** What tools/list says of a real tool besides the session's record of it. */
export type Listing = Pick<McpToolSpec, "title" | "annotations">;

/** A real server's result as a session keeps it. */
export function fromMcp(r: McpToolResult): FakerResult {
  return {
    content: r.content,
    ...(r.structuredContent && { structured_content: r.structuredContent }),
    ...(r.isError && { is_error: true }),
  };
}

/** A session's result as MCP sends it. */
export function toMcp(r: FakerResult): Record<string, unknown> & { content: Record<string, unknown>[] } {
  return {
    content: r.content,
    ...(r.structured_content && { structuredContent: r.structured_content }),
    ...(r.is_error && { isError: true }),
  };
}

const errorResult = (message: string): FakerResult => ({
  content: [{ type: "text", text: message }],
  is_error: true,
});

/** The catalog of a running faker: the session's tools, each answering and recording as the mode says. */
export function fakerCatalog(setup: FakerSetup): McpCatalog {
  const session = setup.recorder.session;
  const modeText = {
    passthrough: "passes every call to the real server and its answer back unchanged",
    ai: "calls the real server and answers with generated data of the same shape",
    standalone: "answers every call with generated data; no real server is called",
  }[session.mode];
  const specs = session.tools.map((tool): McpToolSpec => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema,
    ...(tool.output_schema && { outputSchema: tool.output_schema }),
    ...setup.listing?.get(tool.name),
    rawResult: true,
    call: async (args, signal) => toMcp(await answer(setup, tool, args, signal)),
  }));
  return {
    name: session.name,
    version: VERSION,
    instructions: `stn faker (session ${session.id}): ${modeText}.`,
    tools: () => specs,
  };
}

/** One call: the real answer when there is a server, then generated data unless passing through; recorded. */
async function answer(
  setup: FakerSetup,
  tool: FakerTool,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<FakerResult> {
  const session = setup.recorder.session;
  const at = new Date().toISOString();
  const started = performance.now();
  let real: FakerResult | undefined;
  let realError: string | undefined;
  if (setup.connection) {
    try {
      real = fromMcp(await setup.connection.callToolResult(tool.name, args, { signal }));
    } catch (err) {
      realError = errorMessage(err);
    }
  } else {
    const checked = checkToolInput(args, tool.input_schema);
    if ("problem" in checked) realError = `${tool.name}: ${checked.problem}`;
  }
  const done = (call: Omit<FakerCall, "seq" | "tool" | "args" | "at" | "duration_ms">) =>
    setup.recorder.record({
      tool: tool.name,
      args,
      at,
      duration_ms: Math.round(performance.now() - started),
      ...call,
    }).then(() => call.answer);

  if (session.mode === "passthrough" || (!setup.connection && realError)) {
    // A standalone call its input schema refuses is a tool error, as a real server's would be.
    if (real) return done({ source: "real", answer: real });
    return done({
      source: setup.connection ? "real" : "refused",
      answer: errorResult(realError!),
      real_error: realError,
    });
  }
  const shape = answerShape(tool, real);
  let generated: Generated;
  try {
    generated = await generateAnswer(setup.model!, {
      tool,
      args,
      shape,
      instruction: setup.instruction,
      history: session.calls,
      // A real answer that is an error tells the model as much as a failed call.
      realError: realError ?? (real?.is_error ? resultText(real) || "an error without a message" : undefined),
      signal,
    });
  } catch (err) {
    return done({
      source: "generated",
      answer: errorResult(errorMessage(err)),
      ...(real && { real }),
      ...(realError && { real_error: realError }),
    });
  }
  return done({
    source: "generated",
    answer: resultOf(shape, generated.value),
    ...(real && { real }),
    ...(realError && { real_error: realError }),
    model: generated.model,
    input_tokens: generated.input_tokens,
    output_tokens: generated.output_tokens,
  });
}
