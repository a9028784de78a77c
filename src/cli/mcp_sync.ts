import type { McpSyncReport } from "../contract/sync.ts";
import { StationError } from "../errors.ts";
import type { Style } from "./output.ts";

/** The MCP part of `stn sync`'s text view: each server with the tools found, or why discovery failed. */
export function mcpSyncLines(r: McpSyncReport, style: Style): string[] {
  const lines = r.servers.map((s) =>
    s.status === "ok"
      ? `mcp server ${s.name} (${s.transport}): ${s.tools.length} tool(s)${
        s.tools.length ? `: ${s.tools.join(", ")}` : ""
      }`
      : `mcp server ${s.name} (${s.transport}): ${style.red("failed:")} ${
        s.error?.message ?? "unknown error"
      }${s.tools.length ? ` (keeps ${s.tools.length} tool(s) found before)` : ""}`
  );
  if (r.removed.length) lines.push(`mcp servers removed (config gone): ${r.removed.join(", ")}`);
  return lines;
}

/** The config problems of an MCP sync, `file:line:col: CODE: message` plus the hint, for stderr. */
export function mcpErrorLines(r: McpSyncReport, style: Style): string[] {
  return r.errors.flatMap((e) => {
    const place = [e.file, e.line, e.line && e.column].filter(Boolean).join(":");
    return [
      `${style.red("invalid:")} ${place}: ${e.code}: ${e.message}`,
      ...(e.hint ? [`  hint: ${e.hint}`] : []),
    ];
  });
}

/** The error `stn sync` ends with when some MCP configs or servers failed (undefined when all went well). */
export function mcpSyncError(r: McpSyncReport, environment: string): StationError | undefined {
  const failed = r.servers.filter((s) => s.status === "failed").length;
  if (failed === 0 && r.errors.length === 0) return undefined;
  return new StationError(
    "mcp_sync_failed",
    `MCP: ${failed} server(s) failed discovery, ${r.errors.length} config problem(s)`,
    { hint: `each is listed above; fix them and run \`stn sync ${environment}\` again` },
  );
}
