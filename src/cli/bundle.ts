/** `stn bundle create|inspect|install`: an environment packed as a .tar.gz, and installing one. */

import type { Command } from "commander";
import { basename, resolve } from "node:path";
import { createBundle, installBundle } from "../client/environments.ts";
import type { BundleManifest, InstallResult } from "../contract/bundles.ts";
import { BUNDLE_LIMITS } from "../environments/bundle/layout.ts";
import { StationError } from "../errors.ts";
import { formatBytes } from "../files/size.ts";
import { formatInvalid } from "../workflows/definition/format.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { jsonMode, withStation } from "./context.ts";
import { readLocalBytes } from "./local_files.ts";
import { agentSyncLines } from "./agent.ts";
import { mcpErrorLines, mcpSyncLines } from "./mcp_sync.ts";
import { fields, note, render, type Style } from "./output.ts";

/** Bundle commands sync only what they install, not the default environment at start-up. */
const NO_SYNC = { embeddedFlags: { "workflows.sync_on_start": false } };

/** A list for people: comma-separated, `-` when empty. */
const list = (xs: string[]) => xs.length ? xs.join(", ") : "-";

function manifestLines(m: BundleManifest): string[] {
  return fields([
    ["bundle", `${m.name} ${m.version}`],
    ...(m.description ? [["description", m.description] as [string, string]] : []),
    ["made with", `stn ${m.stn_version}, ${m.created_at}`],
    ["agents", list(m.contents.agents)],
    ["mcp servers", list(m.contents.mcp_servers)],
    ["workflows", list(m.contents.workflows)],
    ["variables", list(m.variables.map((v) => v.name + (v.secret ? " [secret]" : "")))],
    ["files", `${m.files.length} (checksums verified)`],
  ]);
}

/** What the bundle's agents and MCP servers need where it is installed (manifests made by newer stn). */
function needsLines(m: BundleManifest): string[] {
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
  for (const s of m.mcp_servers ?? []) {
    const parts = [
      ...(s.program ? [`runs ${s.program}`] : []),
      s.variables.length ? `variables ${s.variables.join(", ")}` : "no variables",
    ];
    lines.push(`  mcp server ${s.name} (${s.transport}): ${parts.join("; ")}`);
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
    throw failed((err as Error).message);
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

function installText(r: InstallResult, style: Style): string[] {
  const lines = [
    `${
      r.created ? "installed" : "updated"
    } environment ${r.environment} (${r.path}): ${r.files.length} files`,
  ];
  const c = r.manifest.contents;
  lines.push(
    `  agents: ${list(c.agents)}; mcp servers: ${list(c.mcp_servers)}; workflows: ${list(c.workflows)}`,
  );
  const s = r.sync;
  // The install synced MCP servers, agents and workflows, in that order, as `stn sync` does.
  lines.push(...mcpSyncLines(s.mcp_servers, style).map((l) => `synced ${l}`));
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
        const { readBundle } = await import("../environments/bundle/unpack.ts");
        const { manifest } = await readBundle(bytes);
        try {
          await writeFileAtomic(target, bytes);
        } catch (err) {
          throw new StationError("write_failed", `cannot write ${target}: ${(err as Error).message}`, {
            hint: "check the path",
          });
        }
        render({ path: target, size_bytes: bytes.length, manifest }, {
          json: jsonMode(cmd),
          text: (
            r,
          ) => [
            `wrote ${opts.output ?? basename(target)} (${formatBytes(r.size_bytes)})`,
            ...manifestLines(r.manifest),
            ...needsLines(r.manifest),
          ],
        });
      },
    );
  bundle.command("inspect <file>")
    .description("verify a bundle (paths, links, limits, checksums) and show its manifest; installs nothing")
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const { readBundle } = await import("../environments/bundle/unpack.ts");
      const { manifest } = await readBundle(await bundleBytes(file));
      render({ valid: true, manifest }, {
        json: jsonMode(cmd),
        text: (r) => [...manifestLines(r.manifest), ...needsLines(r.manifest)],
      });
    });
  bundle.command("install <source> [env]")
    .description(
      "install a bundle (a file or an http(s) URL) into <env> (default: the bundle's name), then sync it; " +
        "reports the variables still to set",
    )
    .option(
      "-f, --force",
      "install into an existing environment, replacing the bundle's files (variables.yml is kept)",
    )
    .action(async (source: string, env: string | undefined, opts: { force?: boolean }, cmd: Command) => {
      const bytes = await bundleBytes(source);
      const result = await withStation(
        cmd,
        (client) => installBundle(client, bytes, { environment: env, force: opts.force }),
        NO_SYNC,
      );
      render(result, { json: jsonMode(cmd), text: installText });
    });
}
