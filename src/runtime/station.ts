/** Assembling a station from its parts, in start order, and stopping them in reverse (startStation). */

import { startCore, type StationCore } from "./core.ts";
import { createEngine, stationReferences } from "./parts.ts";
import { getAgent } from "../agents/store.ts";
import { McpPool, mcpToolSpecs, openMcpToolbox, planMcpToolbox } from "../mcp/mod.ts";
import { AgentRuns } from "../agents/runs.ts";
import { AgentHost } from "../agents/remote_host.ts";
import { AGENT_CANCEL_SUBJECT, AGENT_QUEUED_SUBJECT } from "../agents/remote_protocol.ts";
import { RunClaims } from "../agents/run_claims.ts";
import { AgentService } from "../agents/service.ts";
import { createApp } from "../api/app.ts";
import { listen } from "../server/listen.ts";
import { clientTimeouts } from "../server/slow_clients.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import type { StationError } from "../errors.ts";
import { syncAtStart } from "../environments/start_sync.ts";
import { FileReaper } from "../files/reaper.ts";
import { FileStore } from "../files/store.ts";
import { startMcpServers } from "../mcp/server/mod.ts";
import { mcpToken } from "../mcp/server/token.ts";
import { getSession } from "../sandbox/ledger.ts";
import { startSandboxService } from "../sandbox/start.ts";
import { Quiescence } from "../testing/quiescence.ts";
import { VirtualClock } from "../testing/virtual_clock.ts";
import { VirtualTime } from "../testing/virtual_time.ts";
import { StubSandboxBackend } from "../testing/stub_sandbox.ts";
import { VERSION } from "../version.ts";
import { defaultReplicas, provisionStream, Scheduler } from "../workflows/engine/mod.ts";
import { systemClock } from "../lib/clock.ts";
import { AgentScheduler } from "../agents/scheduler.ts";
import { WorkflowRuns } from "../workflows/runs.ts";
import { WorkflowStore } from "../workflows/store.ts";
import type { StationContext } from "../context.ts";
import { removeServerFile, writeServerFile } from "../config/server_file.ts";
import { TestRuns } from "../testing/runs.ts";
import { Recordings, recordingSettings } from "../testing/recordings.ts";
import { EvalService } from "../evals/service.ts";
import { CaseTools } from "../testing/mocks.ts";

export interface StartStationOptions {
  /** Write run/server.json so CLI commands can find this server (stn serve), or not (embedded mode). */
  announce: boolean;
  /** How long to wait if another stn owns the managed NATS store (embedded mode waits; serve refuses). */
  busyWaitMs?: number;
  /** Exit code when the store stays busy (embedded mode: EXIT_HOME_BUSY). */
  busyExitCode?: number;
  /**
   * Listen on server.mcp_port and server.agent_port too (stn serve). Embedded mode does not: a one-shot
   * command has no MCP clients, and `stn mcp stdio` serves the management tools over stdio itself.
   */
  mcp?: boolean;
  /**
   * `virtual`: every timer the station keeps (timer steps, retry backoff, approval and await timeouts, fanout
   * timeouts, workflow and agent schedules) is measured on a virtual clock that jumps to the next due timer when
   * nothing else can happen, while someone waits through `station.time.during` (stn test; docs/testing.md).
   * Default `real`: the wall clock.
   */
  time?: "real" | "virtual";
  /**
   * Embedded mode: no warning when Docker is unreachable — a command that needs a sandbox fails with the
   * reason and its fix, one that does not stays silent (a crontab mails every line of stderr).
   */
  quietSandbox?: boolean;
  /** `mock`: sandboxes are in-memory stubs whose commands return exit 0 with no output (`sandbox: mock` cases). */
  sandbox?: "docker" | "mock";
}

/** A running station: its API address, its parts, and how to stop it. */
export interface Station {
  /** Base URL of the API, e.g. http://127.0.0.1:8585 */
  url: string;
  /** The MCP endpoints (management and agent servers) when started with `mcp: true`. */
  mcp?: { url: string; agentUrl: string };
  ctx: StationContext;
  /** Resolves with an error when a part the station cannot live without fails (the managed nats-server dies). */
  fatal: Promise<StationError>;
  /** Whether the station has nothing left to do now (`busy()` null), and waiting until it has not. */
  quiescence: Quiescence;
  /** Skipped time, when started with `time: "virtual"`. */
  time?: VirtualTime;
  /** Stops everything in reverse start order; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the ledger, NATS and the API, in that order (on `core` when one was started already, e.g. by a
 * one-shot command that needed more than its lean station); on any failure undoes what had started.
 */
export async function startStation(
  config: LoadedConfig,
  options: StartStationOptions,
  started?: StationCore,
): Promise<Station> {
  const core = started ?? await startCore(config, options);
  const { db, durable, fatal, stop, closeWith } = core;
  const { nc, target, server } = core.nats;
  const clock = options.time === "virtual" ? new VirtualClock() : systemClock;

  try {
    const replicas = config.values.nats.replicas ?? defaultReplicas(nc);
    // First, so a cluster too small for nats.replicas is a clear error before any bucket is made.
    await provisionStream(nc, replicas, config.values.engine.queue_max_age);
    // Files published under sessions/<id>/ expire storage.session_ttl after the ledger records the close.
    const files = await FileStore.open(nc, config.values.storage, replicas, (id) => {
      const closed = getSession(db, id)?.closed_at;
      return closed ? Date.parse(closed) : null;
    });
    const fileReaper = new FileReaper(files);
    if (config.values.storage.cleanup.enabled) fileReaper.start(config.values.storage.cleanup.interval);
    closeWith("file reaper", () => fileReaper.stop());

    const { service: sandbox, unavailable: sandboxUnavailable } = await startSandboxService(
      config.values.sandbox,
      db,
      files,
      {
        quiet: options.quietSandbox,
        backend: options.sandbox === "mock" ? new StubSandboxBackend() : undefined,
      },
    );
    if (sandbox) {
      // Stops after the engine (closers run in reverse): no step can open a session any more, so the
      // sessions of runs that ended here are closed now — a one-shot command exits within the
      // sandbox's run sweep interval, which would leave their containers running until a later start.
      closeWith("sandbox", async () => {
        await sandbox.stop();
        await sandbox.closeEndedRuns();
      });
    }
    const workflows = new WorkflowStore(db);
    // MCP servers shared across agent runs; closed after the agent runs stop (closers run in reverse).
    const mcpPool = new McpPool({ max: config.values.mcp.pool_max, idleMs: config.values.mcp.idle_timeout });
    closeWith("MCP server pool", () => mcpPool.close());
    const agents = new AgentService({
      db,
      config: config.values,
      env: Deno.env.toObject(),
      // Agents as `stn sync` (or this start) stored them, with their MCP tools from the synced catalogue.
      source: (environment, name) => getAgent(db, environment, name),
      mcpTools: (environment, def, signal) =>
        openMcpToolbox(db, environment, def.tools, { signal, pool: mcpPool }),
      mcpToolSpecs: (environment, def) => mcpToolSpecs(db, environment, def.tools),
      sandbox,
      debug: config.values.log.agent_turns,
      environment: config.values.workflows.environment,
      clock,
      durable,
      // Runs on task queues (docs/workers.md#agent-runs-on-a-queue): idle workers ask at once; a cancel reaches
      // the worker running the run.
      remote: {
        queued: () => nc.publish(AGENT_QUEUED_SUBJECT),
        canceled: (runId) => nc.publish(`${AGENT_CANCEL_SUBJECT}.${runId}`),
      },
    });
    const engine = createEngine(core, config, { replicas, clock, sandbox, agents });
    await engine.start();
    // Agent steps `stn worker`s run: the station creates their runs and commits their loops' writes.
    const agentHost = new AgentHost({
      nc,
      agents,
      claims: new RunClaims(db, agents.ledger, clock),
      leaseMs: config.values.engine.lease,
      holds: ({ worker, ...step }) => engine.holds(worker, step),
      mcpPlan: (environment, def) => planMcpToolbox(db, environment, def.tools),
      durable,
    });
    agentHost.start();
    closeWith("agent steps of workers", () => Promise.resolve(agentHost.stop()));
    // Registered after the NATS connection, so it stops before the connection drains.
    closeWith("workflow engine", () => engine.stop());
    // Runs a crash left running go on from their last checkpoint; at stop they stay running for the next start.
    // Stops after the agent runs (closers run in reverse): the eval runs' cases see their runs stop, not end.
    const evals = new EvalService({ db, toolDoubles: (mocks) => new CaseTools({ mocks, live: true }) });
    closeWith("eval runs", () => evals.stop());
    evals.restoreDoubles(agents.doubles);
    agents.resumeOrphans();
    closeWith("agent runs", () => agents.stop());

    const ctx: StationContext = {
      version: VERSION,
      startedAt: new Date(),
      config,
      db,
      nats: { nc, url: target.url, managed: server !== undefined, bin: server?.bin },
      files,
      fileReaper,
      shutdown: core.shutdown,
      sandbox,
      sandboxUnavailable,
      workflows,
      engine,
      runs: new WorkflowRuns(engine, (ids) => agents.ledger.workflowRunCosts(ids)),
      agents,
      agentRuns: new AgentRuns(agents.ledger, () => engine.workers()),
      recordings: new Recordings(agents.doubles, recordingSettings(config)),
      references: stationReferences(config, db),
      durable,
      tests: new TestRuns(),
      evals,
    };
    evals.resume(ctx);
    if (config.values.workflows.sync_on_start) {
      await syncAtStart(db, workflows, {
        environmentsDir: config.paths.environments,
        defaultEnvironment: config.values.workflows.environment,
      }, { mcp: options.mcp ?? false, sandbox: config.values.sandbox });
    }
    const scheduler = new Scheduler(engine, workflows, db, clock);
    scheduler.start();
    closeWith("workflow scheduler", () => scheduler.stop());
    const agentScheduler = new AgentScheduler(agents, db, clock);
    agentScheduler.start();
    closeWith("agent scheduler", () => agentScheduler.stop());
    const quiescence = new Quiescence([engine, scheduler, agentScheduler, agents]);
    const time = clock instanceof VirtualClock ? new VirtualTime(clock, quiescence) : undefined;
    if (time) closeWith("virtual time", () => time.stop());

    const { host, port } = config.values.server;
    const app = createApp(ctx);
    const http = await listen(app.fetch, host, port, clientTimeouts(config.values.server));
    closeWith("http server", () => http.close());
    const clientHost = host === "0.0.0.0" || host === "::"
      ? "127.0.0.1"
      : host.includes(":")
      ? `[${host}]`
      : host;
    const url = `http://${clientHost}:${http.port}`;
    let mcp: Station["mcp"];
    if (options.mcp) {
      const servers = await startMcpServers(ctx, app.fetch, clientHost);
      closeWith("mcp servers", () => servers.close());
      mcp = { url: servers.mcpUrl, agentUrl: servers.agentUrl };
    }

    if (options.announce) {
      writeServerFile(config.paths.serverJson, {
        url,
        ...(mcp && {
          mcp_url: mcp.url,
          agent_mcp_url: mcp.agentUrl,
          mcp_auth: mcpToken(config.values.server) !== undefined,
        }),
        pid: Deno.pid,
        started_at: ctx.startedAt.toISOString(),
        version: VERSION,
      });
      // Pushed last so it is removed first: no client is sent to a server that is stopping.
      closeWith("server.json", () => removeServerFile(config.paths.serverJson));
    }
    return { url, mcp, ctx, fatal, quiescence, time, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
