/** The `parallel` step: branches run as durable child steps; output keyed by branch name. */

import { z } from "zod";
import { common, rule, stateId } from "./fields.ts";
import type { Executor, SchemaKit, StepType } from "./types.ts";

/** Branch names key the output, so two branches may not share one. */
const uniqueNames = rule<Array<{ name: string }>>((branches) => {
  const seen = new Set<string>();
  return branches.flatMap((b, i) => {
    if (!seen.has(b.name)) return seen.add(b.name), [];
    return [{
      code: "duplicate_id",
      message: `branch name \`${b.name}\` is used twice`,
      hint: "branch names key the output: make them unique",
      at: [i, "name"],
    }];
  });
});

const schema = (kit: SchemaKit) =>
  z.strictObject({
    ...common,
    type: z.literal("parallel"),
    branches: z.array(
      z.strictObject({ name: stateId(), start: stateId().optional(), states: kit.states }).describe(
        "a branch",
      ),
    ).min(1).check(uniqueNames),
    join: z.strictObject({ mode: z.literal("all") }).describe("join").optional(),
  });
export type ParallelState = z.infer<ReturnType<typeof schema>>;

/** parallel: every branch becomes its own durable chain of steps; the engine joins them. */
const execute: Executor<ParallelState> = (step) =>
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

export const parallel: StepType<ParallelState> = {
  type: "parallel",
  schema,
  blocks: [["branches", "*"]],
  executor: execute,
};
