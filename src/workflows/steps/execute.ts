import { errorMessage, StationError } from "../../errors.ts";
import type { State } from "./registry.ts";
import { executorFor } from "./registry.ts";
import type { ExecutorContext, Outcome, Scope } from "./types.ts";

/**
 * Runs a state's executor under its timeout and `ctx.signal` (the run's cancel, a shutdown), wherever
 * it runs: the station's consumer or a `stn worker`. Never throws: an error, the timeout or an abort
 * is a `failed` outcome with the reason's code.
 */
export async function executeStep(
  state: State,
  scope: Scope,
  ctx: ExecutorContext,
  timeoutMs: number,
): Promise<Outcome> {
  const executor = executorFor(state)!;
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new StationError("step_timeout", `step exceeded its timeout of ${timeoutMs}ms`)),
    timeoutMs,
  );
  const both = AbortSignal.any([ctx.signal, timeout.signal]);
  try {
    const aborted = new Promise<Outcome>((resolve) => {
      const onAbort = () => {
        const reason = both.reason;
        resolve({
          kind: "failed",
          error: reason instanceof StationError
            ? { code: reason.code, message: reason.message }
            : { code: "canceled", message: "step aborted" },
        });
      };
      if (both.aborted) onAbort();
      else both.addEventListener("abort", onAbort, { once: true });
    });
    return await Promise.race([
      executor(state, scope, { ...ctx, signal: both }).catch((err): Outcome => ({
        kind: "failed",
        error: { code: (err as StationError).code ?? "step_error", message: errorMessage(err) },
      })),
      aborted,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
