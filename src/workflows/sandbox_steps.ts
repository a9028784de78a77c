/** Refusing a run with sandbox steps on a station without sandboxes (the workflows' side of sandbox/required.ts). */

import { type SandboxAvailability, sandboxUnavailable } from "../sandbox/required.ts";
import { stateTypes } from "./definition/graph.ts";
import type { WorkflowDefinition } from "./definition/schema.ts";

/**
 * Refuses to start a run with sandbox steps on a station without sandboxes: the caller gets the
 * reason and its fix (docker group, sandbox.enabled) at once, instead of a run that fails later.
 */
export function requireSandboxFor(ctx: SandboxAvailability, definition: WorkflowDefinition): void {
  if (ctx.sandbox || !stateTypes(definition).has("sandbox")) return;
  throw sandboxUnavailable(
    ctx,
    `workflow ${definition.id} has sandbox steps, but sandboxes are not available here`,
  );
}
