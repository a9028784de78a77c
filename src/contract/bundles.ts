/** The contract of /api/v1/bundles: a bundle's manifest, and what an install did. */

import { z } from "zod";
import { NeededVariable } from "./environments.ts";
import { McpLaunch, SyncReport } from "./sync.ts";

/** One file a bundle carries, with its checksum. */
export const BundleFile = z.strictObject({
  path: z.string().describe("relative to the environment folder, e.g. agents/hello.prompt"),
  size: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/** A bundle's `manifest.json`: what it holds, what it needs, and the checksum of every file. */
export const BundleManifest = z.looseObject({
  format: z.literal("stn-bundle/1"),
  name: z.string().describe("the environment it was made from (the default install target)"),
  version: z.string(),
  description: z.string().optional(),
  stn_version: z.string(),
  created_at: z.string(),
  contents: z.looseObject({
    agents: z.array(z.string()),
    mcp_servers: z.array(z.string()),
    workflows: z.array(z.string()),
  }),
  variables: z.array(z.looseObject({ name: z.string(), secret: z.boolean(), used_by: z.array(z.string()) }))
    .describe("placeholders its MCP configs use; their values are never in the bundle"),
  agents: z.array(z.looseObject({
    name: z.string(),
    file: z.string(),
    model: z.string().optional().describe("absent: the installing station's ai.model"),
    tools: z.array(z.looseObject({ name: z.string(), server: z.string().optional() })).describe(
      "MCP tools it uses, with the server that offered each where the bundle was made",
    ),
    agents: z.array(z.string()).describe("child agents it calls"),
    sandbox: z.string().optional().describe("the sandbox runtime or image it runs code in"),
  })).optional().describe("what each agent needs (validated when the bundle was made)"),
  mcp_servers: z.array(z.looseObject({
    name: z.string(),
    file: z.string(),
    transport: z.enum(["stdio", "http", "unknown"]),
    program: z.string().optional().describe("the program a stdio server runs: the installer needs it"),
    variables: z.array(z.string()),
  })).optional().describe("what each MCP server needs"),
  files: z.array(BundleFile),
}).meta({ id: "BundleManifest" });
export type BundleManifest = z.infer<typeof BundleManifest>;

/** What was read from a bundle in Station's layout (environments/bundle/station.ts): what carried over, what did not. */
export const StationBundle = z.looseObject({
  format: z.literal("station"),
  station_version: z.string().optional().describe("the Station version that made it, from its manifest"),
  agents: z.array(z.string()).describe("agents/*.prompt files, installed as they are"),
  mcp_configs: z.array(z.string()).describe("MCP configs (top-level *.json), installed as they are"),
  workflows: z.array(z.looseObject({
    file: z.string(),
    converted: z.int().nonnegative().describe("constructs `stn workflow migrate` converted"),
    issues: z.array(z.looseObject({
      severity: z.enum(["error", "note"]),
      line: z.int().optional(),
      message: z.string(),
    })).describe("what migrate could not convert (error) or changed worth knowing (note)"),
  })).describe("Station workflows, converted by `stn workflow migrate`"),
  left_out: z.array(z.looseObject({ path: z.string(), reason: z.string() }))
    .describe("members that are not installed, each with why"),
  notes: z.array(z.string()).describe("what works differently in stn (e.g. Station's built-in demo mocks)"),
}).meta({ id: "StationBundle" });
export type StationBundle = z.infer<typeof StationBundle>;

/** An MCP server of a bundle with what it really launches, read from its config (never a manifest's claim). */
export const BundleServer = z.looseObject({
  name: z.string(),
  file: z.string(),
  variables: z.array(z.string()),
  launch: McpLaunch.optional().describe("absent when the entry is malformed (it is not started)"),
}).meta({ id: "BundleServer" });
export type BundleServer = z.infer<typeof BundleServer>;

/** POST /api/v1/bundles: pack an environment (the answer is the .tar.gz). */
export const CreateBundleBody = z.strictObject({
  environment: z.string().min(1),
  version: z.string().min(1).max(64).optional().describe("a label for the manifest (default 1.0.0)"),
  description: z.string().max(1000).optional(),
}).meta({ id: "CreateBundleBody" });

/** POST /api/v1/bundles/install query. */
export const InstallBundleQuery = z.object({
  environment: z.string().min(1).optional().describe(
    "environment to install into (default: the bundle's name)",
  ),
  force: z.enum(["true", "false"]).optional().describe(
    "install into an existing environment, replacing the bundle's files (variables.yml is kept), and " +
      "take over stored workflows of the same ids",
  ),
  trust: z.enum(["true", "false"]).optional().describe(
    "approve the bundle's MCP servers as written, so the sync that follows starts them",
  ),
  require_variables: z.enum(["true", "false"]).optional().describe(
    "refuse the install (nothing written) while a variable its MCP configs use has no value",
  ),
});

/** The answer to an install: what was written, what is still to set, and the sync that followed. */
export const InstallResult = z.looseObject({
  environment: z.string(),
  path: z.string(),
  created: z.boolean().describe("false when an existing environment was updated (force)"),
  files: z.array(z.string()),
  manifest: BundleManifest,
  servers: z.array(BundleServer)
    .describe("its MCP servers with what each really launches, read from the configs"),
  replaced: z.looseObject({
    workflows: z.array(z.looseObject({
      id: z.string(),
      version: z.number(),
      source: z.enum(["api", "file"]),
      environment: z.string().nullable(),
    })).describe("stored workflows of the same ids the bundle took over (force)"),
    files: z.array(z.string()).describe("files of the existing environment written over (force)"),
  }),
  variables: z.array(NeededVariable),
  missing: z.array(z.string()).describe("variables still to set: `stn env vars set <env> NAME -`"),
  station: StationBundle.optional().describe("present when the bundle was in Station's layout"),
  sync: SyncReport,
}).meta({ id: "BundleInstallResult" });
export type InstallResult = z.infer<typeof InstallResult>;

/** A stored workflow a bundle takes over, for people: `workflow deploy (v3, from environment default's files)`. */
export function describeStored(
  w: { id: string; version: number; source: "api" | "file"; environment: string | null },
): string {
  const from = w.source === "api" ? "saved through the API" : `from environment ${w.environment}'s files`;
  return `workflow ${w.id} (v${w.version}, ${from})`;
}
