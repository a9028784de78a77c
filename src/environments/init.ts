import { dirname, join } from "node:path";
import { isMap } from "yaml";
import { parseYaml, yamlData } from "../lib/yaml.ts";
import { makePrivateDir } from "../lib/private_files.ts";
import type { StationPaths } from "../config/paths.ts";
import { ConfigSchema } from "../config/schema.ts";
import { errorMessage, usageError } from "../errors.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { ENVIRONMENT_FOLDERS } from "./environments.ts";
import {
  EXAMPLE_AGENT,
  EXAMPLE_MCP_CONFIG,
  EXAMPLE_WORKFLOW,
  exampleVariables,
} from "../environment_files/examples.ts";
import { exists } from "./files.ts";
import { VARIABLES_FILE } from "../environment_files/variables.ts";
import { STATION_KEYS } from "../config/station_keys.ts";

/**
 * `stn init`: writes the model choice into config.yaml and creates `environments/default/` with the
 * examples. Idempotent and never destructive: a key already in config.yaml keeps its value unless the
 * user asked for another one with --force, and an existing file of the environment is never replaced.
 */

export const PROVIDERS = ["openai", "anthropic", "gemini", "openai-compatible"] as const;
export type Provider = typeof PROVIDERS[number];

/** The model `stn init` picks for a provider when none is given. */
export const DEFAULT_MODELS: Record<Provider, string | undefined> = {
  openai: "openai/gpt-4o-mini",
  anthropic: "anthropic/claude-3-5-haiku-latest",
  gemini: "gemini/gemini-2.5-flash",
  "openai-compatible": undefined,
};

/** Where each provider's key comes from (shown in the next steps). */
export const KEY_VARIABLES: Record<Provider, string | undefined> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  gemini: "GEMINI_API_KEY",
  "openai-compatible": undefined,
};

/** The `ai.*` keys to write; `explicit` are the ones the user named (flags or answers). */
export interface InitChoice {
  values: { provider: Provider; model: string; base_url?: string };
  explicit: Set<"provider" | "model" | "base_url">;
  force?: boolean;
}

export interface InitReport {
  config: {
    path: string;
    written: boolean;
    /** Keys set by this run. */
    set: string[];
    /** Keys that already had another value and kept it (no --force). */
    kept: { key: string; value: unknown; wanted: string }[];
    /** Station's keys in the file: it is Station's config, which stn reads and never writes. */
    station_keys: string[];
  };
  /** station_home: Station's environment folder, which `stn init` adds no examples to. */
  environment: { path: string; created: string[]; kept: string[]; station_home: boolean };
  provider: Provider;
  model: string;
}

/** A model name as `provider/name` (a bare name gets the provider's prefix). */
export function qualifiedModel(provider: Provider, model: string): string {
  return model.includes("/") ? model : `${provider}/${model}`;
}

/** The `ai` values already in a config file, for defaults when the user names none. */
export async function existingAi(file: string): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(file).catch(() => "");
  const doc = parseYaml(text);
  // A file that does not parse, or passes a limit, names no defaults; loading the config reports it.
  const ai = doc.errors.length ? undefined : (() => {
    try {
      return (yamlData(doc) as { ai?: unknown } | null)?.ai;
    } catch {
      return undefined;
    }
  })();
  return ai && typeof ai === "object" ? ai as Record<string, unknown> : {};
}

async function writeConfig(file: string, choice: InitChoice): Promise<InitReport["config"]> {
  let text: string | null = null;
  let mode = 0o600;
  try {
    text = await Deno.readTextFile(file);
    mode = (await Deno.stat(file)).mode! & 0o777;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const doc = parseYaml(text ?? "");
  if (doc.errors.length || (doc.contents !== null && !isMap(doc.contents))) {
    throw usageError(
      "config_invalid",
      `${file}: not a YAML map (${doc.errors[0]?.message.split("\n")[0] ?? "expected sections such as ai:"})`,
      "fix or move the file, then run `stn init` again; it was not changed",
    );
  }
  const report: InitReport["config"] = { path: file, written: false, set: [], kept: [], station_keys: [] };
  if (isMap(doc.contents)) {
    report.station_keys = doc.contents.items.map((p) =>
      String((p.key as { value?: unknown })?.value ?? p.key)
    )
      .filter((k) => k in STATION_KEYS);
    if (report.station_keys.length) return report;
  }
  for (const [key, value] of Object.entries(choice.values)) {
    if (value === undefined) continue;
    const current = doc.getIn(["ai", key]);
    if (current === value) continue;
    const named = choice.explicit.has(key as "provider");
    if (current === undefined || (named && choice.force)) {
      doc.setIn(["ai", key], value);
      report.set.push(`ai.${key}`);
    } else if (named) report.kept.push({ key: `ai.${key}`, value: current, wanted: value });
  }
  if (report.set.length === 0) return report;
  let data: unknown;
  try {
    data = yamlData(doc);
  } catch (err) {
    throw usageError(
      "config_invalid",
      `${file}: ${errorMessage(err).split("\n")[0]} (the file was not changed)`,
      "fix the file, then run `stn init` again",
    );
  }
  const checked = ConfigSchema.safeParse(data);
  // Unknown keys are warned about when the config is loaded; only a bad value stops the write.
  const bad = checked.success ? undefined : checked.error.issues.find((i) => i.code !== "unrecognized_keys");
  if (bad) {
    throw usageError(
      "config_invalid",
      `${file}: ${bad.path.length ? `${bad.path.join(".")}: ` : ""}${bad.message} (the file was not changed)`,
      "docs/configuration.md lists every key",
    );
  }
  makePrivateDir(dirname(file));
  await writeFileAtomic(file, doc.toString(), { mode });
  report.written = true;
  return report;
}

async function writeExamples(paths: StationPaths): Promise<InitReport["environment"]> {
  const dir = join(paths.environments, "default");
  const workspace = join(paths.home, "workspace");
  // Station would load example files added to its environment as its own agents and MCP servers.
  const stationHome = paths.foreignDb !== null && await exists(dir);
  const report: InitReport["environment"] = { path: dir, created: [], kept: [], station_home: stationHome };
  if (stationHome) return report;
  makePrivateDir(paths.home);
  for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(dir, f), { recursive: true });
  await Deno.mkdir(workspace, { recursive: true });
  const files: [string, string, number][] = [
    ["agents/hello.prompt", EXAMPLE_AGENT, 0o644],
    ["mcp-configs/filesystem.json", EXAMPLE_MCP_CONFIG, 0o644],
    ["workflows/hello.workflow.yaml", EXAMPLE_WORKFLOW, 0o644],
    [VARIABLES_FILE, exampleVariables(workspace), 0o600],
  ];
  for (const [path, text, mode] of files) {
    const target = join(dir, path);
    if (await exists(target)) {
      report.kept.push(path);
      continue;
    }
    await writeFileAtomic(target, text, { mode });
    report.created.push(path);
  }
  return report;
}

/** Runs `stn init` against a station home: config first (so a bad config.yaml stops before any file is made). */
export async function initStation(
  paths: StationPaths,
  configFile: string,
  choice: InitChoice,
): Promise<InitReport> {
  const config = await writeConfig(configFile, choice);
  const environment = await writeExamples(paths);
  return { config, environment, provider: choice.values.provider, model: choice.values.model };
}
