/** Assembling a station from its parts, in start order, and stopping them in reverse (startStation). */

import { join } from "node:path";
import { existsSync } from "node:fs";
import { getAgent } from "../agents/store.ts";
import { McpPool, mcpToolSpecs, openMcpToolbox, planMcpToolbox } from "../mcp/mod.ts";
import { AgentRuns } from "../agents/runs.ts";
import { listAgents } from "../agents/store.ts";
import { AgentHost } from "../agents/remote_host.ts";
import { AGENT_CANCEL_SUBJECT, AGENT_QUEUED_SUBJECT } from "../agents/remote_protocol.ts";
import { RunClaims } from "../agents/run_claims.ts";
import { AgentService } from "../agents/service.ts";
import { createApp } from "../api/app.ts";
import { isLoopback } from "../lib/loopback.ts";
import { listen } from "../server/listen.ts";
import { clientTimeouts } from "../server/slow_clients.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import { startCheckpointer } from "../db/checkpoint.ts";
import { processDurability, walDurability } from "../db/durability.ts";
import { type Database, openDatabase } from "../db/database.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { syncAtStart } from "../environments/start_sync.ts";
import { hookProblems } from "../events/webhooks.ts";
import { FileReaper } from "../files/reaper.ts";
import { FileStore } from "../files/store.ts";
import { log } from "../log.ts";
import { startMcpServers } from "../mcp/server/mod.ts";
import { mcpToken } from "../mcp/server/token.ts";
import { connectNats, type NatsConnection, type NatsTarget, natsTarget } from "../nats/connection.ts";
import { ManagedNatsServer } from "../nats/server.ts";
import { locateNatsServer } from "../nats/locate.ts";
import { getSession } from "../sandbox/ledger.ts";
import { startSandboxService } from "../sandbox/start.ts";
import { Quiescence } from "../testing/quiescence.ts";
import { VirtualClock } from "../testing/virtual_clock.ts";
import { VirtualTime } from "../testing/virtual_time.ts";
import { StubSandboxBackend } from "../testing/stub_sandbox.ts";
import { VERSION } from "../version.ts";
import { defaultReplicas, Engine, provisionStream, Scheduler } from "../workflows/engine/mod.ts";
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

type Closer = { name: string; close: () => void | Promise<void> };

/** Checks the settings that must hold before anything starts. */
function preflight(config: LoadedConfig): void {
  const { host, api_token, mcp_auth } = config.values.server;
  if (mcp_auth === "always" && !api_token) {
    throw usageError(
      "api_token_required",
      "server.mcp_auth is `always`, but there is no token to require",
      "set server.api_token in config.yaml or STATION_API_TOKEN (16+ characters, e.g. `openssl rand -hex 32`)",
    );
  }
  if (!isLoopback(host) && !api_token) {
    throw usageError(
      "api_token_required",
      `refusing to listen on ${host} without an API token: anyone who can reach it could run workflows and sandboxes`,
      "set server.api_token in config.yaml or STATION_API_TOKEN (16+ characters, e.g. `openssl rand -hex 32`), " +
        "or bind to 127.0.0.1",
    );
  }
  const hooks = hookProblems(config.values.events.hooks);
  if (hooks.length > 0) {
    throw usageError("config_invalid", hooks.join("; "), "fix the webhook mappings (docs/events.md)");
  }
}

/** Starts the ledger, NATS and the API, in that order; on any failure undoes what had started. */
export async function startStation(config: LoadedConfig, options: StartStationOptions): Promise<Station> {
  preflight(config);
  const clock = options.time === "virtual" ? new VirtualClock() : systemClock;
  const closers: Closer[] = [];
  const shutdown = new AbortController();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      shutdown.abort();
      for (const { name, close } of closers.reverse()) {
        try {
          await close();
        } catch (err) {
          log.warn(`stopping ${name} failed`, { error: errorMessage(err) });
        }
      }
    })();

  try {
    const db: Database = openDatabase(config.paths.db);
    closers.push({ name: "ledger", close: () => db.close() });
    const level = config.values.ledger.durability;
    const durability = level !== "normal" && config.paths.db !== ":memory:"
      ? walDurability(db, config.paths.db)
      : processDurability;
    closers.push({ name: "ledger sync", close: () => durability.close() });
    const durable = () => durability.durable();
    if (config.paths.db !== ":memory:") {
      const checkpointer = startCheckpointer(db, config.paths.db);
      closers.push({ name: "ledger checkpointer", close: () => checkpointer.stop() });
    }

    const { target, server } = await startNats(config, options);
    if (server) closers.push({ name: "nats-server", close: () => server.stop() });
    let fatalResolve!: (e: StationError) => void;
    const fatal = new Promise<StationError>((r) => (fatalResolve = r));
    server?.exited.then((status) => {
      if (server.stopping) return;
      const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
      const lines = server.lastLines.slice(-3).map((l) => l.replace(/^\[\d+\] \S+ \S+ /, "")).join(" | ");
      fatalResolve(
        new StationError("nats_server_died", `the managed nats-server (pid ${server.pid}) ${how}`, {
          hint: `check what stopped it (OOM killer, a stray kill); its last lines: ${lines || "(none)"}`,
        }),
      );
    });

    const nc: NatsConnection = await connectNats(target);
    closers.push({ name: "nats connection", close: () => closeNats(nc) });

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
    closers.push({ name: "file reaper", close: () => fileReaper.stop() });

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
      closers.push({
        name: "sandbox",
        close: async () => {
          await sandbox.stop();
          await sandbox.closeEndedRuns();
        },
      });
    }
    const workflows = new WorkflowStore(db);
    // MCP servers shared across agent runs; closed after the agent runs stop (closers run in reverse).
    const mcpPool = new McpPool({ max: config.values.mcp.pool_max, idleMs: config.values.mcp.idle_timeout });
    closers.push({ name: "MCP server pool", close: () => mcpPool.close() });
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
    const e = config.values.engine;
    const engine = new Engine(db, nc, {
      workers: e.workers,
      replicas,
      ackWaitMs: e.ack_wait,
      maxDeliver: e.max_deliver,
      leaseMs: e.lease,
      defaultTimeoutMs: e.default_timeout,
      queueMaxAgeMs: e.queue_max_age,
      eventRetentionMs: config.values.events.retention,
      sandbox,
      agents,
      ledger: durability,
      stepDurability: level === "step",
      clock,
    });
    await engine.start();
    // Agent steps `stn worker`s run: the station creates their runs and commits their loops' writes.
    const agentHost = new AgentHost({
      nc,
      agents,
      claims: new RunClaims(db, agents.ledger, clock),
      leaseMs: e.lease,
      holds: ({ worker, ...step }) => engine.holds(worker, step),
      mcpPlan: (environment, def) => planMcpToolbox(db, environment, def.tools),
      durable,
    });
    agentHost.start();
    closers.push({ name: "agent steps of workers", close: () => Promise.resolve(agentHost.stop()) });
    // Registered after the NATS connection, so it stops before the connection drains.
    closers.push({ name: "workflow engine", close: () => engine.stop() });
    // Runs a crash left running go on from their last checkpoint; at stop they stay running for the next start.
    // Stops after the agent runs (closers run in reverse): the eval runs' cases see their runs stop, not end.
    const evals = new EvalService({ db, toolDoubles: (mocks) => new CaseTools({ mocks, live: true }) });
    closers.push({ name: "eval runs", close: () => evals.stop() });
    evals.restoreDoubles(agents.doubles);
    agents.resumeOrphans();
    closers.push({ name: "agent runs", close: () => agents.stop() });

    const ctx: StationContext = {
      version: VERSION,
      startedAt: new Date(),
      config,
      db,
      nats: { nc, url: target.url, managed: server !== undefined, bin: server?.bin },
      files,
      fileReaper,
      shutdown: shutdown.signal,
      sandbox,
      sandboxUnavailable,
      workflows,
      engine,
      runs: new WorkflowRuns(engine, (ids) => agents.ledger.workflowRunCosts(ids)),
      agents,
      agentRuns: new AgentRuns(agents.ledger, () => engine.workers()),
      recordings: new Recordings(agents.doubles, recordingSettings(config)),
      references: () => ({
        environment: config.values.workflows.environment,
        agentsOf: (env: string) => listAgents(db, env).map((a) => a.definition.name),
        // Not stored but its file is there: sync refused it (`stn agent validate` says why).
        invalidAgent: (env: string, name: string) =>
          existsSync(join(config.paths.environments, env, "agents", `${name}.prompt`))
            ? `agents/${name}.prompt did not pass \`stn sync\``
            : undefined,
        sandbox: config.values.sandbox,
      }),
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
    closers.push({ name: "workflow scheduler", close: () => scheduler.stop() });
    const agentScheduler = new AgentScheduler(agents, db, clock);
    agentScheduler.start();
    closers.push({ name: "agent scheduler", close: () => agentScheduler.stop() });
    const quiescence = new Quiescence([engine, scheduler, agentScheduler, agents]);
    const time = clock instanceof VirtualClock ? new VirtualTime(clock, quiescence) : undefined;
    if (time) closers.push({ name: "virtual time", close: () => time.stop() });

    const { host, port } = config.values.server;
    const app = createApp(ctx);
    const http = await listen(app.fetch, host, port, clientTimeouts(config.values.server));
    closers.push({ name: "http server", close: () => http.close() });
    const clientHost = host === "0.0.0.0" || host === "::"
      ? "127.0.0.1"
      : host.includes(":")
      ? `[${host}]`
      : host;
    const url = `http://${clientHost}:${http.port}`;
    let mcp: Station["mcp"];
    if (options.mcp) {
      const servers = await startMcpServers(ctx, app.fetch, clientHost);
      closers.push({ name: "mcp servers", close: () => servers.close() });
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
      closers.push({ name: "server.json", close: () => removeServerFile(config.paths.serverJson) });
    }
    return { url, mcp, ctx, fatal, quiescence, time, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startNats(
  config: LoadedConfig,
  options: StartStationOptions,
): Promise<{ target: NatsTarget; server?: ManagedNatsServer }> {
  const nats = config.values.nats;
  if (nats.url) return { target: natsTarget({ ...nats, url: nats.url }) };
  const bin = await locateNatsServer(nats.server_bin, { binDir: config.paths.binDir });
  const server = await ManagedNatsServer.start({
    bin: bin.path,
    storeDir: nats.store_dir ?? config.paths.natsDir,
    pidFile: join(config.paths.runDir, "nats.pid"),
    busyWaitMs: options.busyWaitMs,
    busyExitCode: options.busyExitCode,
  });
  log.debug("managed nats-server ready", {
    url: server.url,
    pid: server.pid,
    bin: bin.path,
    source: bin.source,
  });
  return { target: { url: server.url, ...server.credentials }, server };
}

async function closeNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  try {
    await nc.drain();
  } catch {
    await nc.close();
  }
}
