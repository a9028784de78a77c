/**
 * `stn doctor`: checks what the default commands need (Deno, nats-server, Docker, the home) and says how to
 * fix it.
 */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { dirname, join } from "node:path";
import { answers } from "../client/discovery.ts";
import { loadConfig } from "../config/load.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import { resolveHome, stationPaths } from "../config/paths.ts";
import { ConfigSchema } from "../config/schema.ts";
import { jetStreamAnswers, natsModule } from "./doctor_nats.ts";
import { errorMessage, StationError, toStationError } from "../errors.ts";
import type { Health } from "../contract/health.ts";
import { formatBytes } from "../files/size.ts";
import { programSearchDirs } from "../lib/programs.ts";
import { openToOthers } from "../lib/private_files.ts";
import { locateNatsServer, natsServerVersion, SOURCE_LABEL } from "../nats/locate.ts";
import { setLogLevel } from "../log.ts";
import { ManagedNatsServer } from "../nats/server.ts";
import { isAlive } from "../lib/process_alive.ts";
import { readServerFile } from "../config/server_file.ts";
import { explainDockerError, resolveDockerHost } from "../sandbox/docker_host.ts";
import { globals, jsonMode } from "./context.ts";
import { fail, render, type Style } from "./output.ts";

/** ok; warn: something optional is missing; fail: a default command (serve, an embedded run) cannot work. */
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

/** One line of `stn doctor`: what was checked, what was found, and the fix when it is not ok. */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

const MIN_NATS = [2, 9];
const LOW_SPACE_BYTES = 1024 ** 3;

function denoCheck(): Check {
  const version = Deno.version.deno;
  const detail = `${version} (${Deno.execPath()})`;
  return version.startsWith("2.9.") ? { name: "deno", status: "ok", detail } : {
    name: "deno",
    status: "warn",
    detail: `${detail}: stn is built and tested with 2.9.x`,
    fix: "scripts/setup",
  };
}

/** The config, or the defaults with a failed check saying what is wrong in it. */
function configCheck(configPath: string | undefined): { config: LoadedConfig; check: Check } {
  try {
    const config = loadConfig({ configPath });
    const file = config.file ?? "no config.yaml (defaults)";
    return {
      config,
      check: config.warnings.length
        ? {
          name: "config",
          status: "warn",
          detail: [file, ...config.warnings].join("\n"),
          fix: "`stn config migrate` rewrites Station's keys; remove the keys it ignores",
        }
        : { name: "config", status: "ok", detail: file },
    };
  } catch (err) {
    const e = err instanceof StationError ? err : new StationError("config_invalid", String(err));
    const home = resolveHome();
    return {
      config: { values: ConfigSchema.parse({}), paths: stationPaths(home), file: null, warnings: [] },
      check: {
        name: "config",
        status: "fail",
        detail: e.message,
        fix: e.hint ?? "correct the value it names",
      },
    };
  }
}

async function natsCheck(config: LoadedConfig): Promise<Check> {
  const { url, server_bin } = config.values.nats;
  const name = "nats-server";
  if (url) {
    try {
      const problem = await jetStreamAnswers(
        (await natsModule()).natsTarget({ ...config.values.nats, url }),
      );
      return problem
        ? {
          name,
          status: "fail",
          detail: `${url}: JetStream: ${problem}`,
          fix: "enable JetStream on it (-js)",
        }
        : { name, status: "ok", detail: `external ${url}, JetStream on` };
    } catch (err) {
      return { name, status: "fail", detail: errorMessage(err), fix: "start it, or unset nats.url" };
    }
  }
  let bin: string;
  let source: string;
  try {
    const located = await locateNatsServer(server_bin, { binDir: config.paths.binDir });
    [bin, source] = [located.path, SOURCE_LABEL[located.source]];
  } catch (err) {
    const e = toStationError(err);
    if (e.code !== "nats_server_not_found") {
      return { name, status: "fail", detail: e.message, fix: e.hint ?? "" };
    }
    const where = server_bin.includes("/")
      ? ""
      : ` in ${programSearchDirs().join(", ")} (PATH, then the usual places)`;
    return {
      name,
      status: "fail",
      detail: `'${server_bin}' not found${where}`,
      fix: "sudo apt-get install nats-server (macOS: brew install nats-server), or set nats.server_bin " +
        "to its path, or use a running server with nats.url",
    };
  }
  const version = (await natsServerVersion(bin))?.split(".").map(Number);
  const shown = `${version ? `v${version.join(".")}` : "unknown version"} (${source})`;
  if (!version || version[0] < MIN_NATS[0] || (version[0] === MIN_NATS[0] && version[1] < MIN_NATS[1])) {
    return {
      name,
      status: "fail",
      detail: `${bin}: ${shown}, stn needs ${MIN_NATS.join(".")} or newer`,
      fix: "install a newer nats-server, or set nats.server_bin to one",
    };
  }
  // Start it as stn would (JetStream, loopback, a free port) on a scratch store, and ask JetStream.
  const scratch = Deno.makeTempDirSync({ prefix: "stn-doctor-" });
  try {
    const server = await ManagedNatsServer.start({
      bin,
      storeDir: join(scratch, "store"),
      pidFile: join(scratch, "nats.pid"),
    });
    try {
      const problem = await jetStreamAnswers({ url: server.url, ...server.credentials });
      return problem
        ? {
          name,
          status: "fail",
          detail: `${bin} ${shown}: JetStream: ${problem}`,
          fix: "use a JetStream build",
        }
        : { name, status: "ok", detail: `${bin} ${shown}, JetStream on` };
    } finally {
      await server.stop();
    }
  } catch (err) {
    const e = err as StationError;
    return { name, status: "fail", detail: `${bin} ${shown}: ${e.message}`, fix: e.hint ?? "see its output" };
  } finally {
    Deno.removeSync(scratch, { recursive: true });
  }
}

async function dockerChecks(config: LoadedConfig): Promise<Check[]> {
  const sandbox = config.values.sandbox;
  if (!sandbox.enabled) {
    return [{ name: "docker", status: "skip", detail: "sandbox.enabled: false (no sandboxes)" }];
  }
  const { host, source } = resolveDockerHost(sandbox.docker_host);
  const { dockerClient } = await lazyImport<typeof import("../sandbox/docker.ts")>(
    "../sandbox/docker.ts",
    import.meta.url,
  );
  const docker = dockerClient(host);
  try {
    await docker.ping();
  } catch (err) {
    // Only sandboxes need Docker: a warning, like the runtime's.
    const problem = explainDockerError(err, host);
    return [{ name: "docker", status: "warn", detail: `${problem.message} (${source})`, fix: problem.hint }];
  }
  const checks: Check[] = [{ name: "docker", status: "ok", detail: `reachable at ${host} (${source})` }];
  for (const [runtime, image] of Object.entries(sandbox.images)) {
    const name = `image ${runtime}`;
    try {
      await docker.getImage(image).inspect();
      checks.push({ name, status: "ok", detail: `${image} is present` });
    } catch {
      checks.push({
        name,
        status: "warn",
        detail: `${image} is not present locally: it is pulled on first use (needs a registry)`,
        fix: `docker pull ${image}, or map sandbox.images.${runtime} to a local image`,
      });
    }
  }
  return checks;
}

/** The directory itself, or the nearest ancestor that exists (where it would be created). */
function existingDir(path: string): string {
  for (let dir = path;; dir = dirname(dir)) {
    try {
      if (Deno.statSync(dir).isDirectory || dir === dirname(dir)) return dir;
    } catch {
      if (dir === dirname(dir)) return dir;
    }
  }
}

async function homeCheck(home: string): Promise<Check> {
  const name = "STATION_HOME";
  const dir = existingDir(home);
  try {
    Deno.removeSync(Deno.makeTempFileSync({ dir, prefix: ".stn-doctor-" }));
  } catch (err) {
    return {
      name,
      status: "fail",
      detail: `${home}${dir === home ? "" : ` (would be created in ${dir})`} is not writable: ${
        errorMessage(err)
      }`,
      fix: "give this user write access to it, or set STATION_HOME to a directory it owns",
    };
  }
  // node:fs is loaded here only: every command pays for what main.ts imports statically.
  const { statfsSync } = await import("node:fs");
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  const shown = `${(free / 1024 ** 3).toFixed(1)} GiB free`;
  return free < LOW_SPACE_BYTES
    ? { name, status: "warn", detail: `${home}: only ${shown}`, fix: "free space, or move STATION_HOME" }
    : { name, status: "ok", detail: `${home} (${dir === home ? "writable" : "will be created"}, ${shown})` };
}

/**
 * Whether others may read the station's home or ledger. stn creates them private (0700, 0600) but never
 * changes the mode of what already exists, so a home made before (or by hand) is only warned about.
 */
function privacyCheck(paths: { home: string; db: string }): Check {
  const name = "permissions";
  const home = openToOthers(paths.home);
  const db = openToOthers(paths.db);
  if (home === undefined && db === undefined) {
    return { name, status: "ok", detail: `${paths.home} and its ledger are readable by this user only` };
  }
  const octal = (mode: number) => mode.toString(8).padStart(4, "0");
  const open = [
    ...(home !== undefined ? [`${paths.home} is ${octal(home)}`] : []),
    ...(db !== undefined ? [`${paths.db} is ${octal(db)}`] : []),
  ];
  const fixes = [
    ...(home !== undefined ? [`chmod 700 ${paths.home}`] : []),
    ...(db !== undefined ? [`chmod 600 ${paths.db}*`] : []),
  ];
  return {
    name,
    status: "warn",
    detail: `${open.join(", ")}: other local users can read it (every run's input and output)`,
    fix: fixes.join(" && "),
  };
}

/** server.json and the API port: a live server, a stale file, or a port another program holds. */
async function serverChecks(config: LoadedConfig): Promise<Check[]> {
  const path = config.paths.serverJson;
  const file = readServerFile(path);
  const live = file !== null && await answers(file.url);
  const serverJson: Check = !file
    ? {
      name: "server.json",
      status: "ok",
      detail: "no stn serve running: commands start an embedded runtime",
    }
    : live
    ? { name: "server.json", status: "ok", detail: `stn serve (pid ${file.pid}) answers at ${file.url}` }
    : {
      name: "server.json",
      status: "warn",
      detail: `stale: pid ${file.pid} ${isAlive(file.pid) ? "does not answer" : "is gone"} at ${file.url}`,
      fix: `commands ignore it; remove it with: rm ${path}`,
    };
  const { host, port } = config.values.server;
  const name = "api port";
  if (live && new URL(file.url).port === String(port)) {
    return [serverJson, { name, status: "ok", detail: `${host}:${port} is served by stn serve` }];
  }
  if (port === 0) return [serverJson, { name, status: "ok", detail: "server.port 0: any free port" }];
  try {
    Deno.listen({ hostname: host, port }).close();
    return [serverJson, { name, status: "ok", detail: `${host}:${port} is free for stn serve` }];
  } catch (err) {
    return [serverJson, {
      name,
      status: "warn",
      detail: `stn serve cannot listen on ${host}:${port}: ${errorMessage(err)}`,
      fix: "stop what uses it, or set server.port (STN_SERVER_PORT, serve --port)",
    }];
  }
}

/** How full the running server's file store is (its /health); skipped when no stn serve runs. */
async function storageCheck(config: LoadedConfig): Promise<Check> {
  const name = "file store";
  const file = readServerFile(config.paths.serverJson);
  if (!file || !await answers(file.url)) return { name, status: "skip", detail: "no stn serve running" };
  try {
    const res = await fetch(`${file.url}/health`, { signal: AbortSignal.timeout(5000) });
    const storage = (await res.json() as Health).storage;
    if (!storage || storage.status === "unknown" || storage.used_bytes === undefined) {
      return { name, status: "skip", detail: "the server did not say how full its file store is" };
    }
    const detail = `${formatBytes(storage.used_bytes)} of ${formatBytes(storage.max_bytes)} used`;
    return storage.status === "near_full"
      ? {
        name,
        status: "warn",
        detail: `${detail}: nearly full, uploads and publishes fail once it is full`,
        fix: "stn files prune; stn files delete what is no longer needed; or raise storage.max_total_bytes",
      }
      : { name, status: "ok", detail };
  } catch (err) {
    return { name, status: "skip", detail: `could not ask the server: ${errorMessage(err)}` };
  }
}

/** Runs every check, in the order a user would fix them. */
export async function runChecks(configPath?: string): Promise<Check[]> {
  const { config, check } = configCheck(configPath);
  return [
    denoCheck(),
    check,
    await homeCheck(config.paths.home),
    privacyCheck(config.paths),
    await natsCheck(config),
    ...await dockerChecks(config),
    ...await serverChecks(config),
    await storageCheck(config),
  ];
}

/** What `stn doctor` reports: whether a default command can work, and every check. */
interface DoctorReport {
  ok: boolean;
  checks: Check[];
}

/** One line per check, with its fix when it is not ok. */
function checksText({ checks }: DoctorReport, style: Style): string[] {
  const label: Record<CheckStatus, string> = {
    ok: style.green("ok  "),
    warn: style.yellow("warn"),
    fail: style.red("FAIL"),
    skip: style.dim("skip"),
  };
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks.map((c) =>
    `${label[c.status]}  ${c.name.padEnd(width)}  ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ""}`
  );
}

/** `stn doctor`: checks what stn needs on this machine, for this user. */
export function doctorCommand(program: Command): void {
  program.command("doctor")
    .description("check Deno, nats-server, Docker, STATION_HOME, config.yaml, server.json and the API port")
    .addHelpText(
      "after",
      "\nOne line per check, with the fix when it is not ok. Exit 1 when something a default command " +
        "(serve, an embedded workflow run) needs is missing (FAIL); warnings (e.g. no Docker: no sandboxes) exit 0.",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      setLogLevel("error");
      const checks = await runChecks(globals(cmd).config);
      const failed = checks.filter((c) => c.status === "fail");
      const report: DoctorReport = { ok: failed.length === 0, checks };
      const view = { json: jsonMode(cmd), text: checksText };
      if (report.ok) return render(report, view);
      fail(
        report,
        view,
        new StationError("doctor_failed", `missing: ${failed.map((c) => c.name).join(", ")}`, {
          hint: "each FAIL line above says how to fix it",
        }),
      );
    });
}
