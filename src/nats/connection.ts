import { connect, type NatsConnection } from "@nats-io/transport-node";
import { StationError } from "../errors.ts";

export type { NatsConnection };

/** Connects to NATS, turning an unreachable server into a StationError with a hint. */
export async function connectNats(url: string, name = "stn"): Promise<NatsConnection> {
  try {
    return await connect({
      servers: url,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: 5_000,
    });
  } catch (err) {
    throw new StationError(
      "nats_unreachable",
      `cannot connect to NATS at ${url}: ${(err as Error).message}`,
      {
        hint: "check nats.url / --nats-url, or omit it to let stn start its own nats-server",
        cause: err,
      },
    );
  }
}
