import { StationError } from "../../errors.ts";
import type { McpServerSpec } from "../client/mod.ts";
import type { McpServerTemplate } from "./files.ts";
import { isSecretName, MASK } from "../../environment_files/secrets.ts";
import { fill, hasPlaceholder } from "../../environment_files/placeholders.ts";
import type { VariableSource } from "../../environment_files/variables.ts";

/**
 * Turning a server template into what a connection needs (placeholders filled: only at connect time,
 * never stored), and into what may be shown or stored (placeholders intact, secrets written in the
 * file itself masked).
 */

/** A rendered server and the secret values in it (to mask in any message about it). */
export interface RenderedServer {
  spec: McpServerSpec;
  secrets: string[];
}

/** Fills a server's placeholders; a variable without a value is `mcp_variable_missing` naming file and variable. */
export function renderServer(t: McpServerTemplate, vars: VariableSource): RenderedServer {
  const secrets: string[] = [];
  const render = (value: string, secretSlot = false): string => {
    const out = fill(value, (name) => {
      const v = vars.get(name);
      if (v !== undefined && (secretSlot || isSecretName(name))) secrets.push(v);
      return v;
    }, (name) => {
      throw new StationError(
        "mcp_variable_missing",
        `${t.file}${t.line ? `:${t.line}` : ""}: server ${t.name} uses {{ .${name} }}, which has no value`,
        {
          hint: `add \`${name}: <value>\` to ${vars.file}, or set the environment variable ${name}`,
          details: { file: t.file, server: t.name, variable: name },
        },
      );
    });
    if (secretSlot) secrets.push(out);
    return out;
  };
  const map = (record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, render(v, isSecretName(k))]));
  if (t.transport === "stdio") {
    const e = t.entry;
    return {
      spec: {
        transport: "stdio",
        command: render(e.command),
        args: e.args.map((a, i) => {
          const out = render(a);
          const flag = secretArg(e.args, i);
          if (flag === "value") secrets.push(out);
          if (flag === "inline") secrets.push(out.slice(out.indexOf("=") + 1));
          return out;
        }),
        env: map(e.env),
        cwd: e.cwd === undefined ? undefined : render(e.cwd),
      },
      secrets: [...new Set(secrets)],
    };
  }
  const url = render(t.entry.url);
  for (const [k, v] of new URL(url, "http://x").searchParams) if (isSecretName(k)) secrets.push(v);
  const headers = map(t.entry.headers);
  return { spec: { transport: "http", url, headers }, secrets: [...new Set(secrets)] };
}

/** A value under a secret name: kept when it is only placeholders' business, masked when the file wrote it out. */
function maskLiteral(value: string): string {
  return hasPlaceholder(value) ? value : MASK;
}

/** Whether argument i is a secret: the value after `--token`/`--api-key`, or inline in `--token=…`. */
function secretArg(args: string[], i: number): "value" | "inline" | undefined {
  const eq = /^(--?[A-Za-z0-9_-]+)=/.exec(args[i]);
  if (eq) return isSecretName(eq[1]) ? "inline" : undefined;
  const prev = args[i - 1];
  return prev && /^--?[A-Za-z0-9_-]+$/.test(prev) && isSecretName(prev) ? "value" : undefined;
}

/** An argument list with its secret arguments masked when written out. */
function maskArgs(args: string[]): string[] {
  return args.map((a, i) => {
    const kind = secretArg(args, i);
    if (kind === "value") return maskLiteral(a);
    if (kind === "inline") return `${a.slice(0, a.indexOf("="))}=${maskLiteral(a.slice(a.indexOf("=") + 1))}`;
    return a;
  });
}

/** A URL with secret-named query values masked when written out. */
function maskUrl(url: string): string {
  return url.replace(
    /([?&])([^=&#]+)=([^&#]*)/g,
    (whole, sep: string, k: string, v: string) =>
      isSecretName(decodeURIComponent(k)) && !hasPlaceholder(v) ? `${sep}${k}=${MASK}` : whole,
  );
}

/** The server as it may be stored and shown: placeholders intact, secrets the file spells out as MASK. */
export function displayTemplate(t: McpServerTemplate): Record<string, unknown> {
  const maskRecord = (r: Record<string, string>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, isSecretName(k) ? maskLiteral(v) : v]));
  if (t.transport === "stdio") {
    const e = t.entry;
    return { ...e, args: maskArgs(e.args), env: maskRecord(e.env) };
  }
  return { ...t.entry, url: maskUrl(t.entry.url), headers: maskRecord(t.entry.headers) };
}
