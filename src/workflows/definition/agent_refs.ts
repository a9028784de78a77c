/** Checking `agent` steps against the agents that exist (at sync, when they are known). */

import { didYouMean } from "../../lib/did_you_mean.ts";
import { parseSource, pointerSegments, toPointer } from "./source.ts";
import type { ValidationIssue } from "./validate.ts";

/**
 * `agent` steps against the agents that exist. The validator alone cannot know them (a file is
 * validated offline, or sent to the API with no environment); sync can, having just synced the
 * environment's agents, so it adds these errors to a workflow file that is otherwise valid.
 */

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every `type: agent` step with its agent reference and its pointer, nested blocks included. */
function agentSteps(
  value: unknown,
  at: (string | number)[] = [],
): { ref: string; at: (string | number)[] }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => agentSteps(v, [...at, i]));
  if (!isObj(value)) return [];
  const own = value.type === "agent" && typeof value.agent === "string"
    ? [{ ref: value.agent, at: [...at, "agent"] }]
    : [];
  return [...own, ...Object.entries(value).flatMap(([k, v]) => agentSteps(v, [...at, k]))];
}

/**
 * Errors for agent steps naming an agent that does not exist: `name` in `environment`, or
 * `name@env`. `agentsOf` lists an environment's agents (undefined: unknown, not checked);
 * `invalidAgent` says why one whose file exists is not among them (its first problem).
 */
export function agentReferenceIssues(
  text: string,
  environment: string,
  agentsOf: (environment: string) => string[] | undefined,
  invalidAgent?: (environment: string, name: string) => string | undefined,
): ValidationIssue[] {
  const parsed = parseSource(text);
  if ("error" in parsed) return [];
  const issues: ValidationIssue[] = [];
  for (const step of agentSteps(parsed.value)) {
    const [name, env = environment] = step.ref.split("@");
    const names = agentsOf(env);
    if (!names || names.includes(name)) continue;
    const near = didYouMean(name, names);
    const path = toPointer(step.at);
    const pos = parsed.locate(pointerSegments(path), { value: true });
    const invalid = invalidAgent?.(env, name);
    issues.push({
      code: "unknown_agent",
      path,
      ...(pos ? { line: pos.line, column: pos.column } : {}),
      message: invalid !== undefined
        ? `agent \`${name}\` of environment \`${env}\`: file invalid: ${invalid}`
        : `no agent \`${name}\` in environment \`${env}\` (no file agents/${name}.prompt)`,
      hint: invalid !== undefined
        ? `fix it and run \`stn sync ${env}\`; \`stn agent validate --env ${env}\` lists every issue`
        : near
        ? `did you mean \`${near}\`?`
        : names.length
        ? `agents there: ${names.join(", ")}`
        : `add environments/${env}/agents/${name}.prompt and run \`stn sync ${env}\``,
    });
  }
  return issues;
}
