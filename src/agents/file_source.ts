import { createHash } from "node:crypto";
import { join } from "node:path";
import { Dotprompt } from "dotprompt";
import { parseDuration } from "../lib/duration.ts";
import { type AgentDefinition, AgentSandboxSchema, AgentScheduleSchema } from "./types.ts";
import type { AgentSource } from "./service.ts";

const dotprompt = new Dotprompt();
const NAME = /^[A-Za-z0-9][A-Za-z0-9_. -]*$/;

/**
 * An AgentSource reading `environments/<env>/agents/<name>.prompt` as it is on disk, for the fields
 * the loop needs. The runtime uses it until the agents table (`stn sync`, with full validation) is
 * wired in as the source; a file that does not parse is simply not an agent here.
 */
export function fileAgentSource(
  environmentsDir: string,
  defaults: { maxSteps: number; timeoutMs: number },
): AgentSource {
  return (environment, name) => {
    if (!NAME.test(name) || !NAME.test(environment)) return undefined;
    const path = join(environmentsDir, environment, "agents", `${name}.prompt`);
    let source: string;
    try {
      source = Deno.readTextFileSync(path);
    } catch {
      return undefined;
    }
    const raw = (dotprompt.parse(source).raw ?? {}) as Record<string, any>;
    const meta = (raw.metadata ?? {}) as Record<string, any>;
    const sandbox = typeof raw.sandbox === "string" ? { runtime: raw.sandbox } : raw.sandbox;
    const output = raw.output_schema
      ? JSON.parse(String(raw.output_schema))
      : raw.output?.schema?.type
      ? raw.output.schema
      : undefined;
    return {
      name,
      environment,
      path,
      checksum: createHash("sha256").update(source).digest("hex"),
      model: typeof raw.model === "string" ? raw.model : undefined,
      max_steps: Number(raw.max_steps ?? meta.max_steps ?? defaults.maxSteps),
      description: String(meta.description ?? ""),
      tags: Array.isArray(meta.tags) ? meta.tags.map(String) : [],
      tools: Array.isArray(raw.tools) ? raw.tools.map(String) : [],
      agents: Array.isArray(raw.agents) ? raw.agents.map(String) : [],
      input_schema: raw.input?.schema?.type ? raw.input.schema : undefined,
      output_schema: output,
      sandbox: sandbox ? AgentSandboxSchema.parse(sandbox) : undefined,
      schedule: raw.schedule ? AgentScheduleSchema.parse(raw.schedule) : undefined,
      timeout_ms: (raw.timeout !== undefined ? parseDuration(raw.timeout) : null) ?? defaults.timeoutMs,
      source,
      extra: {},
    } satisfies AgentDefinition;
  };
}
