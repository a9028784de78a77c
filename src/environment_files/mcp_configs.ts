import { join } from "node:path";
import { placeholderNames, quoteBarePlaceholders } from "./placeholders.ts";
import { errorMessage } from "../errors.ts";

/**
 * An environment's MCP server configs as files (docs/design/agents.md#mcp-server-configs): `*.json` at the
 * top of the folder and `mcp-configs/*.json`, each `{mcpServers: {<name>: {command, args, env} | {url,
 * headers}}}` (the Go project's `servers` is accepted too). Read for their structure only: placeholders are
 * not filled and no server is started (discovery is `stn sync`'s job).
 */

/** One server named in a config. */
export interface McpServerEntry {
  name: string;
  /** stdio (`command`) or http (`url`); unknown when it has neither. */
  transport: "stdio" | "http" | "unknown";
  /** The program a stdio server runs (what the machine must have: `deno`, `npx`, …). */
  program?: string;
  /** The `{{ .NAME }}` placeholders this server's entry uses. */
  variables: string[];
}

/** One MCP config file, relative to the environment folder. */
export interface McpConfigFile {
  file: string;
  servers: McpServerEntry[];
  /** The `{{ .NAME }}` placeholders the file uses. */
  variables: string[];
  /** Why the file could not be read as a config, when it could not. */
  error?: string;
}

async function jsonFiles(dir: string, prefix: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      // A linked config is one (sync reads it); packing a bundle checks links itself (files.ts).
      if ((e.isFile || e.isSymlink) && e.name.endsWith(".json") && !e.name.endsWith(".openapi.json")) {
        names.push(prefix + e.name);
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return names.sort();
}

/**
 * The MCP config files of an environment folder, relative paths: top-level ones first. The one rule
 * for which files are configs, used by `env show`, bundles and the MCP layer's sync alike.
 */
export async function mcpConfigPaths(envDir: string): Promise<string[]> {
  return [...await jsonFiles(envDir, ""), ...await jsonFiles(join(envDir, "mcp-configs"), "mcp-configs/")];
}

/** Reads a config's servers and placeholders from its text. */
export function parseMcpConfig(file: string, text: string): McpConfigFile {
  const variables = placeholderNames(text);
  let value: unknown;
  try {
    value = JSON.parse(quoteBarePlaceholders(text));
  } catch (err) {
    return { file, servers: [], variables, error: `not valid JSON: ${errorMessage(err)}` };
  }
  const root = value && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
  const servers = root.mcpServers ?? root.servers;
  if (!servers || typeof servers !== "object" || Array.isArray(servers)) {
    return { file, servers: [], variables, error: "no `mcpServers` object" };
  }
  return {
    file,
    variables,
    servers: Object.entries(servers as Record<string, unknown>).map(([name, s]) => {
      const spec = (s && typeof s === "object" ? s : {}) as Record<string, unknown>;
      const program = typeof spec.command === "string" ? spec.command : undefined;
      return {
        name,
        transport: program !== undefined ? "stdio" : typeof spec.url === "string" ? "http" : "unknown",
        ...(program !== undefined ? { program } : {}),
        variables: placeholderNames(JSON.stringify(spec)),
      };
    }),
  };
}

/** Every MCP config of an environment folder, read. */
export async function readMcpConfigs(envDir: string): Promise<McpConfigFile[]> {
  const out: McpConfigFile[] = [];
  for (const file of await mcpConfigPaths(envDir)) {
    let text: string;
    try {
      text = await Deno.readTextFile(join(envDir, file));
    } catch (err) {
      out.push({ file, servers: [], variables: [], error: `cannot read: ${errorMessage(err)}` });
      continue;
    }
    out.push(parseMcpConfig(file, text));
  }
  return out;
}
