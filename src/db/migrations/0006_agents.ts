/** The agents table: one row per `.prompt` file of an environment, as `stn sync` stored it. */

import type { Migration } from "../migrate.ts";

export default {
  version: 6,
  name: "agents",
  sql: `
    -- One row per agent file of an environment (agents/<name>.prompt), written by stn sync: the
    -- filesystem is the source of truth, so a row is replaced when its file changes and deleted
    -- when its file is gone.
    CREATE TABLE agents (
      environment TEXT NOT NULL,
      name TEXT NOT NULL,
      checksum TEXT NOT NULL,
      definition TEXT NOT NULL,
      path TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (environment, name)
    );
  `,
} satisfies Migration;
