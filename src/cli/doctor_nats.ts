/**
 * How `stn doctor` asks a NATS server whether JetStream answers. The NATS client loads only when doctor
 * checks a server (lazyImport): every other command starts without it.
 */

import type { NatsTarget } from "../nats/connection.ts";
import { errorMessage } from "../errors.ts";
import { lazyImport } from "../lib/lazy_import.ts";

/** stn's NATS connection module: the NATS client loads only when doctor checks a server. */
export const natsModule = () =>
  lazyImport<typeof import("../nats/connection.ts")>("../nats/connection.ts", import.meta.url);

/** Connects and asks JetStream for the account: proves the server runs with JetStream on. */
export async function jetStreamAnswers(target: NatsTarget): Promise<string | undefined> {
  const { connectNats } = await natsModule();
  const { jetstreamManager } = await lazyImport<typeof import("@nats-io/jetstream")>(
    import.meta.resolve("@nats-io/jetstream"),
    import.meta.url,
  );
  const nc = await connectNats(target, "stn-doctor");
  try {
    await (await jetstreamManager(nc)).getAccountInfo();
    return undefined;
  } catch (err) {
    return errorMessage(err);
  } finally {
    await nc.close();
  }
}
