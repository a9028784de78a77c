import { z } from "zod";

/**
 * The shape of an MCP config file (docs/design/agents.md#mcp-server-configs; Station's format): `{name?,
 * description?, mcpServers: {<server>: {command, args?, env?} | {url, headers?}}}`, `servers` accepted for
 * `mcpServers`. Values are checked before placeholders are filled, so the schema sees `{{ .VAR }}` text.
 */

/** A scalar written where a string belongs (`"PORT": 8080`) is taken as its text. */
const Text = z.union([z.string(), z.number(), z.boolean()]).transform(String);

/** `per_run: true`: the server keeps state per run, so each agent run gets its own (docs/mcp-servers.md#pooling). */
const PerRun = z.boolean().optional();

/** A server started as a child process, speaking MCP on its stdin/stdout. */
export const StdioServerEntry = z.looseObject({
  type: z.literal("stdio").optional(),
  command: z.string().min(1, "command is empty"),
  args: z.array(Text).default([]),
  env: z.record(z.string(), Text).default({}),
  cwd: z.string().optional(),
  description: z.string().optional(),
  per_run: PerRun,
});
export type StdioServerEntry = z.infer<typeof StdioServerEntry>;

/** A server reached over Streamable HTTP. */
export const HttpServerEntry = z.looseObject({
  type: z.enum(["http", "streamable-http", "streamableHttp"]).optional(),
  url: z.string().min(1, "url is empty"),
  headers: z.record(z.string(), Text).default({}),
  description: z.string().optional(),
  per_run: PerRun,
});
export type HttpServerEntry = z.infer<typeof HttpServerEntry>;

/** The top of a config file; the servers are checked one by one (see files.ts) so each issue has its place. */
export const McpConfigFileShape = z.looseObject({
  name: z.string().optional(),
  description: z.string().optional(),
  mcpServers: z.record(z.string(), z.unknown()).optional(),
  servers: z.record(z.string(), z.unknown()).optional(),
});
