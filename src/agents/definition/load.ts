import { createHash } from "node:crypto";
import { basename } from "node:path";
import { picoschema } from "dotprompt";
import type { z } from "zod";
import { didYouMean } from "../../lib/did_you_mean.ts";
import { parseDuration } from "../../lib/duration.ts";
import { parseSource, pointerSegments, toPointer } from "../../workflows/definition/source.ts";
import type { ValidationIssue } from "../../workflows/definition/validate.ts";
import { schemaProblem } from "../../workflows/json_schema.ts";
import type { IssueParams } from "../../lib/schema_rules.ts";
import {
  type AgentDefinition,
  AgentDefinitionSchema,
  AgentSandboxSchema,
  AgentScheduleSchema,
} from "../types.ts";
import { FrontMatter, unknownKeys } from "./schema.ts";
import { checkTemplate, splitSource } from "./source.ts";
import { errorMessage } from "../../errors.ts";

/**
 * One `.prompt` file → an AgentDefinition, or the issues that stop it (docs/design/agents.md#prompt-files).
 * Issues carry the file's line and column: the front matter is parsed with positions and shifted by the
 * opening `---`, the body's Handlebars errors by where the body starts.
 */

/** The `.prompt` file extension; the agent's name is the file name without it. */
export const PROMPT_FILE = /\.prompt$/;
/** `timeout` when the file sets none. */
export const DEFAULT_TIMEOUT_MS = 15 * 60_000;
/** `max_steps` when neither the file nor config sets one (the Go version's default). */
export const DEFAULT_MAX_STEPS = 5;
const FIELDS_HINT = "docs/agents.md lists every front matter field";

/** The agent name a file implies. */
export function agentNameFromFile(path: string): string {
  return basename(path).replace(PROMPT_FILE, "");
}

export interface ParseOptions {
  environment: string;
  /** Absolute path, for the definition and messages; the name comes from it. */
  path: string;
  /** `agents.default_max_steps` from config, when set. */
  defaultMaxSteps?: number;
}

/** A parsed file: its issues so far, its definition when it has no errors, and a way to place new issues. */
export interface ParsedAgent {
  name: string;
  path: string;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  definition?: AgentDefinition;
  /** `tools` and `agents` as written, so an issue about an entry points at it. */
  lists: { tools: string[]; agents: string[] };
  /** The line/column of a JSON pointer into the front matter (its key, or with `value` its value). */
  place(pointer: string, value?: boolean): Pick<ValidationIssue, "line" | "column">;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** How a YAML value's kind is named in messages. */
const KINDS: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "text",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
};
const kindOf = (v: unknown) =>
  Array.isArray(v) ? KINDS.array : v === null ? "empty" : KINDS[typeof v] ?? typeof v;

/** zod's issue as a finding (codes from `rule` checks, else missing/invalid). */
function zodIssue(issue: z.core.$ZodIssue): Omit<ValidationIssue, "line" | "column"> {
  const params = (issue as { params?: IssueParams }).params;
  const path = toPointer(issue.path as (string | number)[]);
  const field = String(issue.path.at(-1) ?? "front matter");
  if (params) return { code: params.code, path, message: issue.message, hint: params.hint ?? FIELDS_HINT };
  if (issue.code === "invalid_type" && issue.input === undefined) {
    return { code: "missing_field", path, message: `\`${field}\` is required`, hint: FIELDS_HINT };
  }
  if (issue.code === "invalid_type") {
    const message = `\`${field}\` must be ${KINDS[issue.expected] ?? issue.expected}, not ${
      kindOf(issue.input)
    }`;
    return { code: "invalid_value", path, message, hint: FIELDS_HINT };
  }
  if (issue.code === "too_small" && issue.origin === "number") {
    const message = `\`${field}\` must be at least ${
      issue.inclusive ? issue.minimum : Number(issue.minimum) + 1
    }`;
    return { code: "invalid_value", path, message, hint: FIELDS_HINT };
  }
  if (issue.code === "invalid_value") {
    const allowed = issue.values.map(String);
    const near = typeof issue.input === "string" ? didYouMean(issue.input, allowed) : undefined;
    return {
      code: "invalid_value",
      path,
      message: `\`${field}\` is ${JSON.stringify(issue.input)}, not one of ${allowed.join(", ")}`,
      hint: near ? `did you mean \`${near}\`?` : FIELDS_HINT,
    };
  }
  return { code: "invalid_value", path, message: `\`${field}\`: ${issue.message}`, hint: FIELDS_HINT };
}

/** A Picoschema or JSON Schema value as JSON Schema, or the problem with it. */
async function toJsonSchema(
  value: unknown,
  pointer: string,
): Promise<{ schema?: Record<string, unknown>; issue?: Omit<ValidationIssue, "line" | "column"> }> {
  let schema: unknown;
  try {
    // picoschema mutates enums it makes nullable; the JSON round trip drops its `required: undefined`.
    schema = JSON.parse(JSON.stringify(await picoschema(structuredClone(value)) ?? null));
  } catch (err) {
    return {
      issue: {
        code: "invalid_schema",
        path: pointer,
        message: errorMessage(err),
        hint: "Picoschema: `field: type, description` with types string, number, integer, boolean, any, " +
          "`field(array): type`, `field(object): {…}`, `field?` for optional; or a JSON Schema with `type`",
      },
    };
  }
  if (!isObj(schema)) {
    return {
      issue: {
        code: "invalid_schema",
        path: pointer,
        message: "the schema must be a mapping",
        hint: FIELDS_HINT,
      },
    };
  }
  const problem = schemaProblem(schema);
  if (problem) {
    return {
      issue: {
        code: problem.code,
        path: toPointer([...pointerSegments(pointer), ...(problem.at ?? [])]),
        message: problem.message,
        hint: problem.hint,
      },
    };
  }
  return { schema };
}

/** The output schema: `output_schema` (a JSON string) wins over `output.schema` or an inline one. */
async function outputSchema(fm: FrontMatter, raw: Record<string, unknown>) {
  if (fm.output_schema !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fm.output_schema);
    } catch (err) {
      return {
        issue: {
          code: "invalid_schema",
          path: "/output_schema",
          message: `output_schema is not valid JSON: ${errorMessage(err)}`,
          hint:
            "output_schema is a JSON Schema written as a JSON string; or use `output: {format: json, schema: …}`",
        },
      };
    }
    return await toJsonSchema(parsed, "/output_schema");
  }
  const output = raw.output;
  if (!isObj(output)) return {};
  if (output.schema !== undefined) return await toJsonSchema(output.schema, "/output/schema");
  if ("type" in output || "properties" in output) {
    const { format: _f, ...inline } = output;
    return await toJsonSchema(inline, "/output");
  }
  return {};
}

type Unplaced = Omit<ValidationIssue, "line" | "column">;

/** Warnings about keys stn does not read (reported even when the file has errors). */
function unknownKeyNotes(raw: Record<string, unknown>): Unplaced[] {
  return unknownKeys(raw).map((u) => {
    const near = u.station ? undefined : didYouMean(u.key, u.known);
    return {
      code: "unknown_field",
      path: toPointer([...u.path, u.key]),
      message: u.station
        ? `\`${u.key}\` is a Station feature stn does not implement: kept, ignored`
        : `unknown field \`${u.key}\`: kept, ignored`,
      hint: u.station
        ? "Station's files keep working in stn; docs/agents.md lists what stn reads"
        : near
        ? `did you mean \`${near}\`?`
        : `known here: ${u.known.join(", ")}`,
    };
  });
}

/** Warnings about what the file says that stn reads differently. */
function notes(fm: FrontMatter, raw: Record<string, unknown>): Unplaced[] {
  const found: Unplaced[] = [];
  if (fm.model && !fm.model.includes("/")) {
    found.push({
      code: "model_without_provider",
      path: "/model",
      message: `model \`${fm.model}\` names no provider: the configured ai.provider serves it`,
      hint: `write \`provider/name\`, e.g. \`openai/${fm.model}\``,
    });
  }
  (fm.tools ?? []).forEach((t, i) => {
    if (t.startsWith("__agent_") || t.startsWith("mcp__station__agent__")) {
      found.push({
        code: "child_agent_in_tools",
        path: `/tools/${i}`,
        message: `\`${t}\` is a child agent's tool: ignored here`,
        hint: "list child agents by name under `agents:`",
      });
    } else if (!t.startsWith("__")) {
      found.push({
        code: "tool_name_form",
        path: `/tools/${i}`,
        message: `\`${t}\` is not an MCP tool's exposed name (\`__<tool>\`)`,
        hint:
          `write \`__${t}\` for the server's tool \`${t}\`; sandbox tools come from \`sandbox:\`, not \`tools:\``,
      });
    }
  });
  if (isObj(raw.sandbox) && raw.sandbox.mode === "docker") {
    found.push({
      code: "station_docker_sandbox",
      path: "/sandbox/mode",
      message: "`sandbox.mode: docker` is Station's harness container: stn runs the agent with a code-mode " +
        "sandbox instead (the sandbox_* session tools in a Docker container of `image`, one per agent run, " +
        "no network unless `allow_network: true`); Station's `workspace`, `resources`, `network` and " +
        "`harness` settings are not carried over",
      hint: "write `sandbox: {mode: code, image: …}` (docs/agents.md#front-matter)",
    });
  }
  if (fm.queue !== undefined && (fm.agents ?? []).length > 0) {
    found.push({
      code: "queue_with_child_agents",
      path: "/queue",
      message:
        "an agent with child agents runs on the station (its children run inside it): `queue` is not used",
      hint: "remove `queue`, or `agents` (docs/workers.md#agent-runs-on-a-queue)",
    });
  }
  if (fm.output_schema !== undefined && isObj(raw.output) && raw.output.schema !== undefined) {
    found.push({
      code: "output_schema_twice",
      path: "/output/schema",
      message: "both `output.schema` and `output_schema` are set: `output_schema` is used",
      hint: "keep one of them",
    });
  }
  return found;
}

/** Document order. */
const byPosition = (a: ValidationIssue, b: ValidationIssue) =>
  (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);

/** Parses and checks one `.prompt` file's text (references to tools and other agents are checked by the caller). */
export async function parseAgent(text: string, options: ParseOptions): Promise<ParsedAgent> {
  const name = agentNameFromFile(options.path);
  const agent: ParsedAgent = {
    name,
    path: options.path,
    errors: [],
    warnings: [],
    lists: { tools: [], agents: [] },
    place: () => ({}),
  };
  const split = splitSource(text);
  if ("code" in split) {
    agent.errors.push(split);
    return agent;
  }
  const parsed = parseSource(split.frontMatter || "{}");
  if ("error" in parsed) {
    const pos = parsed.error.position;
    agent.errors.push({
      code: parsed.error.code ?? "parse_error",
      path: "/",
      ...(pos ? { line: pos.line + split.frontMatterLine, column: pos.column } : {}),
      message: `the front matter is not valid YAML: ${parsed.error.message}`,
      hint: parsed.error.hint ?? "check the indentation and quoting at that line (a tab, an unclosed quote)",
    });
    return agent;
  }
  agent.place = (pointer, value) => {
    const pos = parsed.locate(pointerSegments(pointer), { value });
    return pos ? { line: pos.line + split.frontMatterLine, column: pos.column } : {};
  };
  const at = (i: Omit<ValidationIssue, "line" | "column">, value = false): ValidationIssue => ({
    ...i,
    ...(i.path === "/body" ? {} : agent.place(i.path, value)),
  });
  const raw = parsed.value ?? {};
  if (!isObj(raw)) {
    agent.errors.push(at({
      code: "invalid_front_matter",
      path: "/",
      message: "the front matter must be a mapping of fields",
      hint: "write `model: openai/gpt-4o-mini`-style `key: value` lines between the `---` lines",
    }));
    return agent;
  }
  const result = FrontMatter.safeParse(raw, { reportInput: true });
  agent.warnings.push(...unknownKeyNotes(raw).map((n) => at(n)).sort(byPosition));
  if (!result.success) agent.errors.push(...result.error.issues.map((i) => at(zodIssue(i), true)));
  agent.errors.push(...await checkTemplate(split.body, split.bodyLine));
  agent.errors.sort(byPosition);
  if (!result.success) return agent;
  const fm = result.data;
  agent.lists = { tools: fm.tools ?? [], agents: fm.agents ?? [] };
  agent.warnings.push(...notes(fm, raw).map((n) => at(n)));
  agent.warnings.sort(byPosition);

  const input = fm.input?.schema === undefined ? {} : await toJsonSchema(fm.input.schema, "/input/schema");
  const output = await outputSchema(fm, raw);
  for (const r of [input, output]) if (r.issue) agent.errors.push(at(r.issue));
  if (agent.errors.length) return agent;

  const known = new Set(Object.keys(FrontMatter.shape));
  const extra = Object.fromEntries(Object.entries(raw).filter(([k]) => !known.has(k)));
  const sandbox = fm.sandbox &&
    AgentSandboxSchema.parse(
      Object.fromEntries(Object.entries(fm.sandbox).filter(([k]) => k in AgentSandboxSchema.shape)),
    );
  agent.definition = AgentDefinitionSchema.parse({
    name,
    environment: options.environment,
    path: options.path,
    checksum: createHash("sha256").update(text).digest("hex"),
    model: fm.model,
    max_steps: fm.max_steps ?? fm.metadata?.max_steps ?? options.defaultMaxSteps ?? DEFAULT_MAX_STEPS,
    description: fm.metadata?.description ?? fm.description ?? "",
    tags: fm.metadata?.tags ?? [],
    tools: (fm.tools ?? []).filter((t) =>
      !t.startsWith("__agent_") && !t.startsWith("mcp__station__agent__")
    ),
    agents: [...new Set(fm.agents ?? [])],
    input_schema: input.schema,
    output_schema: output.schema,
    sandbox,
    schedule: fm.schedule && AgentScheduleSchema.parse(fm.schedule),
    timeout_ms: fm.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(fm.timeout),
    context: fm.context,
    max_cost: fm.max_cost,
    queue: fm.queue,
    concurrency: fm.concurrency,
    priority: fm.priority,
    source: text,
    extra,
  });
  return agent;
}
