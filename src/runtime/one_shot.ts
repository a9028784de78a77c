/**
 * A one-shot station: embedded `stn workflow run FILE` (cron, CI) starts only what its run needs — the core
 * (ledger, NATS), the engine and the workflow-run routes — when nothing else in the ledger waits for a
 * station; the agent service, MCP, sandboxes, files, schedulers, the environment sync and the rest of the
 * API are not started, and their modules not loaded (docs/design/process-model.md#embedded-mode). When the
 * run or the ledger needs more, the whole station starts on the same core.
 */

import { AgentLedger } from "../agents/ledger.ts";
import { createRunsApp } from "../api/runs_app.ts";
import type { RunRoutesContext } from "../api/routes/workflow_runs.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { Database } from "../db/database.ts";
import { systemClock } from "../lib/clock.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { log } from "../log.ts";
import { listen } from "../server/listen.ts";
import { clientTimeouts } from "../server/slow_clients.ts";
import { stateTypes } from "../workflows/definition/graph.ts";
import { defaultReplicas, TERMINAL_RUN } from "../workflows/engine/mod.ts";
import { WorkflowRuns } from "../workflows/runs.ts";
import { WorkflowStore } from "../workflows/store.ts";
import { startCore } from "./core.ts";
import { createEngine, stationReferences } from "./parts.ts";
import type { StartStationOptions, Station } from "./station.ts";

/** What an embedded command sees of a station, lean or whole. */
export type OneShotStation = Pick<Station, "url" | "fatal" | "stop"> & {
  ctx: { nats: { managed: boolean; url: string } };
};

/** Step types whose executors need parts a lean station does not start. */
const NEEDS_SERVICES = ["agent", "sandbox"];

/** Ledger rows that a whole station would act on at start: the lean one would leave them waiting. */
const WAITING = [
  [
    "workflow runs to go on with",
    `SELECT 1 FROM workflow_runs WHERE status NOT IN (${TERMINAL_RUN.map((s) => `'${s}'`).join(", ")})`,
  ],
  ["agent runs to go on with", "SELECT 1 FROM agent_runs WHERE status = 'running'"],
  ["eval runs to go on with", "SELECT 1 FROM eval_runs WHERE status = 'running'"],
  ["workflow schedules", "SELECT 1 FROM schedules"],
  ["agent schedules", "SELECT 1 FROM agent_schedules"],
] as const;

/**
 * Why this one-shot needs the whole station, or null when the lean one does everything the run and the
 * ledger ask of a station now. Asked once the NATS store is ours: no other stn can add work meanwhile.
 */
export function wholeStationNeed(db: Database, config: LoadedConfig, definition: unknown): string | null {
  if (config.values.nats.url) return "nats.url is set (workers may share its queues)";
  const services = [...stateTypes(definition as { states: unknown })].filter((t) =>
    NEEDS_SERVICES.includes(t)
  );
  if (services.length > 0) return `the workflow has ${services.join(" and ")} steps`;
  for (const [what, sql] of WAITING) {
    if (db.prepare(`${sql} LIMIT 1`).get() !== undefined) return `the ledger has ${what}`;
  }
  return null;
}

/**
 * Starts the station for one run of `definition` and nothing else: lean when `wholeStationNeed` finds
 * nothing, else the whole station (src/runtime/station.ts) on the core already started.
 */
export async function startOneShot(
  config: LoadedConfig,
  options: StartStationOptions,
  definition: unknown,
): Promise<OneShotStation> {
  const core = await startCore(config, options);
  try {
    const why = wholeStationNeed(core.db, config, definition);
    if (why !== null) {
      log.debug(`starting the whole station: ${why}`);
      const station = await lazyImport<typeof import("./station.ts")>("./station.ts", import.meta.url);
      return await station.startStation(config, options, core);
    }
    const { db, nats } = core;
    const replicas = config.values.nats.replicas ?? defaultReplicas(nats.nc);
    const engine = createEngine(core, config, { replicas, clock: systemClock });
    await engine.start();
    core.closeWith("workflow engine", () => engine.stop());
    const agentLedger = new AgentLedger(db);
    const ctx: RunRoutesContext = {
      config,
      db,
      engine,
      runs: new WorkflowRuns(engine, (ids) => agentLedger.workflowRunCosts(ids)),
      workflows: new WorkflowStore(db),
      references: stationReferences(config, db),
      durable: core.durable,
      shutdown: core.shutdown,
    };
    const app = createRunsApp(ctx);
    const { host, port } = config.values.server;
    const http = await listen(app.fetch, host, port, clientTimeouts(config.values.server));
    core.closeWith("http server", () => http.close());
    return {
      url: `http://${host}:${http.port}`,
      ctx: { nats: { managed: nats.server !== undefined, url: nats.target.url } },
      fatal: core.fatal,
      stop: core.stop,
    };
  } catch (err) {
    await core.stop();
    throw err;
  }
}
