import { launchLine, type McpApprovals, type McpLaunch, type McpSyncReport } from "../contract/sync.ts";
import { StationError } from "../errors.ts";
import type { Style } from "./output.ts";

/** What a server launches, indented under its line: the command line and env, or the URL and header names. */
export function launchLines(l: McpLaunch, indent = "    "): string[] {
  const env = Object.entries(l.env ?? {});
  return [
    `${indent}${l.transport === "http" ? "url" : "runs"}: ${launchLine(l)}`,
    ...(l.cwd !== undefined ? [`${indent}cwd: ${l.cwd}`] : []),
    ...(env.length ? [`${indent}env: ${env.map(([k, v]) => `${k}=${v}`).join(" ")}`] : []),
    ...(l.headers?.length ? [`${indent}headers: ${l.headers.join(", ")}`] : []),
  ];
}

/** The MCP part of `stn sync`'s text view: each server with the tools found, or why it was not started. */
export function mcpSyncLines(r: McpSyncReport, style: Style): string[] {
  const lines = r.servers.flatMap((s) =>
    s.status === "ok"
      ? [
        `mcp server ${s.name} (${s.transport}): ${s.tools.length} tool(s)${
          s.tools.length ? `: ${s.tools.join(", ")}` : ""
        }`,
      ]
      : s.status === "untrusted"
      ? [
        `mcp server ${s.name} (${s.transport}): ${style.red("not approved, not started")}${
          s.tools.length ? ` (keeps ${s.tools.length} tool(s) found before)` : ""
        }`,
        ...(s.launch ? launchLines(s.launch) : []),
      ]
      : [
        `mcp server ${s.name} (${s.transport}): ${style.red("failed:")} ${
          s.error?.message ?? "unknown error"
        }${s.tools.length ? ` (keeps ${s.tools.length} tool(s) found before)` : ""}`,
      ]
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

/** The error `stn sync` ends with when some MCP servers are not approved, or configs or servers failed. */
export function mcpSyncError(r: McpSyncReport, environment: string): StationError | undefined {
  const untrusted = r.servers.filter((s) => s.status === "untrusted").map((s) => s.name);
  if (untrusted.length) {
    return new StationError(
      "mcp_server_untrusted",
      `MCP: ${untrusted.length} server(s) not approved, so not started: ${untrusted.join(", ")}`,
      {
        hint: `check what each runs (listed above), then \`stn mcp approve ${
          untrusted[0]
        } --env ${environment}\` for each, or \`stn sync ${environment} --trust\` for all`,
      },
    );
  }
  const failed = r.servers.filter((s) => s.status === "failed").length;
  if (failed === 0 && r.errors.length === 0) return undefined;
  return new StationError(
    "mcp_sync_failed",
    `MCP: ${failed} server(s) failed discovery, ${r.errors.length} config problem(s)`,
    { hint: `each is listed above; fix them and run \`stn sync ${environment}\` again` },
  );
}

/** `stn mcp approve` / `stn env trust`: each server approved with what it launches. */
export function approvalLines(r: McpApprovals): string[] {
  if (r.approved.length === 0) return [`environment ${r.environment} defines no MCP servers`];
  return [
    ...r.approved.flatMap((
      a,
    ) => [`approved mcp server ${a.server} in ${r.environment}`, ...launchLines(a.launch)]),
    `run \`stn sync ${r.environment}\` to start them and discover their tools`,
  ];
}
