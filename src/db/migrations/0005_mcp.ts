/** The MCP catalogue: each environment's servers and the tools discovery found on them. */

import type { Migration } from "../migrate.ts";

export default {
  version: 5,
  name: "mcp",
  sql: `
    -- MCP servers of each environment, as \`stn sync\` last read them from the config files.
    -- template is the server entry as written (placeholders intact, secrets spelt out in the file
    -- masked): values are filled only when a connection is made, so no secret is stored here.
    CREATE TABLE mcp_servers (
      environment TEXT NOT NULL,
      name TEXT NOT NULL,
      config_file TEXT NOT NULL,
      config_checksum TEXT NOT NULL,
      transport TEXT NOT NULL CHECK (transport IN ('stdio', 'http')),
      template TEXT NOT NULL,
      synced_at TEXT NOT NULL,
      -- The last discovery that listed the server's tools, and the error of the last one that failed
      -- (JSON {code, message, hint?}; NULL after a success). A failed discovery keeps the tools found before.
      discovered_at TEXT,
      error TEXT,
      PRIMARY KEY (environment, name)
    );
    CREATE TABLE mcp_tools (
      environment TEXT NOT NULL,
      server TEXT NOT NULL,
      name TEXT NOT NULL,
      -- The name agents use: \`__<name>\` (Station's form).
      exposed_name TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      input_schema TEXT NOT NULL,
      PRIMARY KEY (environment, server, name),
      FOREIGN KEY (environment, server) REFERENCES mcp_servers (environment, name) ON DELETE CASCADE
    );
    CREATE INDEX mcp_tools_exposed ON mcp_tools (environment, exposed_name);
  `,
} satisfies Migration;
