/**
 * Station's (the Go project's) config keys and environment variables, read as their stn equivalents: each
 * one found gives one warning naming the stn key, and keys stn has no use for are ignored with the reason.
 * `stn config migrate` rewrites a file with the same table (docs/migrating-from-station.md#the-config).
 */

import { usageError } from "../errors.ts";

/** A Station key stn reads as one of its own (`to`, a dotted path), its value converted where units differ. */
export interface MovedKey {
  to: string;
  /** The value in stn's terms; undefined: the value is stn's default already, nothing to set. */
  convert?: (value: unknown) => unknown;
}

/** A Station key with no stn equivalent: ignored, with what to do instead. */
export interface DroppedKey {
  instead: string;
}

export type StationKey = MovedKey | DroppedKey;

const minutes = (v: unknown) => typeof v === "number" ? `${v}m` : v;

/** Station's templates carry their own `name` (the key already is it) and may leave `model` empty. */
const fakerTemplates = (v: unknown) =>
  isRecord(v)
    ? Object.fromEntries(
      Object.entries(v).map(([name, t]) => {
        if (!isRecord(t)) return [name, t];
        const { name: _name, model, ...rest } = t;
        return [name, model ? { ...rest, model } : rest];
      }),
    )
    : v;

const OBSERVABILITY =
  "stn exports traces with OTEL_DENO=true and OTEL_EXPORTER_OTLP_ENDPOINT, docs/observability.md";
const OAUTH = "stn reads a provider API key (ai.api_key, OPENAI_API_KEY, ANTHROPIC_API_KEY, …)";

/** Station's keys by dotted path: the top-level ones of its config.yaml, and its `sandbox:` keys. */
export const STATION_KEYS: Record<string, StationKey> = {
  ai_provider: { to: "ai.provider" },
  ai_model: { to: "ai.model" },
  ai_base_url: { to: "ai.base_url" },
  ai_api_key: { to: "ai.api_key" },
  api_port: { to: "server.port" },
  mcp_port: { to: "server.mcp_port" },
  debug: { to: "log.level", convert: (v) => v === true ? "debug" : undefined },
  "sandbox.idle_timeout_minutes": { to: "sandbox.idle_timeout", convert: minutes },
  "sandbox.cleanup_interval_minutes": { to: "sandbox.cleanup_interval", convert: minutes },
  "sandbox.code_mode_enabled": {
    instead: "sandbox tools are the agent's `sandbox:` field (docs/sandboxes.md)",
  },
  "sandbox.backend": { instead: "stn's sandboxes run on the Docker Engine only (docs/sandboxes.md)" },
  "sandbox.docker_image": { instead: "map runtimes to images with sandbox.images (docs/sandboxes.md)" },
  "sandbox.registry_auth": {
    instead: "pull private images with `docker login` beforehand (docs/sandboxes.md)",
  },
  "sandbox.fly_machines": { instead: "stn's sandboxes run on the Docker Engine only (docs/sandboxes.md)" },
  "sandbox.opencode_enabled": { instead: "stn has no coding backend" },
  "sandbox.opencode_server_url": { instead: "stn has no coding backend" },
  "sandbox.opencode_model": { instead: "stn has no coding backend" },
  database_url: {
    instead: "stn keeps its own ledger, $STATION_HOME/stn.db; `stn import station` reads Station's database",
  },
  workspace: { instead: "stn keeps its data in STATION_HOME" },
  ssh_port: { instead: "stn has no SSH console" },
  ssh_host_key_path: { instead: "stn has no SSH console" },
  admin_username: { instead: "stn has no users; off loopback it asks for server.api_token" },
  local_mode: { instead: "stn always runs locally" },
  dev_mode: { instead: "stn always runs locally" },
  encryption_key: {
    instead: "stn stores no encrypted configs: secrets stay in variables.yml or the environment",
  },
  telemetry_enabled: { instead: OBSERVABILITY },
  otel_endpoint: { instead: OBSERVABILITY },
  jaeger_query_url: { instead: OBSERVABILITY },
  telemetry: { instead: OBSERVABILITY },
  ai_auth_type: { instead: OAUTH },
  ai_oauth_token: { instead: OAUTH },
  ai_oauth_refresh_token: { instead: OAUTH },
  ai_oauth_expires_at: { instead: OAUTH },
  cloudship: { instead: "stn does not connect to CloudShip" },
  cloudshipai: { instead: "stn does not connect to CloudShip" },
  lattice: { instead: "several stn processes share one NATS server instead (docs/workers.md)" },
  lattice_orchestration: { instead: "several stn processes share one NATS server instead (docs/workers.md)" },
  webhook: { instead: "stn's incoming webhooks are events.hooks (docs/events.md)" },
  notifications: {
    instead: "stn has no outgoing notifications; watch approvals with `stn workflow approvals list`",
  },
  notify: { instead: "stn has no notify tool; give agents an MCP server that sends messages" },
  coding: { instead: "stn has no coding backend" },
  harness: { instead: "stn has no agentic harness; agents run stn's own loop (docs/agents.md)" },
  faker_templates: { to: "faker.templates", convert: fakerTemplates },
  secrets: { instead: "stn reads secrets from variables.yml and the environment" },
};

/** Station's environment variables that stn reads for one of its keys (after stn's own names). */
export const STATION_ENV: Record<string, string[]> = {
  "server.port": ["STATION_API_PORT", "STN_API_PORT", "API_PORT"],
  "server.mcp_port": ["STATION_MCP_PORT", "STN_MCP_PORT", "MCP_PORT"],
  "ai.provider": ["STATION_AI_PROVIDER"],
  "ai.model": ["STATION_AI_MODEL"],
  "ai.base_url": ["STATION_AI_BASE_URL"],
};

const STATION_ENV_NAMES = new Set(Object.values(STATION_ENV).flat());

/** Whether an environment variable is Station's name for an stn key (its use gets a warning). */
export function isStationEnv(name: string): boolean {
  return STATION_ENV_NAMES.has(name);
}

/** Ollama's OpenAI-style endpoint on its default port. */
export const OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1";

/** The warning for one Station key, naming the stn key that replaces it (or why none does). */
export function stationKeyWarning(source: string, path: string, rule: StationKey): string {
  return "to" in rule
    ? `${source}: ${path} is Station's key: read as ${rule.to} (\`stn config migrate\` rewrites the file)`
    : `${source}: ${path} is Station's key: ignored (${rule.instead})`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function setIfAbsent(target: Record<string, unknown>, path: string, value: unknown): boolean {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isRecord(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1];
  if (node[last] !== undefined) return false;
  node[last] = value;
  return true;
}

/**
 * Moves Station's keys of a parsed config file to their stn paths (an stn key written in the file wins) and
 * removes the ones stn has no use for; returns one warning per key found.
 */
export function translateStationKeys(raw: Record<string, unknown>, source: string): string[] {
  const warnings: string[] = [];
  for (const [path, rule] of Object.entries(STATION_KEYS)) {
    const [section, key] = path.includes(".") ? path.split(".") : [undefined, path];
    const holder = section === undefined ? raw : raw[section];
    if (!isRecord(holder) || !(key in holder)) continue;
    const value = holder[key];
    delete holder[key];
    warnings.push(stationKeyWarning(source, path, rule));
    if (!("to" in rule)) continue;
    const converted = rule.convert ? rule.convert(value) : value;
    if (converted !== undefined) setIfAbsent(raw, rule.to, converted);
  }
  return warnings;
}

/**
 * Station's provider names in `ai.provider`: `ollama` becomes openai-compatible at Ollama's default URL
 * (or the one given, with /v1 added); `cloudshipai` stops with what to use instead.
 */
export function translateProvider(raw: Record<string, unknown>, source: string): string[] {
  const ai = raw.ai;
  if (!isRecord(ai)) return [];
  if (ai.provider === "cloudshipai") {
    throw usageError(
      "config_invalid",
      `${source}: ai.provider: "cloudshipai" is Station's CloudShip AI, which stn does not speak`,
      "use openai, anthropic, gemini, or openai-compatible with ai.base_url for any OpenAI-style server " +
        "(docs/migrating-from-station.md#the-config)",
    );
  }
  if (ai.provider !== "ollama") return [];
  ai.provider = "openai-compatible";
  if (typeof ai.base_url === "string" && /^https?:\/\/[^/]+\/?$/.test(ai.base_url)) {
    ai.base_url = ai.base_url.replace(/\/?$/, "/v1");
  }
  ai.base_url ??= OLLAMA_BASE_URL;
  return [
    `${source}: ai.provider "ollama" is Station's name: read as openai-compatible at ${ai.base_url} ` +
    `(set ai.provider: openai-compatible and ai.base_url)`,
  ];
}
