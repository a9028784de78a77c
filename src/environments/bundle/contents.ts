import { basename } from "node:path";
import type { BundleManifest, BundleServer } from "../../contract/bundles.ts";
import { StationError } from "../../errors.ts";
import { parseMcpConfigFile } from "../../mcp/config/files.ts";
import { launchOf } from "../../mcp/trust.ts";
import { claimedWorkflowId } from "../../workflows/definition/source.ts";
import { parseMcpConfig } from "../../environment_files/mcp_configs.ts";
import { bundledServers } from "./needs.ts";

/**
 * What a bundle's files really hold, read from the files themselves: its agents, MCP servers (with what
 * each launches) and workflow ids. `bundle create` writes this into the manifest, and `bundle inspect` /
 * `install` refuse a manifest that says anything else, so the manifest can never pass off one program as
 * another.
 */

/** The contents, as listed in a manifest, and each server's launch. */
export interface ArchiveContents {
  contents: BundleManifest["contents"];
  mcp_servers: NonNullable<BundleManifest["mcp_servers"]>;
  servers: BundleServer[];
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Reads the agents (by file name), MCP servers and workflow ids (as sync will store them) of a bundle's files. */
export function archiveContents(files: ReadonlyMap<string, Uint8Array>): ArchiveContents {
  const agents: string[] = [];
  const workflows: string[] = [];
  const configs = [];
  const servers: BundleServer[] = [];
  for (const [path, bytes] of [...files].sort(([a], [b]) => a < b ? -1 : 1)) {
    if (path.startsWith("agents/")) agents.push(basename(path).replace(/\.prompt$/, ""));
    else if (path.startsWith("workflows/")) {
      workflows.push(claimedWorkflowId(text(bytes), path) ?? basename(path));
    } else {
      configs.push(parseMcpConfig(path, text(bytes)));
      const read = parseMcpConfigFile(path, bytes);
      const launches = new Map("servers" in read ? read.servers.map((t) => [t.name, launchOf(t)]) : []);
      for (const s of configs.at(-1)!.servers) {
        const launch = launches.get(s.name);
        servers.push({ name: s.name, file: path, variables: s.variables, ...(launch ? { launch } : {}) });
      }
    }
  }
  return {
    contents: { agents, mcp_servers: servers.map((s) => s.name), workflows },
    mcp_servers: bundledServers(configs),
    servers,
  };
}

const sorted = (xs: readonly string[]) => [...xs].sort();
const same = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

/** 400 `bundle_manifest_mismatch` unless the manifest lists exactly what the files hold. */
export function checkManifestContents(manifest: BundleManifest, archive: ArchiveContents): void {
  const differ = (field: string, claimed: readonly string[], held: readonly string[]) =>
    new StationError(
      "bundle_manifest_mismatch",
      `manifest.json lists ${field} ${sorted(claimed).join(", ") || "(none)"}, but the bundle's files hold ` +
        `${sorted(held).join(", ") || "(none)"}; nothing was installed`,
      {
        hint: "the manifest was edited after packing: ask for a bundle made by `stn bundle create`",
        details: { field, manifest: sorted(claimed), archive: sorted(held) },
      },
    );
  for (const field of ["agents", "mcp_servers", "workflows"] as const) {
    if (!same(manifest.contents[field], archive.contents[field])) {
      throw differ(`contents.${field}`, manifest.contents[field], archive.contents[field]);
    }
  }
  // The needs lists (bundles of newer stn): each server's transport and program, each agent's file.
  const server = (s: { name: string; file: string; transport: string; program?: string }) =>
    `${s.name} (${s.transport}${s.program !== undefined ? ` ${s.program}` : ""} in ${s.file})`;
  if (manifest.mcp_servers && !same(manifest.mcp_servers.map(server), archive.mcp_servers.map(server))) {
    throw differ("mcp_servers", manifest.mcp_servers.map(server), archive.mcp_servers.map(server));
  }
  const agentFiles = [...archive.contents.agents].map((a) => `agents/${a}.prompt`);
  if (manifest.agents && !same(manifest.agents.map((a) => a.file), agentFiles)) {
    throw differ("agents", manifest.agents.map((a) => a.file), agentFiles);
  }
}
