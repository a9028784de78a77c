/** The abort signal of one agent run: its timeout and its caller's cancel, with the reason each means. */

import { StationError } from "../errors.ts";

/** A run's abort controller: aborted at `timeoutMs` (agent_timeout) or by `outer`; `dispose` when the run ends. */
export function runSignal(
  timeoutMs: number,
  outer?: AbortSignal,
): { abort: AbortController; dispose(): void } {
  const abort = new AbortController();
  const timer = setTimeout(
    () =>
      abort.abort(new StationError("agent_timeout", `the agent run passed its timeout of ${timeoutMs}ms`)),
    timeoutMs,
  );
  const onOuter = () => abort.abort(outerReason(outer!.reason));
  if (outer?.aborted) onOuter();
  else outer?.addEventListener("abort", onOuter, { once: true });
  return {
    abort,
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

/** What an outer abort means for the run: shutdown leaves it to resume, a step timeout is a timeout, else a cancel. */
export function outerReason(reason: unknown): StationError {
  if (reason instanceof StationError && (reason.code === "shutdown" || reason.code === "agent_timeout")) {
    return reason;
  }
  if (reason instanceof StationError && reason.code === "step_timeout") {
    return new StationError("agent_timeout", reason.message);
  }
  return new StationError("canceled", reason instanceof Error ? reason.message : "canceled");
}
