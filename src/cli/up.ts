import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { usageError } from "../errors.ts";
import { CONTAINER_PORTS } from "../deploy/names.ts";
import type { UpResult } from "../deploy/up.ts";
import { commandConfig, jsonMode } from "./context.ts";
import { fields, note, render } from "./output.ts";
import { installUpBundle, readUpBundle, type UpBundleResult } from "./up_bundle.ts";
import { logsCommand } from "./logs.ts";

/**
 * The Docker side of these commands (dockerode, the image builder), loaded when one of them runs: every
 * other command starts without it (tests/cli/client_only_test.ts).
 */
async function deploy() {
  const [docker, down, lookup, image, up] = await Promise.all([
    lazyImport<typeof import("../deploy/docker.ts")>("../deploy/docker.ts", import.meta.url),
    lazyImport<typeof import("../deploy/down.ts")>("../deploy/down.ts", import.meta.url),
    lazyImport<typeof import("../deploy/lookup.ts")>("../deploy/lookup.ts", import.meta.url),
    lazyImport<typeof import("../deploy/image.ts")>("../deploy/image.ts", import.meta.url),
    lazyImport<typeof import("../deploy/up.ts")>("../deploy/up.ts", import.meta.url),
  ]);
  return { ...docker, ...down, ...lookup, ...image, ...up };
}

function port(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 65535) {
    throw usageError(
      "invalid_usage",
      `--port ${JSON.stringify(raw)} is not a port`,
      "give a number from 1 to 65535",
    );
  }
  return n;
}

function seconds(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw usageError(
      "invalid_timeout",
      `--timeout ${JSON.stringify(raw)} is not a number of seconds`,
      "e.g. --timeout 300",
    );
  }
  return Number(raw);
}

function upText(r: UpResult & { bundle?: UpBundleResult }): string[] {
  const lines = fields([
    ["station", `${r.container} (${r.action === "unchanged" ? "already up, nothing changed" : r.action})`],
    ["api", r.url],
    ["mcp", r.mcp_url],
    ["agent mcp", r.agent_url],
    ["image", r.image],
    ["data", `volume ${r.volume}`],
    ["token", r.token_file],
  ]);
  if (r.bundle) {
    const b = r.bundle;
    lines.push(
      b.installed
        ? `bundle: installed into environment ${b.environment} (${b.files.length} files)`
        : `bundle: environment ${b.environment} is already there (installed on the first start); kept`,
    );
    if (b.missing.length) lines.push(`  variables still to set there: ${b.missing.join(", ")}`);
    if (b.untrusted.length) {
      lines.push(
        `  mcp servers not approved, not started: ${b.untrusted.join(", ")} ` +
          `(\`stn sync ${b.environment}\` shows what each runs; \`stn env trust ${b.environment}\` approves them)`,
      );
    }
  }
  if (r.token) {
    lines.push("", `API token (shown once; stn commands on this host use it by themselves): ${r.token}`);
  }
  return lines;
}

/** `stn up`, `stn down`, `stn logs` (src/cli/logs.ts) and `stn image build`: the station in a local container (docs/up.md). */
export function upCommands(program: Command): void {
  program.command("up")
    .description(
      "run the station in a Docker container built locally (data in a volume, workspace read-only)",
    )
    .option(
      "--workspace <dir>",
      "folder mounted read-only at /workspace; its environments/ are synced",
      ".",
    )
    .option(
      "--name <name>",
      "station name: container stn-<name>, volume stn-<name>-data (default: the folder's)",
    )
    .option(
      "--port <n>",
      "host port of the API (MCP and agent MCP take the next two)",
      String(CONTAINER_PORTS.api),
    )
    .option("--bind <addr>", "host address the ports are published on", "127.0.0.1")
    .option("--publish-all", "publish on every interface (0.0.0.0); the API token guards it")
    .option(
      "-e, --env <NAME[=value]>",
      "pass a variable, repeatable (e.g. --env OPENAI_API_KEY: its value here)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "--bundle <file>",
      "install this bundle (stn bundle create) into the station's environments on its first start",
    )
    .option("--bundle-env <env>", "the environment the bundle goes into (default: the bundle's name)")
    .option(
      "--trust",
      "approve the bundle's MCP servers as written, so they start (else `stn env trust` later)",
    )
    .option("--rebuild", "build the image again even if it exists")
    .option("--timeout <seconds>", "how long to wait for /health", "120")
    .action(async (opts: {
      workspace: string;
      name?: string;
      port: string;
      bind: string;
      publishAll?: boolean;
      env: string[];
      rebuild?: boolean;
      timeout: string;
      bundle?: string;
      bundleEnv?: string;
      trust?: boolean;
    }, cmd: Command) => {
      const config = await commandConfig(cmd);
      const api = port(opts.port);
      for (const [flag, given] of [["--bundle-env", opts.bundleEnv], ["--trust", opts.trust]] as const) {
        if (given && !opts.bundle) {
          throw usageError(
            "invalid_usage",
            `${flag} needs --bundle`,
            "e.g. --bundle team.tar.gz --bundle-env team",
          );
        }
      }
      // Checked before anything is built or started: a bad bundle costs nothing.
      const bundle = opts.bundle
        ? await readUpBundle(opts.bundle, opts.workspace, opts.bundleEnv, Boolean(opts.trust))
        : undefined;
      if (api > 65533) {
        throw usageError(
          "invalid_usage",
          `--port ${api} leaves no room for the two MCP ports`,
          "give a port below 65534",
        );
      }
      const result = await (await deploy()).up({
        paths: config.paths,
        workspace: opts.workspace,
        name: opts.name,
        bind: opts.publishAll ? "0.0.0.0" : opts.bind,
        ports: { api, mcp: api + 1, agent: api + 2 },
        env: opts.env,
        rebuild: Boolean(opts.rebuild),
        healthTimeoutMs: seconds(opts.timeout) * 1000,
        say: (line) => note(line),
      });
      const installed = bundle && await installUpBundle(result.url, result.token_file, bundle);
      render({ ...result, ...(installed ? { bundle: installed } : {}) }, {
        json: jsonMode(cmd),
        text: upText,
      });
    });

  program.command("down")
    .description("stop and remove the station container and its sandboxes (the data volume is kept)")
    .option("--name <name>", "station name (default: the running one in server.json, else the folder's)")
    .option("--purge", "also remove the data volume, the image and the token (asks first)")
    .option("--yes", "do not ask (needed for --purge without a terminal)")
    .action(async (opts: { name?: string; purge?: boolean; yes?: boolean }, cmd: Command) => {
      const config = await commandConfig(cmd);
      const d = await deploy();
      const names = d.targetNames(config.paths, opts.name);
      const json = jsonMode(cmd);
      if (opts.purge && !opts.yes) {
        if (json || !Deno.stdin.isTerminal()) {
          throw usageError(
            "confirmation_required",
            `refusing to purge ${names.container} (its data volume ${names.volume}) without confirmation`,
            "pass --yes",
          );
        }
        const answer = prompt(
          `Remove ${names.container}, its data volume ${names.volume} and its image? [y/N]`,
        );
        if (!/^y(es)?$/i.test(answer?.trim() ?? "")) {
          return render({ purged: false }, {
            json,
            text: () => "Nothing removed.",
          });
        }
      }
      const result = await d.down(config.paths, names, { purge: Boolean(opts.purge) });
      render(result, {
        json,
        text: (r) =>
          fields([
            ["station", `${r.container} ${r.stopped ? "stopped and removed" : "was not running"}`],
            ["sandboxes", `${r.sandboxes} removed`],
            [
              "data",
              `volume ${r.volume} ${r.volume_removed ? "removed" : opts.purge ? "was not there" : "kept"}`,
            ],
            ...(opts.purge
              ? [["image", r.image_removed ? `${r.image_removed} removed` : "kept"] as [string, string]]
              : []),
          ]),
      });
    });

  logsCommand(program);

  program.command("image")
    .description("the station image stn up runs")
    .command("build")
    .description("build the station image (Debian root + Deno + nats-server + stn) without starting it")
    .action(async (_opts: unknown, cmd: Command) => {
      const d = await deploy();
      const { docker } = await d.connectEngine();
      const image = await d.stationImage(docker);
      const started = Date.now();
      await d.buildStationImage(docker, image);
      const info = await docker.getImage(image.tag).inspect();
      const result = { image: image.tag, size_bytes: info.Size, seconds: (Date.now() - started) / 1000 };
      render(result, {
        json: jsonMode(cmd),
        text: (r) => `built ${r.image} (${Math.round(r.size_bytes / 1e6)} MB) in ${r.seconds.toFixed(1)}s`,
      });
    });
}
