import { z } from "zod";
import { ContextSettings } from "../../contract/agent_definition.ts";
import { TaskQueue } from "../../contract/task_queue.ts";
import { cron, timezone } from "../../workflows/definition/schema.ts";
import { Concurrency, Priority } from "../../workflows/definition/flow_control.ts";
import { durationProblem, rule } from "../../lib/schema_rules.ts";

/**
 * The front matter of a `.prompt` file as written (docs/design/agents.md#prompt-files). Every mapping is
 * loose: a key stn does not know is kept and reported as a warning (unknownKeys), never an error, so
 * Station's files load as they are. Values of the keys stn knows are checked; `load.ts` turns the result into
 * an AgentDefinition.
 */

/** The short form `sandbox: python` names one of these runtimes. */
export const SANDBOX_RUNTIMES = ["python", "node", "bash", "linux"] as const;

const names = z.array(z.string().min(1)).nullish();

const Metadata = z.looseObject({
  name: z.string().optional(),
  description: z.string().optional(),
  tags: names,
  max_steps: z.int().positive().optional(),
});

const Input = z.looseObject({
  /** Picoschema or JSON Schema; converted and checked by the loader. */
  schema: z.unknown().optional(),
  default: z.record(z.string(), z.unknown()).optional(),
});

const Output = z.looseObject({
  format: z.enum(["json", "text"]).optional(),
  schema: z.unknown().optional(),
});

const SandboxLong = z.looseObject({
  mode: z.enum(["compute", "code"]).optional(),
  runtime: z.string().min(1).optional(),
  image: z.string().min(1).optional(),
  session: z.enum(["workflow", "agent"]).optional(),
  timeout_seconds: z.int().positive().optional(),
  allow_network: z.boolean().optional(),
  limits: z.record(z.string(), z.unknown()).optional(),
  pip_packages: z.array(z.string().min(1)).optional(),
});

/**
 * `sandbox: python` is `{runtime: python}`; any other string is an error naming the runtimes. Station's
 * `{mode: docker}` (its harness workspace container) runs as `mode: code`; load.ts warns what changes.
 */
const Sandbox = z.preprocess((v, ctx) => {
  if (typeof v === "object" && v !== null && (v as { mode?: unknown }).mode === "docker") {
    return { ...v, mode: "code" };
  }
  if (typeof v !== "string") return v;
  if ((SANDBOX_RUNTIMES as readonly string[]).includes(v)) return { runtime: v };
  ctx.issues.push({
    code: "custom",
    input: v,
    message: `unknown sandbox runtime ${JSON.stringify(v)}`,
    params: {
      code: "invalid_sandbox",
      hint: `write one of ${SANDBOX_RUNTIMES.join(", ")}, or a mapping such as {mode: code, image: …}`,
    },
  });
  return v;
}, SandboxLong);

const Schedule = z.looseObject({
  cron,
  timezone: timezone.optional(),
  enabled: z.boolean().optional(),
  task: z.string().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
});

const Timeout = z.string().check(rule((v: string) => durationProblem(v))).check(
  rule((v: string) =>
    /^0+(\.0+)?(ms|s|m|h|d)?$/.test(v.trim())
      ? { code: "invalid_duration", message: "the timeout must be longer than zero", hint: 'e.g. "15m"' }
      : undefined
  ),
);

/** The front matter schema. */
export const FrontMatter = z.looseObject({
  model: z.string().min(1).optional(),
  max_steps: z.int().positive().optional(),
  /** dotprompt's own `name` and `description`; `metadata.*` wins. */
  name: z.string().optional(),
  description: z.string().optional(),
  metadata: Metadata.optional(),
  tools: names,
  agents: names,
  input: Input.optional(),
  output: Output.optional(),
  /** Station's form: the output JSON Schema as a JSON string; it wins over `output.schema`. */
  output_schema: z.string().optional(),
  sandbox: Sandbox.optional(),
  schedule: Schedule.optional(),
  timeout: Timeout.optional(),
  /** stn's own: the run's context window (docs/agents.md#context-window). */
  context: ContextSettings.optional(),
  /** stn's own: the run's budget in USD (docs/agents.md#cost). */
  max_cost: z.number().positive().optional(),
  /** stn's own: runs started directly go to a `stn worker` serving this task queue (docs/workers.md). */
  queue: TaskQueue.optional(),
  /** stn's own: concurrency keys every run of the agent must fit (docs/agents.md#concurrency). */
  concurrency: Concurrency.optional(),
  /** stn's own: 0–9, how soon a waiting run is admitted (docs/agents.md#concurrency). */
  priority: Priority.optional(),
});
export type FrontMatter = z.infer<typeof FrontMatter>;

/** The keys each mapping knows, by its path (`""` is the top level). */
const KNOWN: Record<string, string[]> = {
  "": Object.keys(FrontMatter.shape),
  metadata: Object.keys(Metadata.shape),
  input: Object.keys(Input.shape),
  output: Object.keys(Output.shape),
  sandbox: Object.keys(SandboxLong.shape),
  schedule: Object.keys(Schedule.shape),
  context: Object.keys(ContextSettings.shape),
};

/** Keys of Station (the Go version) that stn does not implement; named as such in the warning. */
const STATION_ONLY = new Set([
  "app",
  "app_type",
  "cloudshipai",
  "harness",
  "harness_config",
  "coding",
  "notify",
  "lattice",
  "station",
  "npm_packages",
  "max_stdout_bytes",
  "preset",
]);

/** An unknown key: where it is and whether Station knew it. */
export interface UnknownKey {
  path: string[];
  key: string;
  known: string[];
  station: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every key of the front matter that stn does not use, with the keys its mapping knows. */
export function unknownKeys(value: Record<string, unknown>): UnknownKey[] {
  const found: UnknownKey[] = [];
  for (const [section, known] of Object.entries(KNOWN)) {
    const map = section === "" ? value : value[section];
    if (!isObj(map)) continue;
    // output: {type: object, properties: …} is Station's inline schema, not unknown keys.
    const inline = section === "output" && map.schema === undefined && ("type" in map || "properties" in map);
    for (const key of Object.keys(map)) {
      if (known.includes(key) || inline) continue;
      found.push({ path: section ? [section] : [], key, known, station: STATION_ONLY.has(key) });
    }
  }
  return found;
}
