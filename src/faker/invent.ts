/**
 * Tools a model invents (docs/faker.md#standalone): Station's `--standalone --faker-id ID --ai-instruction …`.
 * The model designs the tools once; they are kept as a tools file, `$STATION_HOME/faker/tools/<ID>.yaml`, which
 * every later run with that id serves as it is (edit it to change them, delete it to have them invented again).
 */

import { join } from "node:path";
import { generateText, type ModelMessage } from "ai";
import { stringify } from "yaml";
import type { ResolvedModel } from "../agents/providers.ts";
import { errorMessage, StationError } from "../errors.ts";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../lib/private_files.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { withoutFences } from "./generate.ts";
import type { FakerTool } from "./session.ts";
import { parseToolsFile, ToolsFile } from "./tools_file.ts";

const SYSTEM =
  "You design the tools of an MCP server that AI agents will call. Answer with JSON only, no prose, " +
  'no code fences: {"tools": {"<tool_name>": {"description": "…", "input_schema": <JSON Schema of the ' +
  'arguments, type object>, "output_schema": <JSON Schema of the structured answer, type object>}}}. ' +
  "Name tools in snake_case, as a real API of that kind would have them; give between 3 and 12 tools.";

/** Where the tools of a faker id are kept. */
export function inventedToolsPath(home: string, fakerId: string): string {
  return join(home, "faker", "tools", `${fakerId}.yaml`);
}

/** The tools of a faker id: its kept tools file, else tools the model invents from the instruction (then kept). */
export async function inventedTools(
  model: ResolvedModel,
  o: { home: string; fakerId: string; instruction: string },
): Promise<{ name: string; tools: FakerTool[]; file: string }> {
  const file = inventedToolsPath(o.home, o.fakerId);
  let kept: string | undefined;
  try {
    kept = await Deno.readTextFile(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (kept !== undefined) return { ...parseToolsFile(kept, file), file };

  const messages: ModelMessage[] = [{ role: "user", content: `The server's purpose:\n${o.instruction}` }];
  let problem = "";
  for (let attempt = 0; attempt < 2; attempt++) {
    let text: string;
    try {
      text = (await generateText({ model: model.model, system: SYSTEM, messages })).text;
    } catch (err) {
      throw new StationError(
        "faker_generation_failed",
        `inventing tools with ${model.id} failed: ${errorMessage(err)}`,
        {
          status: 502,
          hint: "check ai.* in config.yaml (or --ai-model) and that the provider answers",
        },
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(withoutFences(text));
    } catch (err) {
      value = err;
    }
    const checked = value instanceof Error
      ? undefined
      : ToolsFile.safeParse({ name: o.fakerId, ...(value as object) });
    if (checked?.success) {
      const body = stringify({ name: o.fakerId, tools: checked.data.tools }, { lineWidth: 0 });
      makePrivateDir(join(o.home, "faker", "tools"));
      await writeFileAtomic(
        file,
        `# Tools ${model.id} invented for stn faker --faker-id ${o.fakerId}; every run with that id serves them.\n` +
          `# Edit them freely; delete this file to have them invented again.\n${body}`,
        { mode: PRIVATE_FILE_MODE },
      );
      return { ...parseToolsFile(await Deno.readTextFile(file), file), file };
    }
    problem = value instanceof Error
      ? `the answer is not JSON (${errorMessage(value)})`
      : checked!.error.issues.map((i) =>
        `${i.path.join(".") || "(top)"}: ${
          i.code === "invalid_key" ? i.issues[0]?.message ?? i.message : i.message
        }`
      ).join("; ");
    messages.push(
      { role: "assistant", content: text },
      { role: "user", content: `${problem}. Answer again with JSON only, in the form asked.` },
    );
  }
  throw new StationError("faker_generation_failed", `${model.id} did not design usable tools: ${problem}`, {
    status: 502,
    hint:
      "try another model (--ai-model), a clearer --ai-instruction, or write the tools yourself (--tools FILE)",
  });
}
