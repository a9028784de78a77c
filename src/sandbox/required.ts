/** Refusing work that needs sandboxes on a station without them, with the reason and its fix. */

import { StationError } from "../errors.ts";
import type { SandboxService } from "./service.ts";
import type { SandboxUnavailable } from "./start.ts";
import type { WorkflowDefinition } from "../workflows/definition/schema.ts";
import { stateTypes } from "../workflows/definition/graph.ts";

/** A station's sandbox service, or why it has none. */
export interface SandboxAvailability {
  sandbox?: SandboxService;
  sandboxUnavailable?: SandboxUnavailable;
}

function unavailable(ctx: SandboxAvailability, what: string): StationError {
  const why = ctx.sandboxUnavailable;
  return new StationError("sandbox_unavailable", `${what}${why ? `: ${why.message}` : ""}`, {
    status: 503,
    hint: why?.hint ?? "the Docker Engine was not reachable when stn started: start it, then restart stn",
  });
}

/** The station's sandbox service, or a 503 saying why there is none and how to fix it. */
export function requireSandbox(ctx: SandboxAvailability): SandboxService {
  if (ctx.sandbox) return ctx.sandbox;
  throw unavailable(ctx, "sandboxes are not available on this station");
}

/**
 * Refuses to start a run with sandbox steps on a station without sandboxes: the caller gets the
 * reason and its fix (docker group, sandbox.enabled) at once, instead of a run that fails later.
 */
export function requireSandboxFor(ctx: SandboxAvailability, definition: WorkflowDefinition): void {
  if (ctx.sandbox || !stateTypes(definition).has("sandbox")) return;
  throw unavailable(ctx, `workflow ${definition.id} has sandbox steps, but sandboxes are not available here`);
}
