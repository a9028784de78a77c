/** config.yaml's schema: one section per subsystem, each key with its default and description. */
import { z } from "zod";
import { parseDuration } from "../lib/duration.ts";
import { LOG_FORMATS, LOG_LEVELS } from "../log.ts";
import { ModelPrice } from "../telemetry/model_price.ts";
import { API_TOKEN_MIN_LENGTH, API_TOKEN_PATTERN } from "./client_settings.ts";

const port = z.int().min(0).max(65535);

/** A zod type for durations: accepts "30s"-style strings or milliseconds, yields milliseconds. */
export const durationSchema = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({
      code: "custom",
      message: `expected a duration like "30s", "5m" or "1h", got ${JSON.stringify(v)}`,
    });
    return z.NEVER;
  }
  return ms;
});

/**
 * config.yaml, one section per subsystem. Every key can also be set through the environment as
 * STN_<SECTION>_<KEY> (for example STN_SERVER_PORT) and some through flags; see docs/configuration.md.
 * Each key's `.describe()` text is what docs/configuration.md (deno task docs) and errors show.
 */
export const ConfigSchema = z.strictObject({
  server: z.strictObject({
    host: z.string().min(1).default("127.0.0.1").describe("address the API listens on"),
    port: port.default(8585).describe("API port (0 = any free port)"),
    mcp_port: port.default(8586).describe("MCP management server port, /mcp (0 = any free port)"),
    agent_port: port.default(8587).describe("MCP agent server port, /mcp: workflows and agents as tools"),
    mcp_auth: z.enum(["auto", "always"]).default("auto").describe(
      "MCP token rule: auto = the API token off loopback only, as the API; always = on loopback too",
    ),
    mcp_session_idle: durationSchema.default(30 * 60_000).describe(
      "close an MCP session after this long without a request or an open stream (its client re-initializes)",
    ),
    api_token: z.string().min(API_TOKEN_MIN_LENGTH).regex(
      API_TOKEN_PATTERN,
      "letters, digits and . _ ~ + / - only",
    )
      .optional().describe(
        "bearer token required on every route but /health when host is not loopback (also STATION_API_TOKEN)",
      ),
    max_body_bytes: z.int().positive().default(4 * 1024 * 1024).describe(
      "largest JSON/YAML request body, in bytes (default 4 MiB; file uploads have storage limits instead)",
    ),
    public_url: z.url({ protocol: /^https?$/, normalize: true }).optional().describe(
      "the address users open stn at when it is not this machine's (a proxy, a tunnel): its host is accepted as Host, its origin as a page's Origin",
    ),
    allowed_hosts: z.array(
      z.string().regex(/^([a-z0-9_-]+\.)*[a-z0-9_-]+$/i, "a host name only: no scheme, port or path"),
    ).default([]).describe(
      "host names stn answers to besides loopback names (and, off loopback, IP addresses); any other Host is 403 host_not_allowed",
    ),
    header_timeout: durationSchema.default(10_000).describe(
      "a request's headers must arrive within this long of the connection opening or the previous answer (408, then closed; 0 = no limit)",
    ),
    body_idle_timeout: durationSchema.default(30_000).describe(
      "longest pause without a byte in a request body; uploads go on as long as bytes flow (408, then closed; 0 = no limit)",
    ),
  }).prefault({}),
  nats: z.strictObject({
    url: z.string().min(1).optional().describe(
      "connect to this NATS server instead of starting one (may carry user:password@ or token@)",
    ),
    user: z.string().min(1).optional().describe("user name for nats.url"),
    password: z.string().optional().describe("password of nats.user"),
    token: z.string().min(1).optional().describe("token for nats.url"),
    creds_file: z.string().min(1).optional().describe("JWT creds file for nats.url (nsc, NGS)"),
    nkey_file: z.string().min(1).optional().describe("file holding a user nkey seed (SU…) for nats.url"),
    tls_ca_file: z.string().min(1).optional().describe(
      "CA certificate (PEM) that signed nats.url's server certificate",
    ),
    tls_cert_file: z.string().min(1).optional().describe(
      "client certificate (PEM) for a server that verifies clients",
    ),
    tls_key_file: z.string().min(1).optional().describe("private key (PEM) of nats.tls_cert_file"),
    server_bin: z.string().min(1).default("nats-server").describe(
      "nats-server binary for managed mode: a path, or a name looked up on PATH, then in /usr/sbin and the usual places; " +
        "a compiled stn falls back on the one it embeds (docs/install.md)",
    ),
    store_dir: z.string().min(1).optional().describe(
      "JetStream store of the managed server (default $STATION_HOME/nats)",
    ),
    replicas: z.int().min(1).max(5).optional().describe(
      "copies JetStream keeps of the workflow queue and file buckets (default 1 on one server, 3 on a cluster)",
    ),
  }).prefault({}),
  sandbox: z.strictObject({
    enabled: z.boolean().default(true).describe(
      "start the sandbox service (needs a reachable Docker Engine)",
    ),
    docker_host: z.string().min(1).optional().describe(
      "Docker Engine socket path or tcp://host:port (default DOCKER_HOST, else the first standard socket found)",
    ),
    images: z.record(z.string(), z.string().min(1)).default({
      python: "python:3.11-slim",
      node: "node:20-slim",
      bash: "ubuntu:22.04",
    }).describe("runtime name → image (e.g. images.python: stn/python:3.11-local)"),
    allowed_images: z.array(z.string().min(1)).default([]).describe(
      "images a sandbox may use besides those in `images` (empty: only the mapped ones)",
    ),
    labels: z.record(z.string(), z.string()).default({}).describe(
      "extra labels on every sandbox container (`stn up` sets dev.stn.up so `stn down` removes them)",
    ),
    default_runtime: z.string().min(1).default("python").describe("runtime used when none is given"),
    user: z.string().regex(/^\d+:\d+$/).default("1000:1000").describe(
      "uid:gid that runs commands and owns /workspace",
    ),
    allow_network: z.boolean().default(false).describe(
      "allow sessions to ask for a network (otherwise always none)",
    ),
    memory_mb: z.int().min(16).default(2048).describe(
      "memory limit of a container's processes (MiB); its files in /workspace and /tmp are held in RAM on top",
    ),
    disk_mb: z.int().min(1).default(1024).describe(
      "size of a container's /workspace (MiB, in RAM); a write past it fails with ENOSPC (API: 507 sandbox_disk_full)",
    ),
    tmp_mb: z.int().min(1).default(256).describe(
      "size of a container's /tmp (MiB, in RAM); the rest of its filesystem is read-only",
    ),
    cpus: z.number().positive().default(2).describe("CPU limit per container"),
    pids_limit: z.int().min(8).default(256).describe("process limit per container"),
    exec_timeout: durationSchema.default(5 * 60_000).describe("default timeout of one exec or run"),
    max_output_bytes: z.int().min(1).default(1024 * 1024).describe(
      "stdout and stderr cap per exec (each); more is cut and flagged truncated",
    ),
    max_file_size: z.int().min(1).default(10 * 1024 * 1024).describe(
      "largest file fs write/read moves (bytes); larger goes through stage/publish",
    ),
    idle_timeout: durationSchema.default(30 * 60_000).describe("close sessions unused this long"),
    cleanup_interval: durationSchema.default(5 * 60_000).describe("how often idle sessions are looked for"),
    pull_timeout: durationSchema.default(2 * 60_000).describe("how long pulling a missing image may take"),
    channel: z.boolean().default(true).describe(
      "reach each sandbox through one long-lived stream to its supervisor (false: one docker exec per operation)",
    ),
    docker_timeout: durationSchema.default(30_000).describe(
      "deadline of each Docker Engine call a request makes (504 sandbox_timeout past it)",
    ),
    pool: z.record(
      z.string(),
      z.strictObject({
        size: z.int().min(0).max(32).describe("containers kept ready"),
        max_idle: durationSchema.default(10 * 60_000).describe(
          "a ready container older than this is replaced",
        ),
      }),
    ).default({}).describe(
      "warm pool per runtime name or image: {size, max_idle}; opens without a network take a ready container",
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
    run_output_ttl: durationSchema.default(7 * 86_400_000).describe(
      "time to live of a file a run's sandbox publishes to runs/<run>/output/ (default 7d; 0 = never expires)",
    ),
    session_ttl: durationSchema.default(3_600_000).describe(
      "how long a file a sandbox publishes to sessions/<id>/ outlives the session's close (default 1h; 0 = goes with it)",
    ),
    quota_warning: z.number().gt(0).max(1).default(0.9).describe(
      "share of max_total_bytes from which logs, /health and stn doctor warn that the bucket is nearly full",
    ),
    cleanup: z.strictObject({
      enabled: z.boolean().default(true).describe("delete expired files in the background"),
      interval: durationSchema.default(3_600_000).describe(
        "how often expired files are deleted (default 1h)",
      ),
    }).prefault({}),
  }).prefault({}),
  ledger: z.strictObject({
    durability: z.enum(["normal", "fsync", "step"]).default("fsync").describe(
      "step: fsync, and no step (nor agent turn) starts before the outcomes and decisions it follows from are on disk, so after a power loss at most the steps that were running run again; fsync: nothing is acknowledged (an API answer, a step message's ack, a worker's outcome reply) before the commits it rests on are on disk, so it survives power loss; normal: a commit survives a crash of stn, not of the machine (docs/configuration.md#ledger-durability)",
    ),
  }).prefault({}),
  engine: z.strictObject({
    workers: z.int().min(0).max(200).default(10).describe(
      "steps this process executes at once (0 = none: only `stn worker` processes run steps, as with `stn serve --no-local-workers`)",
    ),
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
    queue_max_age: durationSchema.default(7 * 86_400_000).describe(
      "MaxAge of the WORKFLOWS work queue stream: a step message older is dropped (the engine re-sends a step " +
        "still scheduled); longer than any step's timeout (default 7d)",
    ),
  }).prefault({}).refine((e) => e.queue_max_age > e.default_timeout, {
    path: ["queue_max_age"],
    message: "must be longer than engine.default_timeout (a waiting step's message must outlive its timeout)",
  }),
  ai: z.strictObject({
    provider: z.enum(["openai", "anthropic", "gemini", "openai-compatible"]).default("openai").describe(
      "model provider used for a model written without one, and the one ai.base_url and ai.api_key apply to",
    ),
    model: z.string().min(1).default("openai/gpt-4o-mini").describe(
      "default model of agents whose .prompt sets none, as provider/name (e.g. anthropic/claude-sonnet-4-5)",
    ),
    base_url: z.url().optional().describe(
      "API base URL of ai.provider (e.g. http://127.0.0.1:11434/v1 for Ollama); openai then speaks chat completions",
    ),
    api_key: z.string().min(1).optional().describe(
      "API key of ai.provider (default: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY)",
    ),
    prices: z.record(z.string().regex(/^[^/\s]+\/\S+$/, "a model id: provider/name"), ModelPrice).default({})
      .describe(
        "USD per million tokens by model id: {input_per_million, output_per_million, cached_input_per_million?}; " +
          "merged over the built-in prices of common OpenAI, Anthropic and Gemini models (docs/agents.md#cost)",
      ),
    limits: z.record(
      z.string().min(1),
      z.strictObject({
        requests_per_minute: z.int().min(1).optional(),
        tokens_per_minute: z.int().min(1).optional(),
        concurrency: z.int().min(1).optional(),
      }),
    ).default({}).describe(
      'per model ("openai/gpt-4o-mini") or provider ("openai"): requests_per_minute, tokens_per_minute, ' +
        "concurrency; calls wait for capacity and a 429/503's Retry-After instead of failing",
    ),
  }).prefault({}),
  agents: z.strictObject({
    max_tool_output: z.int().min(256).default(10_240).describe(
      "bytes of one tool output an agent's model sees; the rest is cut with a marker saying how much",
    ),
    default_max_steps: z.int().min(1).default(5).describe(
      "model turns of an agent whose .prompt sets no max_steps",
    ),
    timeout: durationSchema.default(15 * 60_000).describe(
      "deadline of a whole agent run whose .prompt sets no timeout",
    ),
    context: z.strictObject({
      max_tokens: z.int().min(1024).optional().describe(
        "context window of agents whose .prompt sets none (default: the model's known window, else 32768)",
      ),
      threshold: z.number().min(0.1).max(1).optional().describe(
        "fraction of max_tokens past which the oldest tool outputs are removed from a run's messages (default 0.8)",
      ),
      strategy: z.enum(["drop_tool_outputs", "none"]).optional().describe(
        "drop_tool_outputs (default): replace the oldest tool outputs with a marker; none: send all, the provider decides",
      ),
      keep_turns: z.int().min(0).optional().describe(
        "the tool outputs of this many latest turns are never removed (default 2)",
      ),
    }).optional().describe("agent context windows (docs/agents.md#context-window)"),
  }).prefault({}),
  mcp: z.strictObject({
    pool_max: z.int().min(1).max(16).default(1).describe(
      "processes (connections) per MCP server shared by agent runs; another starts only while all are busy",
    ),
    idle_timeout: durationSchema.default(5 * 60_000).describe(
      "a shared MCP server with no run using it is stopped after this long (started again on the next run)",
    ),
  }).prefault({}),
  workflows: z.strictObject({
    environment: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/).default("default").describe(
      "the default environment: created empty at start when missing, and the one a bare `stn sync` syncs",
    ),
    sync_on_start: z.boolean().default(true).describe(
      "sync every environments/* folder when the station starts (stn serve: MCP servers too, approved ones only)",
    ),
  }).prefault({}),
  events: z.strictObject({
    retention: durationSchema.default(7 * 86_400_000).describe(
      "how long sent events are listed and their ids remembered (a repeated id within it does nothing)",
    ),
    hook_replay_window: durationSchema.default(86_400_000).describe(
      "how long a webhook delivery is remembered by its delivery id and by its signature and body hash: " +
        "a replay within it (at most events.retention) is answered duplicate and does nothing",
    ),
    hooks: z.record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "hook names match [a-z0-9][a-z0-9_-]*"),
      z.strictObject({
        secret: z.string().min(16, "at least 16 characters"),
        signature: z.enum(["hmac-sha256", "bearer"]).default("hmac-sha256"),
        event: z.string().min(1),
        data: z.string().min(1).optional(),
        id: z.string().min(1).optional(),
      }),
    ).default({}).describe(
      "webhooks: name → {secret, signature: hmac-sha256 (X-Hub-Signature-256, as GitHub signs) or bearer, " +
        "event (a name, may hold ${…} over the body), data and id (JSONata over the body, $headers)}; see docs/events.md",
    ),
  }).prefault({}),
  faker: z.strictObject({
    templates: z.record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "template names match [a-z0-9][a-z0-9_-]*"),
      z.strictObject({
        instruction: z.string().min(1),
        description: z.string().default(""),
        model: z.string().min(1).optional(),
      }),
    ).default({}).describe(
      "`stn faker --ai-template NAME` instructions: name → {instruction, description, model (provider/name)}; " +
        "they add to and override the built-in ones (`stn faker templates` lists them; docs/faker.md)",
    ),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(LOG_LEVELS).default("info").describe("debug, info, warn, error or silent"),
    format: z.enum(LOG_FORMATS).default("text").describe(
      "text, or json: one object a line with time, level, message, request_id, run_id, step, trace_id",
    ),
    agent_turns: z.boolean().default(false).describe(
      "log each agent turn (model, tokens, tool names) to stderr (also STATION_DEBUG=true|1, false|0)",
    ),
  }).prefault({}),
});

/** The validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;
