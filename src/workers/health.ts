/** A `stn worker`'s health and metrics server. */

import { createServer, type Server } from "node:http";
import { hostRefusal, type HostRule } from "../server/origin.ts";
import { type ClientTimeouts, guardSlowClients } from "../server/slow_clients.ts";
import type { StepWorker } from "./worker.ts";

/** What a worker's health server holds open. */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** Prometheus text for a worker's counters (`/metrics`). */
export function workerMetrics(w: StepWorker, concurrency: number): string {
  const labels = `worker="${w.id}",name="${w.name.replaceAll('"', "")}"`;
  const lines: [string, string, number][] = [
    ["stn_worker_concurrency", "gauge", concurrency],
    ["stn_worker_steps_in_flight", "gauge", w.inflight.size],
    ["stn_worker_steps_executed_total", "counter", w.stats.executed],
    ["stn_worker_outcomes_recorded_total", "counter", w.stats.recorded],
    ["stn_worker_outcomes_fenced_total", "counter", w.stats.fenced],
    ["stn_worker_messages_dropped_total", "counter", w.stats.dropped],
    ["stn_worker_steps_released_total", "counter", w.stats.released],
    ["stn_worker_draining", "gauge", w.draining ? 1 : 0],
  ];
  return lines.map(([name, type, v]) => `# TYPE ${name} ${type}\n${name}{${labels}} ${v}\n`).join("");
}

/** Where a worker's health server listens, and the API's Host rule and client timeouts it follows. */
export interface HealthAddress {
  host: string;
  port: number;
  hosts: HostRule;
  timeouts: ClientTimeouts;
}

/** Serves `GET /health` (JSON; 503 while draining) and `GET /metrics` (Prometheus text) for a worker. */
export function serveHealth(w: StepWorker, concurrency: number, at: HealthAddress): Promise<HealthServer> {
  const { host, port } = at;
  const server: Server = createServer((req, res) => {
    const refused = hostRefusal(at.hosts, req.headers.host, req.headers.origin);
    if (refused) {
      res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify(refused.toBody()));
    } else if (req.method === "GET" && req.url === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(workerMetrics(w, concurrency));
    } else if (req.method === "GET" && req.url === "/health") {
      res.writeHead(w.draining ? 503 : 200, { "content-type": "application/json" }).end(JSON.stringify({
        status: w.draining ? "draining" : "ok",
        id: w.id,
        name: w.name,
        in_flight: w.inflight.size,
      }));
    } else {
      res.writeHead(404, { "content-type": "application/json" }).end(
        JSON.stringify({ error: { code: "not_found", message: "try /health or /metrics" } }),
      );
    }
  });
  const unguard = guardSlowClients(server, at.timeouts);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolve({
        port: typeof addr === "object" && addr ? addr.port : port,
        close: () => {
          unguard();
          return new Promise((r) => server.close(() => r()));
        },
      });
    });
  });
}
