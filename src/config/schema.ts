import { z } from "zod";
import { durationSchema } from "../lib/duration.ts";
import { LOG_LEVELS } from "../log.ts";

const port = z.int().min(0).max(65535);

/**
 * config.yaml, one section per subsystem. Every key can also be set through the environment as
 * STN_<SECTION>_<KEY> (for example STN_SERVER_PORT) and some through flags; see README "Configuration".
 * Each key's `.describe()` text is what the README table and errors show.
 */
export const ConfigSchema = z.strictObject({
  server: z.strictObject({
    host: z.string().min(1).default("127.0.0.1").describe("address the API listens on"),
    port: port.default(8585).describe("API port (0 = any free port)"),
    mcp_port: port.default(8586).describe("MCP port"),
    agent_port: port.default(8587).describe("agent MCP port"),
    api_token: z.string().min(16).optional().describe(
      "bearer token required on every route but /health when host is not loopback (also STATION_API_TOKEN)",
    ),
  }).prefault({}),
  nats: z.strictObject({
    url: z.string().min(1).optional().describe("connect to this NATS server instead of starting one"),
    server_bin: z.string().min(1).default("nats-server").describe("nats-server binary for managed mode"),
    store_dir: z.string().min(1).optional().describe(
      "JetStream store of the managed server (default $STATION_HOME/nats)",
    ),
  }).prefault({}),
  engine: z.strictObject({
    workers: z.int().min(1).max(200).default(10).describe("steps this process executes at once"),
    ack_wait: durationSchema.default(30_000).describe(
      "JetStream AckWait for step messages; running steps send in-progress acks well within it",
    ),
    max_deliver: z.int().min(-1).default(-1).describe(
      "JetStream MaxDeliver for step messages (-1 = unlimited; the ledger fences duplicates)",
    ),
    lease: durationSchema.default(15_000).describe(
      "how long a running step's claim lasts without a heartbeat before another worker may take it over",
    ),
    default_timeout: durationSchema.default(300_000).describe("per-step timeout when a state sets none"),
  }).prefault({}),
  workflows: z.strictObject({
    environment: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/).default("default").describe(
      "environment whose workflows/ folder is synced at start and by a bare `stn sync`",
    ),
    sync_on_start: z.boolean().default(true).describe(
      "sync that environment's workflow files when the station starts",
    ),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(LOG_LEVELS).default("info").describe("debug, info, warn, error or silent"),
  }).prefault({}),
});

/** The validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;
