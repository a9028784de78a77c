import type { Migration } from "../migrate.ts";

/** Workflow definitions: one row per workflow, one per stored version (numbered, content-hashed). */
export default {
  version: 2,
  name: "workflows",
  sql: `
    CREATE TABLE workflows (
      id TEXT PRIMARY KEY,
      name TEXT,
      description TEXT,
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
      -- why it is disabled: 'user' (stays disabled through syncs) or 'file_removed' (a returning file re-enables it)
      disabled_reason TEXT CHECK (disabled_reason IN ('user', 'file_removed')),
      latest_version INTEGER NOT NULL,
      -- where the latest version came from: 'api' or 'file' (DeclarativeSync of an environment)
      source TEXT NOT NULL CHECK (source IN ('api', 'file')),
      environment TEXT,
      source_path TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX workflows_environment ON workflows (source, environment);
    CREATE TABLE workflow_versions (
      workflow_id TEXT NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      hash TEXT NOT NULL,
      definition TEXT NOT NULL,
      label TEXT,
      created_at TEXT NOT NULL,
      PRIMARY KEY (workflow_id, version)
    );
  `,
} satisfies Migration;
