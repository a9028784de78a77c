import { join } from "node:path";
import type { z } from "zod";
import { sha256 } from "../../files/checksum.ts";
import { mcpConfigPaths } from "../../environment_files/mcp_configs.ts";
import { jsonSyntaxError } from "../../lib/json_syntax.ts";
import { parseSource } from "../../workflows/definition/source.ts";
import { placeholdersIn, quoteBarePlaceholders } from "../../environment_files/placeholders.ts";
import { HttpServerEntry, McpConfigFileShape, StdioServerEntry } from "./schema.ts";
import { errorMessage } from "../../errors.ts";

/**
 * Finding and reading an environment's MCP config files: every `*.json` in the environment folder except
 * `*.openapi.json`, and every `mcp-configs/*.json`. A file is parsed whole; each problem comes back with
 * its line so the user can go straight to it.
 */

/** A problem in a config file, with its place. */
export interface ConfigIssue {
  file: string;
  line?: number;
  column?: number;
  /** `variables_invalid`: the environment's variables.yml, which every server's placeholders need. */
  code: "mcp_config_invalid" | "mcp_tool_conflict" | "variables_invalid";
  message: string;
  hint?: string;
}

/** One server as its file writes it: placeholders intact, defaults filled in. */
export type McpServerTemplate =
  | { name: string; file: string; line?: number; transport: "stdio"; entry: StdioServerEntry }
  | { name: string; file: string; line?: number; transport: "http"; entry: HttpServerEntry };

/** A config file that parsed: its checksum and servers. */
export interface McpConfigFile {
  file: string;
  checksum: string;
  servers: McpServerTemplate[];
  /** Problems with single servers of this file (the others are still usable). */
  issues: ConfigIssue[];
  /** The names of those malformed servers. */
  rejected: string[];
}

const SHAPE_HINT =
  'each server is {"command": "...", "args": [...], "env": {...}} (stdio) or {"url": "...", "headers": {...}} (Streamable HTTP)';

/** The config files of an environment folder, absolute and sorted (an absent folder has none). */
export async function listMcpConfigFiles(envDir: string): Promise<string[]> {
  return (await mcpConfigPaths(envDir)).map((file) => join(envDir, file)).sort();
}

/** Reads and checks one config file; a file that cannot be used at all is returned as its issues. */
export async function readMcpConfigFile(
  file: string,
): Promise<McpConfigFile | { file: string; issues: ConfigIssue[] }> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch (err) {
    return {
      file,
      issues: [{
        file,
        code: "mcp_config_invalid",
        message: `cannot read the file: ${errorMessage(err)}`,
        hint: "check its permissions",
      }],
    };
  }
  return parseMcpConfigFile(file, bytes);
}

/** Checks one config file's bytes (read from disk or from a bundle); unusable as a whole, it is its issues. */
export function parseMcpConfigFile(
  file: string,
  bytes: Uint8Array,
): McpConfigFile | { file: string; issues: ConfigIssue[] } {
  const issue = (message: string, hint: string, at?: { line: number; column: number }): ConfigIssue => ({
    file,
    line: at?.line,
    column: at?.column,
    code: "mcp_config_invalid",
    message,
    hint,
  });
  const text = quoteBarePlaceholders(new TextDecoder().decode(bytes));
  try {
    JSON.parse(text);
  } catch (err) {
    const found = jsonSyntaxError(text) ?? { message: errorMessage(err), line: 1, column: 1 };
    return {
      file,
      issues: [
        issue(
          `not valid JSON: ${found.message}`,
          "fix the JSON syntax (a trailing comma? a missing quote?)",
          found,
        ),
      ],
    };
  }
  const parsed = parseSource(text);
  if ("error" in parsed) return { file, issues: [issue(parsed.error.message, "fix the JSON syntax")] };
  const at = (path: (string | number)[]) => parsed.locate(path);

  const top = McpConfigFileShape.safeParse(parsed.value);
  if (!top.success) {
    const first = top.error.issues[0];
    return {
      file,
      issues: [issue(`${pathText(first.path)}${first.message}`, SHAPE_HINT, at(first.path as string[]))],
    };
  }
  const key = top.data.mcpServers ? "mcpServers" : top.data.servers ? "servers" : undefined;
  if (!key) {
    return {
      file,
      issues: [
        issue(
          'no "mcpServers" object',
          `an MCP config is {"mcpServers": {"<name>": {...}}}; ${SHAPE_HINT}`,
          at([]),
        ),
      ],
    };
  }
  const servers: McpServerTemplate[] = [];
  const issues: ConfigIssue[] = [];
  const rejected: string[] = [];
  for (const [name, raw] of Object.entries(top.data[key]!)) {
    rejected.push(name); // until it passes every check below
    const path = [key, name];
    const isHttp = typeof raw === "object" && raw !== null && "url" in raw;
    const isStdio = typeof raw === "object" && raw !== null && "command" in raw;
    if (isHttp === isStdio) {
      issues.push(issue(
        `server ${name}: ${isHttp ? "has both command and url" : "has neither command nor url"}`,
        SHAPE_HINT,
        at(path),
      ));
      continue;
    }
    const schema: z.ZodType = isHttp ? HttpServerEntry : StdioServerEntry;
    const checked = schema.safeParse(raw);
    if (!checked.success) {
      const first = checked.error.issues[0];
      const type = (raw as { type?: unknown }).type;
      const hint = first.path[0] !== "type"
        ? SHAPE_HINT
        : type === "sse"
        ? "the legacy SSE transport is not supported: use the server's Streamable HTTP endpoint (type http)"
        : 'type is "stdio" (with command) or "http" (with url), or left out';
      issues.push(
        issue(
          `server ${name}: ${pathText(first.path)}${first.message}`,
          hint,
          at([...path, ...(first.path as string[])]),
        ),
      );
      continue;
    }
    const bad = badPlaceholder(raw, [...path]);
    if (bad) {
      issues.push(issue(
        `server ${name}: ${bad.text} is not a placeholder stn can fill`,
        "placeholders are written {{ .NAME }} (a dot, then a variable name from variables.yml or the environment)",
        at(bad.path),
      ));
      continue;
    }
    rejected.pop();
    const line = at(path)?.line;
    servers.push(
      isHttp
        ? { name, file, line, transport: "http", entry: checked.data as HttpServerEntry }
        : { name, file, line, transport: "stdio", entry: checked.data as StdioServerEntry },
    );
  }
  return { file, checksum: `sha256:${sha256().update(bytes).digest("hex")}`, servers, issues, rejected };
}

function pathText(path: PropertyKey[]): string {
  return path.length ? `${path.map(String).join(".")}: ` : "";
}

/** The first `{{ … }}` in a server's strings that is not a plain `{{ .NAME }}`, with where it is. */
function badPlaceholder(
  value: unknown,
  path: (string | number)[],
): { text: string; path: (string | number)[] } | undefined {
  if (typeof value === "string") {
    const bad = placeholdersIn(value).bad[0];
    return bad ? { text: bad.text, path } : undefined;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const found = badPlaceholder(v, [...path, Array.isArray(value) ? Number(k) : k]);
      if (found) return found;
    }
  }
  return undefined;
}
