/** Parts the full station and a one-shot station build alike: the workflow engine and the references check. */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { listAgents } from "../agents/store.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import type { Database } from "../db/database.ts";
import type { Clock } from "../lib/clock.ts";
import type { StationReferences } from "../workflows/definition/references.ts";
import { Engine } from "../workflows/engine/mod.ts";
import type { AgentRunner, SandboxRunner } from "../workflows/steps/runners.ts";
import type { StationCore } from "./core.ts";

/** The workflow engine on a station's core, configured from `engine.*` and the ledger's durability (not started). */
export function createEngine(
  core: StationCore,
  config: LoadedConfig,
  parts: { replicas: number; clock: Clock; sandbox?: SandboxRunner; agents?: AgentRunner },
): Engine {
  const e = config.values.engine;
  return new Engine(core.db, core.nats.nc, {
    workers: e.workers,
    replicas: parts.replicas,
    ackWaitMs: e.ack_wait,
    maxDeliver: e.max_deliver,
    leaseMs: e.lease,
    defaultTimeoutMs: e.default_timeout,
    queueMaxAgeMs: e.queue_max_age,
    eventRetentionMs: config.values.events.retention,
    sandbox: parts.sandbox,
    agents: parts.agents,
    ledger: core.durability,
    stepDurability: config.values.ledger.durability === "step",
    clock: parts.clock,
  });
}

/** What agent and sandbox steps may name on this station: the agents in the ledger, the sandbox config. */
export function stationReferences(config: LoadedConfig, db: Database): () => StationReferences {
  return () => ({
    environment: config.values.workflows.environment,
    agentsOf: (env: string) => listAgents(db, env).map((a) => a.definition.name),
    // Not stored but its file is there: sync refused it (`stn agent validate` says why).
    invalidAgent: (env: string, name: string) =>
      existsSync(join(config.paths.environments, env, "agents", `${name}.prompt`))
        ? `agents/${name}.prompt did not pass \`stn sync\``
        : undefined,
    sandbox: config.values.sandbox,
  });
}
