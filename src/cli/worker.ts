import type { Command } from "./command.ts";
import { usageError } from "../errors.ts";
import { log } from "../log.ts";
import { listWorkers, type WorkerList } from "../client/workers.ts";
import { commandConfig, jsonMode, numberFlag, runtimeOf, withStation } from "./context.ts";
import { render, table } from "./output.ts";
import { watchFlag, watchList } from "./watch.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

function positive(flag: string, value: string, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) {
    throw usageError(
      "invalid_usage",
      `${flag} must be a whole number from 1 to ${max}, not ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** `stn worker`: runs steps for a station over its NATS cluster, until SIGINT/SIGTERM (then drains). */
export function workerCommand(program: Command): void {
  program.command("worker")
    .description(
      "run workflow steps for a station on this machine, pulled from its NATS cluster (docs/workers.md)",
    )
    .option("--nats-url <urls>", "the station's NATS server or cluster, comma-separated (nats.url)")
    .option("--queue <name>", "serve this task queue (repeatable; default: the default queue)", collect)
    .option("--concurrency <n>", "steps run at once", "10")
    .option("--name <name>", "name shown in `stn workers` (default: host:pid)")
    .option("--port <n>", "serve /health and /metrics on this port (server.host; 0 = any free port)")
    .option(
      "--drain-timeout <seconds>",
      "on SIGTERM, how long in-flight steps may take before they are handed back",
      "30",
    )
    .option("--log-level <level>", "debug, info, warn, error or silent (log.level)")
    .action(async (opts: {
      natsUrl?: string;
      queue?: string[];
      concurrency: string;
      name?: string;
      port?: string;
      drainTimeout: string;
      logLevel?: string;
    }, cmd: Command) => {
      const concurrency = positive("--concurrency", opts.concurrency, 1000);
      const graceMs = positive("--drain-timeout", opts.drainTimeout, 86_400) * 1000;
      const config = await commandConfig(cmd, { "nats.url": opts.natsUrl, "log.level": opts.logLevel });
      const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
      let onSignal!: () => void;
      const signalled = new Promise<void>((resolve) => (onSignal = resolve));
      for (const s of signals) Deno.addSignalListener(s, onSignal);
      try {
        const port = numberFlag(opts.port);
        if (port !== undefined && typeof port !== "number") {
          throw usageError("invalid_usage", `--port must be a port number, not ${JSON.stringify(opts.port)}`);
        }
        const running = await runtimeOf(cmd).startWorker(config, { // the runtime loads only for this command
          queues: [...new Set(opts.queue ?? ["default"])],
          concurrency,
          name: opts.name,
          port,
        });
        const { worker } = running;
        log.info(`stn worker ${worker.name} running`, {
          id: worker.id,
          nats: running.url,
          queues: (opts.queue ?? ["default"]).join(","),
          concurrency,
          ...(running.health
            ? { health: `http://${config.values.server.host}:${running.health.port}/health` }
            : {}),
        });
        await signalled;
        log.info("stn worker draining", { in_flight: worker.inflight.size });
        await running.stop(graceMs);
        log.info("stn worker stopped", { executed: worker.stats.executed, released: worker.stats.released });
      } finally {
        for (const s of signals) Deno.removeSignalListener(s, onSignal);
      }
    });
}

/** `stn workers`: the live workers of the station, the queues whose steps wait for one, queued agent runs. */
export function workersCommand(program: Command): void {
  const HEADER = ["NAME", "ID", "QUEUES", "IN FLIGHT", "AGENT STEPS", "LAST HEARTBEAT", "STATE"];
  const row = (w: WorkerList["workers"][number]) => [
    w.name,
    w.id,
    w.queues.join(","),
    `${w.in_flight.length}/${w.concurrency}`,
    // Agent steps share its slots; "station": it hands them to the station (an older worker).
    w.agents ? `up to ${w.concurrency}` : "station",
    w.last_heartbeat,
    w.draining ? "draining" : "running",
  ];
  watchFlag(
    program.command("workers")
      .description(
        "list the live `stn worker` processes: queues, concurrency, in-flight steps, agent steps, last heartbeat",
      ),
  ).action(async (opts: { watch?: boolean }, cmd: Command) => {
    await withStation(cmd, async (client) => {
      if (opts.watch) {
        return await watchList({
          json: jsonMode(cmd),
          read: async () => (await listWorkers(client)).workers,
          key: (w) => w.id,
          header: HEADER,
          row,
        });
      }
      render(await listWorkers(client), {
        json: jsonMode(cmd),
        text: (r) => [
          ...(r.workers.length === 0 ? ["no live workers"] : table(HEADER, r.workers.map(row))),
          `local workers: ${r.local_workers === 0 ? "none (--no-local-workers)" : r.local_workers}`,
          ...r.unserved.map((u) => `waiting for a worker on queue ${u.queue}: ${u.waiting} step(s)`),
          ...r.queued_agent_runs.map((q) => `agent runs queued on ${q.queue}: ${q.waiting}`),
        ],
      });
    });
  });
}
