import { StationError } from "../../errors.ts";
import type { McpServerSpec } from "../client/mod.ts";
import type { McpServerTemplate } from "./files.ts";
import { fill, hasPlaceholder, isSecretName } from "./placeholders.ts";
import type { VariableSource } from "./variables.ts";

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

const MASK = "***";

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
        args: e.args.map((a) => render(a)),
        env: map(e.env),
        cwd: e.cwd === undefined ? undefined : render(e.cwd),
      },
      secrets,
    };
  }
  const url = render(t.entry.url);
  for (const [k, v] of new URL(url, "http://x").searchParams) if (isSecretName(k)) secrets.push(v);
  return { spec: { transport: "http", url, headers: map(t.entry.headers) }, secrets };
}

/** A value under a secret name: kept when it is only placeholders' business, masked when the file wrote it out. */
function maskLiteral(value: string): string {
  return hasPlaceholder(value) ? value : MASK;
}

/** An argument list with the value after `--token`/`--api-key` (or in `--token=…`) masked when written out. */
function maskArgs(args: string[]): string[] {
  return args.map((a, i) => {
    const eq = /^(--?[A-Za-z0-9_-]+)=(.*)$/.exec(a);
    if (eq && isSecretName(eq[1])) return `${eq[1]}=${maskLiteral(eq[2])}`;
    const prev = args[i - 1];
    if (prev && /^--?[A-Za-z0-9_-]+$/.test(prev) && isSecretName(prev)) return maskLiteral(a);
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

/** The server as it may be stored and shown: placeholders intact, secrets the file spells out as `***`. */
export function displayTemplate(t: McpServerTemplate): Record<string, unknown> {
  const maskRecord = (r: Record<string, string>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, isSecretName(k) ? maskLiteral(v) : v]));
  if (t.transport === "stdio") {
    const e = t.entry;
    return { ...e, args: maskArgs(e.args), env: maskRecord(e.env) };
  }
  return { ...t.entry, url: maskUrl(t.entry.url), headers: maskRecord(t.entry.headers) };
}
