/**
 * Config from its sources: defaults < file < environment variables < flags, each value checked, with its
 * source. The file's data comes read (src/config/load.ts reads config.yaml's YAML): a command without a
 * config file then never loads the YAML package, ~25 ms of its start (docs/benchmarks.md, startup).
 */

import { z } from "zod";
import { usageError } from "../errors.ts";
import { type Config, ConfigSchema } from "./schema.ts";
import { configFileOf, resolveHome, type StationPaths, stationPaths } from "./paths.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import { isStationEnv, STATION_ENV, translateProvider, translateStationKeys } from "./station_keys.ts";

/** A configuration together with where it came from. */
export interface LoadedConfig {
  values: Config;
  paths: StationPaths;
  /** The config file that was read, or null when there was none. */
  file: string | null;
  /** Keys read under another name (Station's) or ignored (unknown), one line each, for stderr. */
  warnings: string[];
}

export interface LoadConfigOptions {
  /** --config PATH; without it $STATION_HOME/config.yaml is read when it exists. */
  configPath?: string;
  /** Overrides from flags, keyed by dotted path ("server.port"). */
  flags?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
}

/** A leaf key of the schema: its dotted path, its env variable names and its zod type. */
export interface ConfigKey {
  path: string;
  env: string[];
  schema: z.ZodType;
  description?: string;
}

// Environment names kept from the Go project, on top of the derived STN_<SECTION>_<KEY>.
const ENV_ALIASES: Record<string, string[]> = {
  "server.api_token": ["STATION_API_TOKEN"],
  "log.agent_turns": ["STATION_DEBUG"],
};

/** The schema under its optional/default/nullable wrappers (each keeps the one it wraps as `def.innerType`). */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while ("innerType" in s.def) s = s.def.innerType as z.ZodType;
  return s;
}

/** Every leaf key of the config schema, for env overrides and docs/configuration.md. */
export function configKeys(schema: z.ZodType = ConfigSchema, prefix: string[] = []): ConfigKey[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>)
      .flatMap(([k, v]) => configKeys(v, [...prefix, k]));
  }
  const path = prefix.join(".");
  return [{
    path,
    env: [
      "STN_" + prefix.join("_").toUpperCase(),
      ...(ENV_ALIASES[path] ?? []),
      ...(STATION_ENV[path] ?? []),
    ],
    schema: inner,
    description: schema.description ?? inner.description,
  }];
}

/** Converts an env string to the key's type where it clearly is one; anything else is left for zod to reject. */
function fromEnv(raw: string, schema: z.ZodType): unknown {
  const type = schema.type;
  if (type === "number" || type === "int") return /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
  if (type === "boolean") {
    return raw === "true" || raw === "1" ? true : raw === "false" || raw === "0" ? false : raw;
  }
  if (type === "array" || type === "record" || type === "object") {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== "object" || node[part] === null || Array.isArray(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

function describeValue(v: unknown): string {
  return v === undefined ? "nothing" : JSON.stringify(v);
}

const article = (word: string) => /^[aeiou]/.test(word) ? "an" : "a";

function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${
        issue.expected === "int" ? "a whole number" : article(issue.expected) + " " + issue.expected
      }`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      return issue.origin === "string"
        ? `expected at least ${issue.minimum} characters`
        : `expected ≥ ${issue.minimum}`;
    case "too_big":
      return issue.origin === "string"
        ? `expected at most ${issue.maximum} characters`
        : `expected ≤ ${issue.maximum}`;
    default:
      return issue.message;
  }
}

/**
 * Removes the keys the schema does not know, so they cannot block a command that does not need them;
 * returns one warning each, with the key probably meant.
 */
function dropUnknownKeys(raw: Record<string, unknown>, fileName: string): string[] {
  const warnings: string[] = [];
  // Each pass finds the unknown keys of the sections that are objects; a section is checked once its own
  // unknown keys are gone, so two passes reach every depth the schema has.
  for (let pass = 0; pass < 3; pass++) {
    const result = ConfigSchema.safeParse(raw, { jitless: true });
    const unknown = result.success ? [] : result.error.issues.filter((i) => i.code === "unrecognized_keys");
    if (unknown.length === 0) break;
    for (const issue of unknown) {
      const holder = issue.path.reduce<unknown>(
        (node, part) => (node as Record<PropertyKey, unknown>)?.[part as PropertyKey],
        raw,
      ) as Record<string, unknown>;
      const at = issue.path.length ? issue.path.join(".") + "." : "";
      const known = [
        ...new Set(
          configKeys().filter((k) => k.path.startsWith(at)).map((k) => k.path.slice(at.length).split(".")[0]),
        ),
      ];
      for (const key of issue.keys) {
        delete holder[key];
        const meant = didYouMean(key, known);
        warnings.push(
          `${fileName}: ${at}${key}: unknown key, ignored${meant ? ` (did you mean ${at}${meant}?)` : ""}`,
        );
      }
    }
  }
  return warnings;
}

/** A config file's path and its data, as read. */
export interface ConfigFile {
  path: string;
  data: Record<string, unknown>;
}

/** The config file options name: --config's, else $STATION_HOME/config.yaml (it may not exist). */
export function configFilePath(options: LoadConfigOptions = {}): string {
  return options.configPath ?? configFileOf(resolveHome(options.env ?? Deno.env.toObject()));
}

/**
 * Config from defaults < the file's data (null: no file) < environment < flags; a bad value fails with its
 * source and key path.
 */
export function resolveConfig(options: LoadConfigOptions, file: ConfigFile | null): LoadedConfig {
  const env = options.env ?? Deno.env.toObject();
  const paths = stationPaths(resolveHome(env));
  const fileName = options.configPath ?? "config.yaml";
  const origins = new Map<string, string>();
  let raw: Record<string, unknown> = {};
  let fileRead: string | null = null;
  const warnings: string[] = [];

  if (file) {
    fileRead = file.path;
    raw = file.data;
    warnings.push(...translateStationKeys(raw, fileName));
  }

  for (const key of configKeys()) {
    for (const name of key.env) {
      const value = env[name];
      if (value === undefined || value === "") continue;
      setPath(raw, key.path, fromEnv(value, key.schema));
      origins.set(key.path, name);
      if (isStationEnv(name)) {
        warnings.push(`${name} is Station's variable: read as ${key.path} (stn's is ${key.env[0]})`);
      }
      break;
    }
  }
  for (const [path, value] of Object.entries(options.flags ?? {})) {
    if (value === undefined) continue;
    setPath(raw, path, value);
    origins.set(path, `--${path.split(".").pop()!.replaceAll("_", "-")}`);
  }

  warnings.push(...translateProvider(raw, origins.get("ai.provider") ?? fileName));
  // Config is parsed once or twice a process: zod's compiled object parser (jit) costs more to build than it
  // saves here (docs/benchmarks.md, client commands). Unknown keys are looked for only when there are some.
  const parse = () => ConfigSchema.safeParse(raw, { reportInput: true, jitless: true });
  let result = parse();
  if (!result.success && result.error.issues.some((i) => i.code === "unrecognized_keys")) {
    warnings.push(...dropUnknownKeys(raw, fileName));
    result = parse();
  }
  if (!result.success) {
    const messages = result.error.issues.map((issue) => {
      const path = issue.path.join(".");
      const source = origins.get(path) ?? fileName;
      const got = (issue as { input?: unknown }).input;
      return `${source}: ${path ? `${path}: ` : ""}${expectation(issue)}, got ${describeValue(got)}`;
    });
    throw usageError(
      "config_invalid",
      messages.join("\n"),
      "docs/configuration.md lists every key, its type and its default",
    );
  }
  return { values: result.data, paths, file: fileRead, warnings };
}
