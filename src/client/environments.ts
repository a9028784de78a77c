/** Calls of /api/v1/environments: environment folders and their variables. */

import type { InstallResult } from "../contract/bundles.ts";
import { BUNDLE_VARIABLES_HEADER } from "../contract/headers.ts";
import * as bundlesAnswers from "./answers/bundles.ts";
import type {
  EnvironmentDetails,
  EnvironmentSummary,
  SetVariableResult,
  ShownVariable,
  VariableList,
} from "../contract/environments.ts";
import * as environmentsAnswers from "./answers/environments.ts";
import type { McpApprovals } from "../contract/sync.ts";
import * as syncAnswers from "./answers/sync.ts";
import { StationError } from "../errors.ts";
import { parseAnswer, type StationClient } from "./http.ts";
import { hex } from "../lib/hex.ts";

const envPath = (name: string) => `/api/v1/environments/${encodeURIComponent(name)}`;
const varPath = (name: string, variable: string) =>
  `${envPath(name)}/variables/${encodeURIComponent(variable)}`;

/** Every environment with its counts. */
export async function listEnvironments(client: StationClient): Promise<EnvironmentSummary[]> {
  return (await client.json("GET", "/api/v1/environments", { answer: environmentsAnswers.EnvironmentList }))
    .environments;
}

/** An environment's agents, MCP configs, workflows and needed variables. */
export function showEnvironment(client: StationClient, name: string): Promise<EnvironmentDetails> {
  return client.json("GET", envPath(name), { answer: environmentsAnswers.EnvironmentDetails });
}

/** Creates an empty environment. */
export function createEnvironment(client: StationClient, name: string): Promise<EnvironmentDetails> {
  return client.json("POST", "/api/v1/environments", {
    body: { name },
    answer: environmentsAnswers.EnvironmentDetails,
  });
}

/** Copies an environment into a new one. */
export function copyEnvironment(
  client: StationClient,
  from: string,
  to: string,
): Promise<EnvironmentDetails> {
  return client.json("POST", `${envPath(from)}/copy`, {
    body: { to },
    answer: environmentsAnswers.EnvironmentDetails,
  });
}

/** Deletes an environment folder. */
export function deleteEnvironment(client: StationClient, name: string) {
  return client.json("DELETE", envPath(name), { answer: environmentsAnswers.DeletedEnvironment });
}

/** Approves an MCP server of an environment (or, without one, all of them) as its config writes it now. */
export function approveMcpServers(
  client: StationClient,
  environment: string,
  server?: string,
): Promise<McpApprovals> {
  const path = server === undefined
    ? `${envPath(environment)}/trust`
    : `${envPath(environment)}/mcp-servers/${encodeURIComponent(server)}/approve`;
  return client.json("POST", path, { answer: syncAnswers.McpApprovals });
}

/** The variables of an environment (secrets masked by the server). */
export function listVariables(client: StationClient, name: string): Promise<VariableList> {
  return client.json("GET", `${envPath(name)}/variables`, { answer: environmentsAnswers.VariableList });
}

/** One variable (masked when secret). */
export function getVariable(client: StationClient, name: string, variable: string): Promise<ShownVariable> {
  return client.json("GET", varPath(name, variable), { answer: environmentsAnswers.ShownVariable });
}

/** Sets a variable. */
export function setVariable(
  client: StationClient,
  name: string,
  variable: string,
  value: string,
): Promise<SetVariableResult> {
  return client.json("PUT", varPath(name, variable), {
    body: { value },
    answer: environmentsAnswers.SetVariableResult,
  });
}

/** Removes a variable. */
export function unsetVariable(client: StationClient, name: string, variable: string) {
  return client.json("DELETE", varPath(name, variable), { answer: environmentsAnswers.UnsetVariableResult });
}

/** Packs an environment on the server; returns the .tar.gz bytes, checked against the SHA-256 it sent. */
export async function createBundle(
  client: StationClient,
  body: { environment: string; version?: string; description?: string },
): Promise<Uint8Array> {
  const res = await client.fetch("POST", "/api/v1/bundles", {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const expected = res.headers.get("x-bundle-sha256");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const actual = hex(digest);
  if (expected !== actual) {
    throw new StationError(
      "checksum_mismatch",
      "the bundle received does not match the checksum the server sent",
      {
        hint: "try again; the connection may have cut the download short",
      },
    );
  }
  return bytes;
}

/** Uploads a bundle to install (then the server syncs the environment). */
export async function installBundle(
  client: StationClient,
  bytes: Uint8Array,
  options: {
    environment?: string;
    force?: boolean;
    trust?: boolean;
    /** Values for the bundle's variables, written into the environment's variables.yml. */
    variables?: Record<string, string>;
    /** Refuse while a variable has no value (`bundle_variables_missing`), writing nothing. */
    requireVariables?: boolean;
  } = {},
): Promise<InstallResult> {
  const res = await client.fetch("POST", "/api/v1/bundles/install", {
    body: bytes as Uint8Array<ArrayBuffer>,
    headers: {
      "content-type": "application/gzip",
      // A header is Latin-1: anything past ASCII travels as a JSON \u escape.
      ...(options.variables
        ? {
          [BUNDLE_VARIABLES_HEADER]: JSON.stringify(options.variables).replace(
            /[\u007f-\uffff]/g,
            (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
          ),
        }
        : {}),
    },
    query: {
      environment: options.environment,
      force: options.force ? "true" : undefined,
      trust: options.trust ? "true" : undefined,
      require_variables: options.requireVariables ? "true" : undefined,
    },
  });
  return parseAnswer(bundlesAnswers.InstallResult, await res.json(), "POST /api/v1/bundles/install");
}
