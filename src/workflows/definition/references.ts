/** Checking a definition's references to the station — agents of agent steps, images of sandbox steps. */

import type { Config } from "../../config/schema.ts";
import { StationError } from "../../errors.ts";
import { chooseImage } from "../../sandbox/images.ts";
import { agentReferenceIssues } from "./agent_refs.ts";
import { blocks } from "./graph.ts";
import type { WorkflowDefinition } from "./schema.ts";
import type { ValidationIssue } from "./validate.ts";

/** What the references are checked against: the environment's agents and the sandbox config. */
export interface StationReferences {
  /** The environment an agent step without `@env` names. */
  environment: string;
  /** The agents of an environment (undefined: not known here, not checked). */
  agentsOf(environment: string): string[] | undefined;
  /** Why an agent missing from `agentsOf` is not there when its file exists but is invalid (else undefined). */
  invalidAgent?(environment: string, name: string): string | undefined;
  /** sandbox.images, allowed_images and default_runtime (undefined: not checked). */
  sandbox?: Config["sandbox"];
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every state with its JSON pointer, nested blocks included. */
function statesOf(states: unknown, path: string): { state: Record<string, unknown>; path: string }[] {
  if (!Array.isArray(states)) return [];
  return states.flatMap((s, i) => {
    if (!isObj(s)) return [];
    const at = `${path}/${i}`;
    return [
      { state: s, path: at },
      ...blocks(s, at).flatMap((b) => statesOf(b.block.states, `${b.path}/states`)),
    ];
  });
}

/** Sandbox steps whose runtime is unknown or whose image the config does not allow. */
export function imageIssues(def: WorkflowDefinition, sandbox: Config["sandbox"]): ValidationIssue[] {
  return statesOf(def.states, "/states").filter(({ state }) => state.type === "sandbox").flatMap(
    ({ state, path }) => {
      try {
        chooseImage(sandbox, {
          runtime: typeof state.runtime === "string" ? state.runtime : undefined,
          image: typeof state.image === "string" ? state.image : undefined,
        });
        return [];
      } catch (err) {
        if (!(err instanceof StationError)) throw err;
        const field = err.code === "image_not_allowed" ? "image" : "runtime";
        return [{ code: err.code, path: `${path}/${field}`, message: err.message, hint: err.hint }];
      }
    },
  );
}

/** Every reference of a valid definition the station cannot satisfy: unknown agents, images not allowed. */
export function referenceIssues(def: WorkflowDefinition, refs: StationReferences): ValidationIssue[] {
  return [
    ...agentReferenceIssues(JSON.stringify(def), refs.environment, refs.agentsOf, refs.invalidAgent),
    ...(refs.sandbox ? imageIssues(def, refs.sandbox) : []),
  ];
}

/** The error code a run start answers for a reference issue (the run would fail with the same). */
const START_CODES: Record<string, "agent_not_found" | "image_not_allowed" | "unknown_runtime"> = {
  unknown_agent: "agent_not_found",
  image_not_allowed: "image_not_allowed",
  unknown_runtime: "unknown_runtime",
};

/**
 * Refuses to start a run whose definition names an agent that does not exist or an image that is not
 * allowed: the caller gets the name and the fix at once, instead of a run that fails after its retries.
 */
export function requireReferences(def: WorkflowDefinition, refs: StationReferences): void {
  const issues = referenceIssues(def, refs);
  if (issues.length === 0) return;
  const first = issues[0];
  throw new StationError(
    START_CODES[first.code] ?? "invalid_definition",
    `workflow ${def.id}: ${first.message}`,
    {
      hint: first.hint,
      details: { errors: issues },
    },
  );
}
