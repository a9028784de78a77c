import type { AgentService } from "../agents/service.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { Database } from "../db/database.ts";
import type { FileStore } from "../files/store.ts";
import type { NatsConnection } from "../nats/connection.ts";
import type { SandboxService } from "../sandbox/service.ts";
import type { SandboxUnavailable } from "../sandbox/start.ts";
import type { Engine } from "../workflows/engine/engine.ts";
import type { TestRuns } from "../testing/runs.ts";
import type { WorkflowStore } from "../workflows/store.ts";

/** What the running station hands to the API and its services. Later parts add theirs here. */
export interface StationContext {
  version: string;
  startedAt: Date;
  config: LoadedConfig;
  db: Database;
  nats: {
    nc: NatsConnection;
    url: string;
    /** True when stn started the nats-server itself. */
    managed: boolean;
    /** The managed nats-server's binary (resolved path). */
    bin?: string;
  };
  /** Docker sandboxes; undefined when disabled or the Docker Engine is not reachable. */
  sandbox?: SandboxService;
  /** Why there are no sandboxes (disabled, Docker down, no permission on its socket) and the fix. */
  sandboxUnavailable?: SandboxUnavailable;
  /** Files in the NATS object store (storage.bucket). */
  files: FileStore;
  /** The durable workflow engine (runs, approvals, run events). */
  engine: Engine;
  /** Agent runs: THE loop, its ledger, cancel and resume. */
  agents: AgentService;
  /** Stored workflow definitions and their versions. */
  workflows: WorkflowStore;
  /**
   * Resolves once every ledger commit so far is on disk: at once with `ledger.durability: normal`, after one
   * shared sync of the WAL with `fsync` (the API answers only then).
   */
  durable: () => Promise<void>;
  /** The last test runs of POST /api/v1/tests (docs/testing.md). */
  tests: TestRuns;
  /** Aborted when the station begins to stop; long-lived handlers (streams) end on it. */
  shutdown: AbortSignal;
}
