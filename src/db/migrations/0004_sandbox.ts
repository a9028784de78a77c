/** Sandbox sessions: one row per session, so its container is found again after a restart. */

import type { Migration } from "../migrate.ts";

export default {
  version: 4,
  name: "sandbox",
  sql: `
    CREATE TABLE sandbox_sessions (
      id TEXT PRIMARY KEY,
      container_id TEXT NOT NULL,
      image TEXT NOT NULL,
      runtime TEXT,
      scope TEXT NOT NULL CHECK (scope IN ('workflow', 'agent')),
      run_id TEXT,
      network INTEGER NOT NULL DEFAULT 0,
      status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
      created_at TEXT NOT NULL,
      last_used_at TEXT NOT NULL,
      closed_at TEXT,
      close_reason TEXT
    );
    CREATE INDEX sandbox_sessions_status ON sandbox_sessions (status);
    -- One live container per workflow run, shared by its steps and agents.
    CREATE UNIQUE INDEX sandbox_sessions_workflow_run ON sandbox_sessions (run_id)
      WHERE scope = 'workflow' AND status = 'open';
    -- Labels containers with the station that owns them, so startup cleanup never touches
    -- the containers of another station sharing the Docker host.
    INSERT OR IGNORE INTO station_meta (key, value) VALUES ('station_id', lower(hex(randomblob(8))));
  `,
} satisfies Migration;
