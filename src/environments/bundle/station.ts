/**
 * Bundles in Station's layout (the Go project's `stn bundle create`): `manifest.json` of its own form
 * (`version`, `bundle: {name, …}`, no checksums), agents under `agents/`, MCP configs as `*.json`
 * at the top (usually `template.json`, `{{ .VAR }}` placeholders), workflows under `workflows/` in
 * Station's dialect, and folders stn has no use for (`reports/`, `datasets/`). They are read into stn's
 * layout: agents and configs as they are, workflows through `stn workflow migrate`, everything else left
 * out and named. The stn manifest is made from the files themselves, never from Station's claims.
 */

import type { BundleManifest, StationBundle } from "../../contract/bundles.ts";
import { parseMcpConfigFile } from "../../mcp/config/files.ts";
import { parseMcpConfig } from "../../environment_files/mcp_configs.ts";
import { neededVariables } from "../environments.ts";
import { migrateText } from "../../workflows/migrate/migrate.ts";
import { archiveContents } from "./contents.ts";
import { MANIFEST } from "./layout.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Station's manifest, as far as stn reads it. */
interface StationManifest {
  version?: unknown;
  bundle?: { name?: unknown; description?: unknown; station_version?: unknown; created_at?: unknown };
}

/** True when the archive's manifest is Station's form: no `format`, a `bundle` object (name, description, …). */
export function isStationBundle(files: ReadonlyMap<string, Uint8Array>): boolean {
  const raw = files.get(MANIFEST);
  if (!raw) return false;
  try {
    const m = JSON.parse(text(raw));
    return isObj(m) && m.format === undefined && isObj(m.bundle);
  } catch {
    return false;
  }
}

const WORKFLOW = /^workflows\/[^/]+\.workflow\.(yaml|yml|json)$/;

/** Why a member of a Station bundle is not installed, or undefined when it is. */
function leftOut(path: string, bytes: Uint8Array): string | undefined {
  if (/^agents\/[^/]+\.prompt$/.test(path) || WORKFLOW.test(path)) return undefined;
  if (/^variables\.ya?ml$/.test(path)) {
    return "variable values are the installer's: --var NAME=VALUE or `stn env vars set`";
  }
  if (/^(mcp-configs\/)?[^/]+\.json$/.test(path)) {
    const read = parseMcpConfigFile(path, bytes);
    return "servers" in read
      ? undefined
      : `not an MCP config (${read.issues[0]?.message ?? "no mcpServers"})`;
  }
  const top = path.split("/")[0];
  if (top === "reports" || top === "datasets") return `Station's ${top} do not carry over to stn`;
  return "not an agent, MCP config or workflow";
}

/** A Station bundle in stn's layout, with what was converted and left out. */
export interface ConvertedStationBundle {
  manifest: BundleManifest;
  files: Map<string, Uint8Array>;
  station: StationBundle;
}

/** Reads a Station-layout archive's files (already checked for safe paths and limits) into stn's layout. */
export function convertStationBundle(
  members: ReadonlyMap<string, Uint8Array>,
  now: Date = new Date(),
): ConvertedStationBundle {
  // isStationBundle passed: the manifest is there and parses.
  const sm: StationManifest = JSON.parse(text(members.get(MANIFEST)!));
  const files = new Map<string, Uint8Array>();
  const station: StationBundle = {
    format: "station",
    station_version: typeof sm.bundle?.station_version === "string" ? sm.bundle.station_version : undefined,
    agents: [],
    mcp_configs: [],
    workflows: [],
    left_out: [],
    notes: [],
  };
  for (const [path, bytes] of [...members].sort(([a], [b]) => a < b ? -1 : 1)) {
    if (path === MANIFEST) continue;
    const why = leftOut(path, bytes);
    if (why) {
      station.left_out.push({ path, reason: why });
      continue;
    }
    if (path.startsWith("agents/")) station.agents.push(path);
    else if (!WORKFLOW.test(path)) station.mcp_configs.push(path);
    else {
      const migrated = migrateText(text(bytes), path);
      station.workflows.push({
        file: path,
        converted: migrated.converted,
        issues: migrated.issues.map((i) => ({
          severity: i.severity,
          ...(i.line !== undefined ? { line: i.line } : {}),
          message: i.message,
        })),
      });
      files.set(path, new TextEncoder().encode(migrated.text));
      continue;
    }
    files.set(path, bytes);
  }
  const held = archiveContents(files);
  station.notes.push(...held.servers.flatMap(demoMockNote));
  const configs = station.mcp_configs.map((p) => parseMcpConfig(p, text(files.get(p)!)));
  const str = (v: unknown) => typeof v === "string" && v.trim() ? v.trim() : undefined;
  const name = str(sm.bundle?.name) ?? "station-bundle"; // checked as an environment name on install
  const manifest: BundleManifest = {
    format: "stn-bundle/1",
    name,
    version: str(sm.version) ?? "1.0",
    ...(str(sm.bundle?.description) ? { description: str(sm.bundle?.description) } : {}),
    stn_version: `(Station ${station.station_version ?? "of unknown version"})`,
    created_at: str(sm.bundle?.created_at) ?? now.toISOString(),
    contents: held.contents,
    variables: neededVariables(configs, {}, () => undefined).map(({ name, secret, used_by }) => ({
      name,
      secret,
      used_by,
    })),
    mcp_servers: held.mcp_servers,
    files: [],
  };
  return { manifest, files, station };
}

/** Station's built-in demo mocks (`stn mock aws-cost-explorer`) are not in stn: a spec file takes their place. */
function demoMockNote(s: { name: string; launch?: { command?: string; args?: string[] } }): string[] {
  const [sub, spec] = s.launch?.args ?? [];
  if (s.launch?.command !== "stn" || sub !== "mock" || !spec || /\.(ya?ml|json)$/.test(spec)) return [];
  return [
    `mcp server ${s.name} runs Station's built-in demo mock \`stn mock ${spec}\`, which stn does not have: ` +
    `write ${spec}.yaml (docs/testing.md#mock-mcp-servers) and make its args ["mock", "${spec}.yaml"]`,
  ];
}
