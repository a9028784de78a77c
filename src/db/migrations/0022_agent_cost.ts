import type { Migration } from "../migrate.ts";

/**
 * What agent runs cost (issue 29, docs/agents.md#cost): each model turn's cost in USD at the price its run
 * started with, and the run's sum. Stored when the turn is recorded, so a later price change does not rewrite
 * what past runs cost; NULL when the model has no known price (and on runs recorded before this migration).
 */
export default {
  version: 22,
  name: "agent_cost",
  sql: `
    ALTER TABLE agent_turns ADD COLUMN cost_usd REAL;
    ALTER TABLE agent_runs ADD COLUMN cost_usd REAL;
  `,
} satisfies Migration;
