/** `stn init`: the model choice and the default environment's examples, asked for on a terminal. */

import { type Command, Option } from "./command.ts";
import { resolveHome, stationPaths } from "../config/paths.ts";
import {
  DEFAULT_MODELS,
  existingAi,
  type InitChoice,
  type InitReport,
  initStation,
  KEY_VARIABLES,
  type Provider,
  PROVIDERS,
  qualifiedModel,
} from "../environments/init.ts";
import { usageError } from "../errors.ts";
import { globals, jsonMode } from "./context.ts";
import { render } from "./output.ts";

interface InitFlags {
  provider?: Provider;
  model?: string;
  baseUrl?: string;
  yes?: boolean;
  force?: boolean;
}

/** Asks on the terminal, with a default taken on Enter. */
function ask(question: string, fallback?: string): string | undefined {
  const answer = prompt(`${question}${fallback ? ` [${fallback}]` : ""}:`)?.trim();
  return answer || fallback;
}

/** The choice from flags, then (on a terminal) answers, then config.yaml's values, then defaults. */
async function choose(flags: InitFlags, configFile: string, interactive: boolean): Promise<InitChoice> {
  const current = await existingAi(configFile);
  const explicit: InitChoice["explicit"] = new Set();
  let provider = flags.provider;
  if (provider) explicit.add("provider");
  else if (interactive) {
    const answer = ask(`Model provider (${PROVIDERS.join(", ")})`, String(current.provider ?? "openai"));
    if (!PROVIDERS.includes(answer as Provider)) {
      throw usageError(
        "invalid_usage",
        `unknown provider ${JSON.stringify(answer)}`,
        `one of ${PROVIDERS.join(", ")}`,
      );
    }
    provider = answer as Provider;
    if (provider !== current.provider) explicit.add("provider");
  }
  provider ??= PROVIDERS.includes(current.provider as Provider) ? current.provider as Provider : "openai";
  const sameProvider = provider === (current.provider ?? provider);
  const fallbackModel = (sameProvider && typeof current.model === "string" ? current.model : undefined) ??
    DEFAULT_MODELS[provider];
  let model = flags.model;
  if (!model && interactive) model = ask("Default model (provider/name)", fallbackModel);
  // A model named, or a new provider (whose model goes with it), is the user's choice, not a default.
  if ((model && qualifiedModel(provider, model) !== current.model) || !sameProvider) explicit.add("model");
  model ??= fallbackModel;
  let baseUrl = flags.baseUrl;
  if (!baseUrl && interactive && provider === "openai-compatible") {
    baseUrl = ask("Base URL of the server (e.g. http://127.0.0.1:11434/v1)", current.base_url as string);
  }
  if (baseUrl) explicit.add("base_url");
  if (provider === "openai-compatible" && (!model || !(baseUrl ?? current.base_url))) {
    throw usageError(
      "invalid_usage",
      "--provider openai-compatible needs --model and --base-url",
      "e.g. stn init --provider openai-compatible --base-url http://127.0.0.1:11434/v1 --model llama3.1",
    );
  }
  return {
    values: { provider, model: qualifiedModel(provider, model!), ...(baseUrl ? { base_url: baseUrl } : {}) },
    explicit,
    force: flags.force,
  };
}

/** The commands `stn init` suggests next. */
function nextSteps(report: InitReport): string[] {
  if (report.environment.station_home) {
    return ["stn import station --dry-run", "stn config migrate", "stn agent list"];
  }
  const key = KEY_VARIABLES[report.provider];
  return [
    "stn env show default",
    `stn workflow run hello --input '{"name": "Ada"}'`,
    `${key ? `export ${key}=…; ` : ""}stn agent run hello "Say hello in five words"`,
  ];
}

function text(r: InitReport & { next: string[] }): string[] {
  const lines: string[] = [];
  const c = r.config;
  if (c.station_keys.length) {
    lines.push(
      `config: ${c.path} is Station's (${c.station_keys.join(", ")}): left as it is`,
      "  stn reads its keys as its own; `stn config migrate` writes an stn config from it",
    );
  } else {lines.push(
      c.written ? `config: set ${c.set.join(", ")} in ${c.path}` : `config: ${c.path} unchanged`,
    );}
  for (const k of c.kept) {
    lines.push(
      `  kept ${k.key}: ${JSON.stringify(k.value)} (asked ${JSON.stringify(k.wanted)}; --force replaces it)`,
    );
  }
  const e = r.environment;
  lines.push(
    e.station_home
      ? `environment default: ${e.path} is Station's: no examples added (stn syncs its agents as they are)`
      : e.created.length
      ? `environment default: created ${e.created.join(", ")} in ${e.path}`
      : `environment default: ${e.path} already set up`,
  );
  if (e.created.length && e.kept.length) lines.push(`  kept as they were: ${e.kept.join(", ")}`);
  lines.push("", "Next, try:", ...r.next.map((n) => `  ${n}`));
  return lines;
}

/** `stn init`: config.yaml and the default environment, with examples; safe to run again. */
export function initCommand(program: Command): void {
  program.command("init")
    .description(
      "set up $STATION_HOME: the model in config.yaml and environments/default with an example agent, " +
        "MCP config and workflow (never overwrites; run it again any time)",
    )
    .addOption(new Option("--provider <name>", "model provider").choices(PROVIDERS))
    .option("--model <name>", "default model, provider/name or a name of the provider's")
    .option("--base-url <url>", "the provider's API URL (Ollama, vLLM, any OpenAI-compatible server)")
    .option("-y, --yes", "ask nothing: flags, config.yaml's values or defaults")
    .option("-f, --force", "replace config.yaml values that differ from the flags given")
    .action(async (flags: InitFlags, cmd: Command) => {
      const json = jsonMode(cmd);
      const paths = stationPaths(resolveHome());
      const configFile = globals(cmd).config ?? paths.config;
      const interactive = !flags.yes && !json && Deno.stdin.isTerminal();
      const report = await initStation(paths, configFile, await choose(flags, configFile, interactive));
      render({ ...report, next: nextSteps(report) }, { json, text });
    });
}
