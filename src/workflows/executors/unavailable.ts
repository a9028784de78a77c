import type { Executor } from "./types.ts";

/**
 * `agent` and `sandbox` steps until their capability is plugged in: the step fails with a code
 * that says which feature is missing (issue: agents / sandbox executors).
 */
export const unavailable: Executor = (step) =>
  Promise.resolve({
    kind: "failed",
    error: {
      code: `${step.type}_steps_unavailable`,
      message: `${step.type} steps are not available in this build of stn yet (step ${step.id})`,
    },
  });
