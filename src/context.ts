import type { AgentRuns } from "./agents/runs.ts";
import type { AgentService } from "./agents/service.ts";
import type { LoadedConfig } from "./config/resolve.ts";
import type { Database } from "./db/database.ts";
import type { FileReaper } from "./files/reaper.ts";
import type { FileStore } from "./files/store.ts";
import type { NatsConnection } from "./nats/connection.ts";
import type { SandboxService } from "./sandbox/service.ts";
import type { SandboxUnavailable } from "./sandbox/start.ts";
import type { Engine } from "./workflows/engine/mod.ts";
import type { WorkflowRuns } from "./workflows/runs.ts";
import type { StationReferences } from "./workflows/definition/references.ts";
import type { WorkflowStore } from "./workflows/store.ts";
import type { z } from "zod";
import type { Recorder } from "./agents/doubles.ts";
import type { Cassette } from "./contract/cassette.ts";
import type { StartTestRunBody, TestRun } from "./contract/tests.ts";
import type { EvalService } from "./evals/service.ts";

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
  /** Deletes expired files (on its timer when storage.cleanup.enabled, and for `stn files prune`). */
  fileReaper: FileReaper;
  /** The durable workflow engine (runs, approvals, run events). */
  engine: Engine;
  /** Workflow runs as the API shows them: what routes and dashboard pages read (the engine writes). */
  runs: WorkflowRuns;
  /** Agent runs: THE loop, its ledger, cancel and resume. */
  agents: AgentService;
  /** Agent runs as the API shows them: what routes and dashboard pages read (the agent service writes). */
  agentRuns: AgentRuns;
  /** What agent and sandbox steps may name here: the agents in the ledger, the sandbox config. */
  references(): StationReferences;
  /** Stored workflow definitions and their versions. */
  workflows: WorkflowStore;
  /**
   * Resolves once every ledger commit so far is on disk: at once with `ledger.durability: normal`, after one
   * shared sync of the WAL with `fsync` (the API answers only then).
   */
  durable: () => Promise<void>;
  /** The last test runs of POST /api/v1/tests (docs/testing.md). */
  /** Recordings of runs started with `record: true` (testing/recordings.ts), for the cassette routes. */
  recordings: {
    recorder(recorded: Cassette["recorded"]): Promise<Recorder & { cassette(): Cassette }>;
    keep(runId: string, recorder: Recorder & { cassette(): Cassette }): void;
    has(runId: string): boolean;
    cassette(runId: string): Cassette;
  };
  tests: {
    list(): TestRun[];
    get(id: string): TestRun | undefined;
    /** Runs the suite a POST /api/v1/tests asks for (testing/runs.ts); `api` is the app the cases call. */
    start(
      ctx: StationContext,
      body: z.output<typeof StartTestRunBody>,
      api: (req: Request) => Response | Promise<Response>,
    ): Promise<{ run: TestRun; done: Promise<TestRun> }>;
  };
  /** Eval runs (docs/evals.md): datasets run as agent or workflow runs, scored, compared; durable. */
  evals: EvalService;
  /** Aborted when the station begins to stop; long-lived handlers (streams) end on it. */
  shutdown: AbortSignal;
}
