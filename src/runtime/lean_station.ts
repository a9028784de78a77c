/**
 * The lean station of a one-shot (one_shot.ts): the engine and the workflow-run routes on a started core,
 * answering the CLI in-process (no listener), and the check of whether that is enough.
 */

import { AgentLedger } from "../agents/ledger.ts";
import { createRunsApp } from "../api/runs_app.ts";
import type { RunRoutesContext } from "../api/routes/workflow_runs.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import type { Database } from "../db/database.ts";
import { systemClock } from "../lib/clock.ts";
import { stateTypes } from "../workflows/definition/graph.ts";
import { defaultReplicas, TERMINAL_RUN } from "../workflows/engine/mod.ts";
import { WorkflowRuns } from "../workflows/runs.ts";
import { WorkflowStore } from "../workflows/store.ts";
import type { StationCore } from "./core.ts";
import { createEngine, stationReferences } from "./parts.ts";
import type { Station } from "./station.ts";

/** What an embedded command sees of a station, lean or whole. */
export type OneShotStation = Pick<Station, "url" | "fatal" | "stop"> & {
  ctx: { nats: { managed: boolean; url: string } };
  /** Answers the API in-process: a lean station has no listener (`url` only names it). */
  fetch?: typeof fetch;
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

/** Starts the engine and the run routes on `core` (stopped with it); the caller stops the core on failure. */
export async function startLean(core: StationCore, config: LoadedConfig): Promise<OneShotStation> {
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
  return {
    url: `http://${config.values.server.host}`,
    fetch: async (input, init) => {
      // Once it stops, as a closed listener would: refused, not answered by parts already closed.
      if (core.shutdown.aborted) throw new TypeError("the embedded station has stopped");
      return await app.fetch(new Request(input, init));
    },
    ctx: { nats: { managed: nats.server !== undefined, url: nats.target.url } },
    fatal: core.fatal,
    stop: core.stop,
  };
}
