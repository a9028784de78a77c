import type { State } from "../definition/schema.ts";
import type { Executor } from "./types.ts";

type ParallelState = Extract<State, { type: "parallel" }>;

/** parallel: every branch becomes its own durable chain of steps; the engine joins them. */
export const parallel: Executor<ParallelState> = (step) =>
  Promise.resolve({
    kind: "fanout",
    join: "parallel",
    maxConcurrency: step.branches.length,
    blocks: step.branches.map((b) => ({
      key: b.name,
      block: { start: b.start, states: b.states },
      vars: {},
    })),
  });
