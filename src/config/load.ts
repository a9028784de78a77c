/**
 * Loading config.yaml: the file's YAML read into data, then resolved with the defaults, the environment and
 * flags (src/config/resolve.ts). The CLI imports this only when there is a config file to read.
 */

import { errorMessage, usageError } from "../errors.ts";
import { parseYaml, yamlData, YamlLimitError } from "../lib/yaml.ts";
import {
  type ConfigFile,
  configFilePath,
  type LoadConfigOptions,
  type LoadedConfig,
  resolveConfig,
} from "./resolve.ts";

/** The config file options name, read; null when there is none (only --config's must exist). */
export function readConfigFile(options: LoadConfigOptions = {}): ConfigFile | null {
  const file = configFilePath(options);
  const fileName = options.configPath ?? "config.yaml";
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) {
      throw usageError("config_unreadable", `${fileName}: cannot be read: ${errorMessage(err)}`);
    }
    if (options.configPath) {
      throw usageError("config_not_found", `${fileName}: no such file`, "check the --config path");
    }
    return null;
  }
  const doc = parseYaml(text);
  if (doc.errors.length) {
    const e = doc.errors[0];
    const line = e.linePos?.[0];
    throw usageError(
      "config_invalid",
      `${fileName}${line ? `:${line.line}:${line.col}` : ""}: not valid YAML: ${e.message.split("\n")[0]}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = yamlData(doc) ?? {};
  } catch (err) {
    throw usageError(
      "config_invalid",
      `${fileName}: ${errorMessage(err).split("\n")[0]}`,
      err instanceof YamlLimitError ? err.hint : undefined,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw usageError("config_invalid", `${fileName}: expected a mapping of sections (server:, nats:, …)`);
  }
  return { path: file, data: parsed as Record<string, unknown> };
}

/** Loads config: defaults < config file < environment < flags; a bad value fails with its source and key path. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  return resolveConfig(options, readConfigFile(options));
}
