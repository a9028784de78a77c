/** The `foreach` step: one durable iteration per item, at most `maxConcurrency` at once. */

import { z } from "zod";
import { contextScope, evaluate } from "../expr.ts";
import { common, Expression } from "./fields.ts";
import { type Executor, failed, type SchemaKit, type StepType } from "./types.ts";

const schema = (kit: SchemaKit) =>
  z.strictObject({
    ...common,
    type: z.literal("foreach"),
    /** JSONata giving the array to iterate. */
    itemsPath: Expression,
    itemName: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default("item"),
    maxConcurrency: z.int().min(1).max(100).default(1),
    iterator: kit.block,
  });
export type ForeachState = z.infer<ReturnType<typeof schema>>;

/** foreach: one durable iteration per item of `itemsPath`, at most `maxConcurrency` at once. */
const execute: Executor<ForeachState> = async (step, scope) => {
  let items: unknown;
  try {
    items = await evaluate(step.itemsPath, scope, contextScope(scope).bindings);
  } catch (err) {
    return failed("expression_failed", err);
  }
  // Nothing at the path is a mistake (a typo, a step that did not run); an empty list is a valid loop.
  if (items === undefined) {
    return {
      kind: "failed",
      error: {
        code: "items_not_found",
        message: `foreach ${step.id}: itemsPath ${JSON.stringify(step.itemsPath)} matched nothing`,
      },
    };
  }
  if (!Array.isArray(items)) {
    return failed("not_an_array", `foreach ${step.id}: itemsPath gave ${typeof items}, expected an array`);
  }
  return {
    kind: "fanout",
    join: "foreach",
    maxConcurrency: step.maxConcurrency ?? 1,
    blocks: items.map((item, i) => ({
      key: String(i),
      block: step.iterator,
      vars: { [step.itemName ?? "item"]: item, _index: i, _total: items.length },
    })),
  };
};

export const foreach: StepType<ForeachState> = {
  type: "foreach",
  schema,
  blocks: [["iterator"]],
  executor: execute,
};
