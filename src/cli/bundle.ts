/** `stn bundle create|inspect|install`: an environment packed as a .tar.gz, and installing one. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { basename, resolve } from "node:path";
import { createBundle, installBundle } from "../client/environments.ts";
import {
  type BundleManifest,
  type BundleServer,
  describeStored,
  type InstallResult,
  type StationBundle,
} from "../contract/bundles.ts";
import { BUNDLE_LIMITS } from "../environments/bundle/layout.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { formatBytes } from "../files/size.ts";
import { formatInvalid } from "../workflows/definition/format.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { readHidden } from "./hidden_input.ts";
import { jsonMode, withStation } from "./context.ts";
import { readLocalBytes } from "./local_files.ts";
import { agentSyncLines } from "./agent.ts";
import { launchLines, mcpErrorLines, mcpSyncLines } from "./mcp_sync.ts";
import { fields, note, render, type Style } from "./output.ts";

/** Bundle commands sync only what they install, not the default environment at start-up. */
const NO_SYNC = { embeddedFlags: { "workflows.sync_on_start": false } };

/** A list for people: comma-separated, `-` when empty. */
const list = (xs: string[]) => xs.length ? xs.join(", ") : "-";

function manifestLines(m: BundleManifest, checksums = true): string[] {
  return fields([
    ["bundle", `${m.name} ${m.version}`],
    ...(m.description ? [["description", m.description] as [string, string]] : []),
    ["made with", `${checksums ? "stn " : ""}${m.stn_version}, ${m.created_at}`],
    ["agents", list(m.contents.agents)],
    ["mcp servers", list(m.contents.mcp_servers)],
    ["workflows", list(m.contents.workflows)],
    ["variables", list(m.variables.map((v) => v.name + (v.secret ? " [secret]" : "")))],
    ...(checksums ? [["files", `${m.files.length} (checksums verified)`] as [string, string]] : []),
  ]);
}

/**
 * What the bundle's agents need where it is installed (manifests made by newer stn), and what each of its
 * MCP servers really launches, read from its config file.
 */
function needsLines(m: BundleManifest, servers: BundleServer[]): string[] {
  const lines: string[] = [];
  for (const a of m.agents ?? []) {
    const tools = a.tools.map((t) => t.server ? `${t.name} (${t.server})` : t.name);
    const parts = [
      `model ${a.model ?? "ai.model"}`,
      tools.length ? `tools ${tools.join(", ")}` : "no tools",
      ...(a.agents.length ? [`child agents ${a.agents.join(", ")}`] : []),
      ...(a.sandbox ? [`sandbox ${a.sandbox}`] : []),
    ];
    lines.push(`  agent ${a.name}: ${parts.join("; ")}`);
  }
  for (const s of servers) {
    const vars = s.variables.length ? `variables ${s.variables.join(", ")}` : "no variables";
    lines.push(
      `  mcp server ${s.name} (${s.launch?.transport ?? "malformed: never started"}, ${s.file}): ${vars}`,
      ...(s.launch ? launchLines(s.launch) : []),
    );
  }
  return lines.length ? ["needs:", ...lines] : [];
}

/** Reads a bundle from a path, or downloads it from an http(s) URL, at most the bundle size limit. */
async function bundleBytes(source: string): Promise<Uint8Array> {
  if (!/^https?:\/\//i.test(source)) return await readLocalBytes(source);
  const failed = (why: string) =>
    new StationError("bundle_download_failed", `cannot download ${source}: ${why}`, {
      hint: "check the URL, or download the file and pass its path",
    });
  let res: Response;
  try {
    res = await fetch(source, { signal: AbortSignal.timeout(60_000) });
  } catch (err) {
    throw failed(errorMessage(err));
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw failed(`the server answered ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > BUNDLE_LIMITS.maxCompressedBytes) {
      throw new StationError(
        "bundle_too_large",
        `${source} is over ${formatBytes(BUNDLE_LIMITS.maxCompressedBytes)}`,
      );
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, at), at += c.length;
  return bytes;
}

/** What reading a Station-layout bundle converted and left out. */
function stationLines(st: StationBundle | undefined): string[] {
  if (!st) return [];
  const lines = [
    `station bundle${st.station_version ? ` (Station ${st.station_version})` : ""}: read as stn's layout`,
    `  agents as they are: ${st.agents.length}; mcp configs as they are: ${list(st.mcp_configs)}`,
  ];
  for (const w of st.workflows) {
    const errors = w.issues.filter((i) => i.severity === "error");
    lines.push(
      `  workflow ${w.file}: migrated (${w.converted} constructs converted${
        errors.length ? `, ${errors.length} left to rewrite` : ""
      })`,
      ...errors.map((i) => `    ${i.line ? `line ${i.line}: ` : ""}${i.message}`),
    );
  }
  for (const l of st.left_out) lines.push(`  left out ${l.path}: ${l.reason}`);
  lines.push(...st.notes.map((n) => `  note: ${n}`));
  return lines;
}

/** --var NAME=VALUE, repeatable: a value for one of the bundle's variables, as text. */
function collectValue(raw: string, vars: Record<string, string>): Record<string, string> {
  const eq = raw.indexOf("=");
  if (eq < 1) {
    throw usageError("invalid_usage", `--var ${raw}: expected NAME=VALUE`, "e.g. --var AWS_REGION=eu-west-1");
  }
  return { ...vars, [raw.slice(0, eq)]: raw.slice(eq + 1) };
}

/** Asks on the terminal for each variable the bundle uses that has no value yet; empty answers are left to set later. */
async function askValues(bytes: Uint8Array, given: Record<string, string>): Promise<Record<string, string>> {
  const { readBundle } = await lazyImport<typeof import("../environments/bundle/unpack.ts")>(
    "../environments/bundle/unpack.ts",
    import.meta.url,
  );
  const { manifest } = await readBundle(bytes);
  const values = { ...given };
  for (const v of manifest.variables) {
    if (Object.hasOwn(values, v.name) || Deno.env.get(v.name) !== undefined) continue;
    const question = `${v.name}, used by ${v.used_by.join(", ")} (empty: set later):`;
    // A secret is read without echo, so it shows neither on the screen nor in a terminal recording.
    const answer = v.secret ? await readHidden(`${question} [hidden]`) : prompt(question);
    if (answer) values[v.name] = answer;
  }
  return values;
}

function installText(r: InstallResult, style: Style): string[] {
  const lines = [
    `${
      r.created ? "installed" : "updated"
    } environment ${r.environment} (${r.path}): ${r.files.length} files`,
  ];
  const c = r.manifest.contents;
  lines.push(
    `  agents: ${list(c.agents)}; mcp servers: ${list(c.mcp_servers)}; workflows: ${list(c.workflows)}`,
    ...stationLines(r.station),
  );
  for (const w of r.replaced.workflows) {
    lines.push(`replaced ${describeStored(w)}: ${r.environment} is its source now`);
  }
  if (r.replaced.files.length) lines.push(`replaced files: ${r.replaced.files.join(", ")}`);
  const s = r.sync;
  // The install synced MCP servers, agents and workflows, in that order, as `stn sync` does.
  lines.push(...mcpSyncLines(s.mcp_servers, style).map((l) => l.startsWith(" ") ? l : `synced ${l}`));
  const untrusted = s.mcp_servers.servers.filter((x) => x.status === "untrusted").map((x) => x.name);
  if (untrusted.length) {
    lines.push(
      `mcp servers not approved, not started: ${untrusted.join(", ")}; check what each runs (above), then`,
      `  stn env trust ${r.environment}   (or: stn mcp approve <server> --env ${r.environment})`,
    );
  }
  note((errStyle) => mcpErrorLines(s.mcp_servers, errStyle));
  lines.push(...agentSyncLines(s).filter((l) => l.startsWith("agents:")).map((l) => `synced ${l}`));
  lines.push(
    `synced workflows: ${s.created.length} created, ${s.updated.length} updated, ${s.unchanged.length} unchanged`,
  );
  note((style) => s.invalid.flatMap((inv) => formatInvalid(inv).map((l) => `${style.red("invalid:")} ${l}`)));
  if (r.missing.length) {
    lines.push(`variables still to set: ${r.missing.join(", ")}`);
    lines.push(...r.missing.map((n) => `  stn env vars set ${r.environment} ${n} -`));
  } else lines.push("variables: all set");
  return lines;
}

/** `stn bundle …`: share an environment as a .tar.gz. */
export function bundleCommand(program: Command): void {
  const bundle = program.command("bundle").description(
    "pack an environment (agents, MCP configs, workflows; never variables.yml) to share it, and install one",
  );
  bundle.command("create <env>")
    .description("pack an environment into <env>.tar.gz (or -o FILE) with a manifest of checksums")
    .option("-o, --output <file>", "where to write it (default ./<env>.tar.gz)")
    .option("--bundle-version <label>", "version label in the manifest (default 1.0.0)")
    .option("--description <text>", "description in the manifest")
    .option("-f, --force", "replace the output file if it exists")
    .action(
      async (
        env: string,
        opts: { output?: string; bundleVersion?: string; description?: string; force?: boolean },
        cmd: Command,
      ) => {
        const target = resolve(opts.output ?? `${env}.tar.gz`);
        if (!opts.force) {
          const found = await Deno.lstat(target).then(() => true, () => false);
          if (found) {
            throw new StationError("file_exists", `${target} already exists`, {
              hint: "pass --force to replace it, or choose another path with -o",
            });
          }
        }
        const bytes = await withStation(
          cmd,
          (client) =>
            createBundle(client, {
              environment: env,
              version: opts.bundleVersion,
              description: opts.description,
            }),
          NO_SYNC,
        );
        const { readBundle } = await lazyImport<typeof import("../environments/bundle/unpack.ts")>(
          "../environments/bundle/unpack.ts",
          import.meta.url,
        );
        const { manifest, servers } = await readBundle(bytes);
        try {
          await writeFileAtomic(target, bytes);
        } catch (err) {
          throw new StationError("write_failed", `cannot write ${target}: ${errorMessage(err)}`, {
            hint: "check the path",
          });
        }
        render({ path: target, size_bytes: bytes.length, manifest, servers }, {
          json: jsonMode(cmd),
          text: (
            r,
          ) => [
            `wrote ${opts.output ?? basename(target)} (${formatBytes(r.size_bytes)})`,
            ...manifestLines(r.manifest),
            ...needsLines(r.manifest, r.servers),
          ],
        });
      },
    );
  bundle.command("inspect <file>")
    .description(
      "verify a bundle (paths, links, limits, checksums, the manifest's list of contents) and show it, with " +
        "the command line each MCP server really runs; installs nothing",
    )
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const { readBundle } = await lazyImport<typeof import("../environments/bundle/unpack.ts")>(
        "../environments/bundle/unpack.ts",
        import.meta.url,
      );
      const { manifest, servers, station } = await readBundle(await bundleBytes(file));
      render({ valid: true, manifest, servers, ...(station ? { station } : {}) }, {
        json: jsonMode(cmd),
        text: (r) => [
          ...manifestLines(r.manifest, !r.station),
          ...stationLines(r.station),
          ...needsLines(r.manifest, r.servers),
        ],
      });
    });
  bundle.command("install <source> [env]")
    .description(
      "install a bundle (a file or an http(s) URL; stn's or Station's layout) into <env> (default: the " +
        "bundle's name), then sync it; " +
        "its MCP servers are not started until approved (--trust, `stn env trust`, `stn mcp approve`); " +
        "reports what each runs and the variables still to set",
    )
    .option(
      "-f, --force",
      "install into an existing environment, replacing the bundle's files (variables.yml is kept), and " +
        "take over stored workflows of the same ids (each is listed)",
    )
    .option("--trust", "approve the bundle's MCP servers as written, so the sync starts them")
    .option(
      "--var <NAME=VALUE>",
      "a value for a variable its MCP configs use, written into the environment's variables.yml (repeatable)",
      collectValue,
      {},
    )
    .option(
      "--defer-variables",
      "install even when variables have no value (set them later with `stn env vars set`); without it a " +
        "terminal asks for each, and a non-interactive install is refused listing them",
    )
    .action(
      async (
        source: string,
        env: string | undefined,
        opts: { force?: boolean; trust?: boolean; var: Record<string, string>; deferVariables?: boolean },
        cmd: Command,
      ) => {
        const bytes = await bundleBytes(source);
        const interactive = !opts.deferVariables && !jsonMode(cmd) && Deno.stdin.isTerminal();
        const variables = interactive ? await askValues(bytes, opts.var) : opts.var;
        const result = await withStation(
          cmd,
          (client) =>
            installBundle(client, bytes, {
              environment: env,
              force: opts.force,
              trust: opts.trust,
              variables: Object.keys(variables).length ? variables : undefined,
              requireVariables: !opts.deferVariables && !interactive,
            }),
          NO_SYNC,
        );
        render(result, { json: jsonMode(cmd), text: installText });
      },
    );
}
