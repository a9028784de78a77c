import type { Migration } from "../migrate.ts";

/**
 * Approvals of MCP servers (issue 27): stn starts a server only when the digest of its launch spec as its
 * config writes it (command, args, cwd, env, url, headers) is the one approved here, so a bundle or a
 * `git pull` cannot bring a new command in silently. Kept apart from mcp_servers: an approval may come
 * before the server's first sync, and outlives a sync that drops the server.
 */
export default {
  version: 17,
  name: "mcp_approvals",
  sql: `
    CREATE TABLE mcp_approvals (
      environment TEXT NOT NULL,
      server TEXT NOT NULL,
      digest TEXT NOT NULL,
      approved_at TEXT NOT NULL,
      PRIMARY KEY (environment, server)
    );
  `,
} satisfies Migration;
