import type { Command } from "./command.ts";
import { type BuildInfo, buildInfo } from "../build/info.ts";
import { loadConfig } from "../config/load.ts";
import { toStationError } from "../errors.ts";
import { chooseNatsServer, type NatsServerSource, natsServerVersion, SOURCE_LABEL } from "../nats/locate.ts";
import { globals, jsonMode } from "./context.ts";
import { fields, render } from "./output.ts";

/** The nats-server stn would run in managed mode (nothing is started or extracted to say it). */
interface NatsServerReport {
  version: string | null;
  path: string | null;
  /** Where it comes from; `external` when nats.url names a server stn does not start. */
  source: NatsServerSource | "external" | null;
  /** Why there is none. */
  problem?: string;
}

/** What `stn version` prints. */
type VersionReport = BuildInfo & { nats_server: NatsServerReport };

async function natsServerReport(configPath: string | undefined): Promise<NatsServerReport> {
  const none = (problem: string): NatsServerReport => ({ version: null, path: null, source: null, problem });
  let config;
  try {
    config = loadConfig({ configPath });
  } catch (err) {
    return none(`the config cannot be read: ${toStationError(err).message}`);
  }
  if (config.values.nats.url) return { version: null, path: null, source: "external" };
  const bin = config.values.nats.server_bin;
  const choice = chooseNatsServer(bin, { binDir: config.paths.binDir });
  if (!choice) return none(`'${bin}' was not found (stn doctor says where it looked)`);
  const version = choice.version ?? await natsServerVersion(choice.path) ?? null;
  return { version, path: choice.path, source: choice.source };
}

function natsText(n: NatsServerReport): string {
  if (n.source === "external") return "external (nats.url): stn starts none";
  if (!n.path) return `none: ${n.problem}`;
  return `${n.version ?? "unknown version"} at ${n.path} (${SOURCE_LABEL[n.source!]})`;
}

function versionText(r: VersionReport): string[] {
  const date = r.build === "checkout" ? "the commit's date: running from a checkout" : "compiled";
  return fields([
    ["stn", r.version],
    ["commit", r.commit ?? "unknown (no git)"],
    ["build date", r.build_date ? `${r.build_date} (${date})` : "unknown (no git)"],
    ["deno", r.deno],
    ["nats-server", natsText(r.nats_server)],
  ]);
}

/** `stn version`: stn's version and build, Deno's version, and the nats-server it uses. */
export function versionCommand(program: Command): void {
  program.command("version")
    .description("print stn's version, git commit, build date, Deno version and the nats-server it uses")
    .addHelpText(
      "after",
      "\nA compiled stn reads its commit and build date from the manifest built into it; run from a " +
        "checkout,\nthey come from git (the commit's date). The nats-server is the one managed mode would run: " +
        "nats.server_bin,\nelse nats-server on PATH and the usual places, else the one a compiled stn embeds. " +
        "`stn --version`\nprints the version number alone and looks nothing up.",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const report: VersionReport = {
        ...await buildInfo(),
        nats_server: await natsServerReport(globals(cmd).config),
      };
      render(report, { json: jsonMode(cmd), text: versionText });
    });
}
