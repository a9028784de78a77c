import { fileURLToPath } from "node:url";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { sleep } from "../../src/lib/async.ts";
import { processAlive as isAlive, spawnStn, type StnProcess } from "./stn.ts";

/** The `stn` entry with the test step type `http_get` registered (tests/helpers/stn_http_step.ts). */
export const HTTP_STN = fileURLToPath(new URL("./stn_http_step.ts", import.meta.url));
const CLUSTER_SCRIPT = fileURLToPath(new URL("../../scripts/nats-cluster", import.meta.url));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** A 3-node NATS cluster on loopback, started by scripts/nats-cluster. */
export interface NatsCluster {
  /** The three client URLs, comma-separated (what --nats-url takes). */
  urls: string;
  dir: string;
  /** The pid of node i (0..2). */
  pid(i: number): number;
  stop(): Promise<void>;
}

/** Starts a 3-node cluster through scripts/nats-cluster on free ports, stores in a temp dir. */
export async function startCluster(): Promise<NatsCluster> {
  const dir = await Deno.makeTempDir({ prefix: "stn-cluster-" });
  for (let tries = 0; tries < 20; tries++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    const ports = [0, 1, 2].flatMap((i) => [base + i, base + 2000 + i, base + 4000 + i]);
    if (!(await Promise.all(ports.map(portFree))).every(Boolean)) continue;
    const out = await new Deno.Command(CLUSTER_SCRIPT, { args: ["start", dir, String(base)] }).output();
    if (!out.success) {
      // The logs go with the directory: their ends go into the error, for a failure seen only in CI.
      const logs = [0, 1, 2].map((i) => {
        const text = (() => {
          try {
            return Deno.readTextFileSync(`${dir}/n${i}.log`);
          } catch {
            return "(no log)";
          }
        })();
        return `n${i}.log:\n${text.trimEnd().split("\n").slice(-8).join("\n")}`;
      });
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw new Error(
        `nats-cluster start failed (${out.code}): ${new TextDecoder().decode(out.stderr)}\n${
          logs.join("\n")
        }`,
      );
    }
    const pid = (i: number) => Number(Deno.readTextFileSync(`${dir}/n${i}.pid`).trim());
    const pids = [0, 1, 2].map(pid);
    return {
      urls: new TextDecoder().decode(out.stdout).trim(),
      dir,
      pid,
      stop: async () => {
        await new Deno.Command(CLUSTER_SCRIPT, { args: ["stop", dir] }).output();
        for (let i = 0; i < 40 && pids.some(isAlive); i++) await sleep(50);
        for (const p of pids.filter(isAlive)) Deno.kill(p, "SIGKILL");
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }
  throw new Error("no free ports for a NATS cluster");
}

/** One nats-server with JetStream (no cluster) on a free loopback port, store in a temp dir. */
export async function singleNats(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "stn-nats-" });
  let port = 0;
  while (port === 0) {
    const p = 20_000 + Math.floor(Math.random() * 20_000);
    if (await portFree(p)) port = p;
  }
  const child = new Deno.Command("nats-server", {
    args: ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir],
    stdout: "null",
    stderr: "null",
  }).spawn();
  while (await portFree(port)) await sleep(50);
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A local HTTP server whose answers wait `delayMs` (the I/O a step waits on); it counts each request. */
export interface DelayServer {
  url: string;
  /** Requests per `run|path`. */
  hits: Map<string, number>;
  /** Requests so far. */
  total(): number;
  close(): Promise<void>;
  /** Holds every answer from now until open() (so queued work starts at one instant). */
  gate(): void;
  /** Lets held and later answers go. */
  open(): void;
  /** When the gate last opened (ms since epoch). */
  openedAt: number;
}

/** Starts a DelayServer on a free loopback port; its gate starts open. */
export async function delayServer(delayMs: number): Promise<DelayServer> {
  const hits = new Map<string, number>();
  let release!: () => void;
  let gate: Promise<void> = Promise.resolve();
  // node:http, so close() can drop the connections of clients that died mid-request (a killed worker).
  const server = createHttpServer(async (req, res) => {
    const q = new URL(req.url ?? "/", "http://x").searchParams;
    const key = `${q.get("run")}|${q.get("path")}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    await gate;
    await sleep(delayMs);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true, attempt: Number(q.get("attempt")) }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const ds: DelayServer = {
    url: `http://127.0.0.1:${port}/io`,
    hits,
    total: () => [...hits.values()].reduce((a, b) => a + b, 0),
    close: () => {
      release?.();
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
    open: () => {
      ds.openedAt = Date.now();
      release?.();
    },
    gate: () => {
      gate = new Promise((r) => (release = r));
    },
    openedAt: 0,
  };
  return ds;
}

/** A `stn worker` child process. */
export interface WorkerProcess extends StnProcess {
  name: string;
}

/** Starts `stn worker` (through HTTP_STN) with these flags. */
export function startWorkerProcess(
  options: { env: Record<string, string>; natsUrl: string; name: string; args?: string[] },
): WorkerProcess {
  const args = ["worker", "--nats-url", options.natsUrl, "--name", options.name, ...(options.args ?? [])];
  // A worker that does not stop within a minute is a hang: it is killed so the test fails instead of waiting.
  return { ...spawnStn(args, { env: options.env, main: HTTP_STN, killAfterMs: 60_000 }), name: options.name };
}
