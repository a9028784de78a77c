import { z } from "zod";
import { common, rule, templates } from "./fields.ts";
import type { Executor, StepType } from "./types.ts";

const AGENT_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]*(@[A-Za-z0-9][A-Za-z0-9_.-]*)?$/;

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("agent"),
    /** `name` or `name@environment`. */
    agent: z.string().min(1).check(rule((a) =>
      AGENT_REF.test(a) ? undefined : {
        code: "invalid_agent",
        message: `invalid agent reference ${JSON.stringify(a)}`,
        hint: "write `name` or `name@environment`",
      }
    )),
    task: z.string().check(templates).optional(),
    input: z.strictObject({ variables: z.record(z.string(), z.unknown()).optional() })
      .describe("agent input").check(templates).optional(),
  });
export type AgentState = z.infer<ReturnType<typeof schema>>;

/**
 * agent: runs an agent (spec/workflows.md). Until the agent layer is plugged in, the step fails with
 * a code that says which feature is missing.
 */
const execute: Executor<AgentState> = (step) =>
  Promise.resolve({
    kind: "failed",
    error: {
      code: `${step.type}_steps_unavailable`,
      message: `${step.type} steps are not available in this build of stn yet (step ${step.id})`,
    },
  });

export const agent: StepType<AgentState> = {
  type: "agent",
  schema,
  notes: (s) =>
    typeof s.agent === "string" && AGENT_REF.test(s.agent)
      ? [{
        code: "agent_not_checked",
        message: "agent references are checked when the workflow is synced with its environment's agents",
        hint:
          "put the file in environments/<env>/workflows/ and run `stn sync`: an unknown agent is an error there",
        at: ["agent"],
      }]
      : [],
  executor: execute,
};
