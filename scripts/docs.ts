/**
 * Regenerates the parts of docs/ that are derived from code: the configuration table (from the config
 * schema's defaults and descriptions), the error table (from the error catalogue), the MCP tool table
 * (from the tool definitions) and the sandbox channel's protocol tables (from its protocol table), and
 * docs/architecture.md's import graph and file list. `deno task docs`; tests/docs_test.ts,
 * tests/contract/error_codes_test.ts and `scripts/build_supervisor --check` fail when they drift.
 */
import { StationClient } from "../src/client/http.ts";
import { configReferenceRows } from "../src/config/reference.ts";
import { ERROR_CODES } from "../src/error_codes.ts";
import { importGraphText } from "./import_graph.ts";
import { filesText } from "./layout.ts";
import { markdownTable, withSection } from "./lib/markdown.ts";
import { CHANNEL_PAGE, channelSections } from "./supervisor_protocol.ts";
import { managementTools } from "../src/mcp/server/mod.ts";

/** The management server's tools: name and description (a client that is never called lists them). */
export function mcpToolRows(): string[][] {
  return managementTools(new StationClient("http://127.0.0.1:8585")).map((t) => [
    `\`${t.name}\``,
    t.annotations?.readOnlyHint ? "reads" : [
      "changes",
      ...(t.annotations?.destructiveHint ? ["destructive"] : []),
      ...(t.annotations?.idempotentHint ? ["idempotent"] : []),
    ].join(", "),
    t.description.replaceAll("|", "\\|"),
  ]);
}

const GENERATED = [
  {
    page: "docs/configuration.md",
    section: "config-table",
    table: () =>
      markdownTable(
        ["key", "env", "default", "meaning"],
        configReferenceRows().map((r) => [r.key, r.env, r.default, r.meaning]),
      ),
  },
  {
    page: "docs/api.md",
    section: "error-table",
    table: () =>
      markdownTable(
        ["code", "HTTP status", "CLI exit", "meaning"],
        Object.entries(ERROR_CODES).map(([code, [status, exit, meaning]]) => [
          `\`${code}\``,
          String(status),
          String(exit),
          meaning.replaceAll("|", "\\|"),
        ]),
      ),
  },
  {
    page: "docs/mcp.md",
    section: "mcp-tools",
    table: () => markdownTable(["tool", "effect", "what it does"], mcpToolRows()),
  },
  { page: "docs/architecture.md", section: "import-graph", table: importGraphText },
  { page: "docs/architecture.md", section: "files", table: filesText },
  ...channelSections().map((s) => ({ page: CHANNEL_PAGE, ...s })),
];

if (import.meta.main) {
  for (const { page, section, table } of GENERATED) {
    const path = new URL(`../${page}`, import.meta.url);
    Deno.writeTextFileSync(path, withSection(Deno.readTextFileSync(path), section, await table()));
    console.log(`docs: wrote ${page}`);
  }
}
