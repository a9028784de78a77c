/** Refusing work that needs sandboxes on a station without them, with the reason and its fix. */

import { StationError } from "../errors.ts";
import type { SandboxService } from "./service.ts";
import type { SandboxUnavailable } from "./start.ts";

/** A station's sandbox service, or why it has none. */
export interface SandboxAvailability {
  sandbox?: SandboxService;
  sandboxUnavailable?: SandboxUnavailable;
}

/** The 503 for work that needs sandboxes on a station without them: what, why, and the fix. */
export function sandboxUnavailable(ctx: SandboxAvailability, what: string): StationError {
  const why = ctx.sandboxUnavailable;
  return new StationError("sandbox_unavailable", `${what}${why ? `: ${why.message}` : ""}`, {
    status: 503,
    hint: why?.hint ?? "the Docker Engine was not reachable when stn started: start it, then restart stn",
  });
}

/** The station's sandbox service, or a 503 saying why there is none and how to fix it. */
export function requireSandbox(ctx: SandboxAvailability): SandboxService {
  if (ctx.sandbox) return ctx.sandbox;
  throw sandboxUnavailable(ctx, "sandboxes are not available on this station");
}
