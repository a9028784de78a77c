import { z } from "zod";
import { StationClient } from "../../src/client/http.ts";
import * as config from "../../src/config/schema.ts";
import { AgentRun } from "../../src/contract/agent_runs.ts";
import { Run } from "../../src/contract/runs.ts";
import { managementTools } from "../../src/mcp/server/mod.ts";
import { DEPRECATED_ARGUMENTS } from "../../src/mcp/server/tool.ts";
import { assert, assertEquals } from "../helpers/assert.ts";

/**
 * Every camelCase property name in a JSON Schema (deprecated aliases excepted), by path. HTTP headers
 * keep their own kebab-case.
 */
function camelCaseKeys(node: unknown, path: string, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n, i) => camelCaseKeys(n, `${path}[${i}]`, found));
  if (!node || typeof node !== "object") return found;
  const props = (node as { properties?: Record<string, { deprecated?: boolean }> }).properties;
  for (const [key, prop] of Object.entries(props ?? {})) {
    if (/[A-Z]/.test(key) && !prop?.deprecated) found.push(`${path}.${key}`);
  }
  for (const [key, value] of Object.entries(node)) camelCaseKeys(value, `${path}/${key}`, found);
  return found;
}

/** The JSON Schema of each zod schema a module exports, both as it is read and as it is written. */
function schemasOf(module: Record<string, unknown>): [string, unknown][] {
  return Object.entries(module).filter(([, s]) => s instanceof z.ZodType).flatMap(([name, s]) =>
    (["input", "output"] as const).map((io) =>
      [
        `${name} (${io})`,
        z.toJSONSchema(s as z.ZodType, { io, unrepresentable: "any" }),
      ] as [string, unknown]
    )
  );
}

/** Every module of src/contract (a new one is walked too). */
async function contractModules(): Promise<Record<string, unknown>[]> {
  const dir = new URL("../../src/contract/", import.meta.url);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.endsWith(".ts") && n !== "mod.ts"
  )
    .sort();
  return await Promise.all(names.map((n) => import(new URL(n, dir).href)));
}

Deno.test("naming: every field of the API contract and the config is snake_case", async () => {
  const schemas = [...(await contractModules()).flatMap(schemasOf), ...schemasOf(config)];
  assert(schemas.length > 100, `only ${schemas.length} schemas walked`);
  assertEquals(schemas.flatMap(([name, json]) => camelCaseKeys(json, name)), []);
});

Deno.test("naming: every MCP management tool's arguments are snake_case; old names are deprecated aliases", () => {
  const tools = managementTools(new StationClient("http://127.0.0.1:8585"));
  assertEquals(tools.flatMap((t) => camelCaseKeys(t.inputSchema, t.name)), []);
  for (const [old, name] of Object.entries(DEPRECATED_ARGUMENTS)) {
    assert(/[A-Z]/.test(old) && /^[a-z_]+$/.test(name), `${old} → ${name}`);
  }
});

Deno.test("naming: a workflow run and an agent run both carry run_id", () => {
  const runKeys = Object.keys(Run.shape);
  const agentRunKeys = Object.keys(AgentRun.shape);
  assert(runKeys.includes("run_id") && agentRunKeys.includes("run_id"));
});
