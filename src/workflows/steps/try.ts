import { z } from "zod";
import { common } from "./fields.ts";
import type { SchemaKit, StepType } from "./types.ts";

const schema = (kit: SchemaKit) =>
  z.strictObject({
    ...common,
    type: z.literal("try"),
    try: kit.block,
    catch: kit.block.optional(),
    finally: kit.block.optional(),
  });
export type TryState = z.infer<ReturnType<typeof schema>>;

/**
 * try: runs the `try` block as durable child steps; the engine's join then runs `catch` (with
 * `_error`) on failure and `finally` always, one stage after the other.
 */
export const tryType: StepType<TryState> = {
  type: "try",
  schema,
  blocks: [["try"], ["catch"], ["finally"]],
  executor: (step) =>
    Promise.resolve({
      kind: "fanout",
      join: "try",
      blocks: [{ key: "try", block: step.try, vars: {} }],
      maxConcurrency: 1,
    }),
};
