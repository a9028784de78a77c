import { StationClient } from "../../src/client/http.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { singleNats, startWorkerProcess, type WorkerProcess } from "./cluster.ts";
import type { TempHome } from "./home.ts";
import { startServe, waitFor } from "./stn.ts";

/** A station that runs no steps itself and two `stn worker`s (w-1, w-2) on one NATS server. */
export interface TwoWorkers {
  serve: Awaited<ReturnType<typeof startServe>>;
  workers: WorkerProcess[];
  client: StationClient;
  /** Stops the workers, the station and NATS. */
  stop(): Promise<void>;
}

/** Starts the station of `home` and two workers (each with `workerArgs`); returns once both are listed. */
export async function startTwoWorkers(home: TempHome, workerArgs: string[] = []): Promise<TwoWorkers> {
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const workers = ["w-1", "w-2"].map((name) =>
    startWorkerProcess({ env: home.env, natsUrl: nats.url, name, args: workerArgs })
  );
  const client = new StationClient(serve.url);
  const stop = async () => {
    for (const w of workers) await w.stop();
    await serve.stop();
    await nats.stop();
  };
  if (!await waitFor(async () => (await listWorkers(client)).workers.length === 2, 20_000)) {
    const logs = workers.map((w) => w.stderr()).join("\n");
    await stop();
    throw new Error(`the workers did not register:\n${logs}`);
  }
  return { serve, workers, client, stop };
}
