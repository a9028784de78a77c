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
  storage: z.strictObject({
    bucket: z.string().regex(/^[-\w]+$/, "letters, digits, - and _ only").default("sandbox-files").describe(
      "JetStream object store bucket holding files",
    ),
    max_file_size: z.int().positive().default(100 * 1024 * 1024).describe(
      "largest file accepted, in bytes (default 100 MiB)",
    ),
    max_total_bytes: z.int().positive().default(10 * 1024 * 1024 * 1024).describe(
      "bytes the bucket may hold in all (default 10 GiB)",
    ),
    default_ttl: durationSchema.default(0).describe(
      "time to live of an upload without --ttl (0 = never expires)",
    ),
    cleanup: z.strictObject({
      enabled: z.boolean().default(true).describe("delete expired files in the background"),
      interval: durationSchema.default(3_600_000).describe(
        "how often expired files are deleted (default 1h)",
      ),
    }).prefault({}),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(LOG_LEVELS).default("info").describe("debug, info, warn, error or silent"),
  }).prefault({}),
});

/** The validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;
