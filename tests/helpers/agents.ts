import { join } from "node:path";
import { AgentService, type AgentSource, type McpTools } from "../../src/agents/service.ts";
import type { AgentDefinition } from "../../src/agents/types.ts";
import type { Config } from "../../src/config/schema.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { type Durability, processDurability, walDurability } from "../../src/db/durability.ts";
import type { SandboxService } from "../../src/sandbox/service.ts";
import { mcpToolSpecs, openMcpToolbox } from "../../src/mcp/mod.ts";
import type { ModelPrice } from "../../src/telemetry/model_price.ts";

/**
 * An agent definition as loading a `.prompt` file produces it (the loader is another module's; the
 * loop only needs the definition): `source` is the real file text, the rest as the front matter says.
 */
export function agentDef(
  name: string,
  source: string,
  fields: Partial<AgentDefinition> = {},
): AgentDefinition {
  return {
    name,
    environment: "default",
    path: `/agents/${name}.prompt`,
    checksum: "test",
    max_steps: 5,
    description: "",
    tags: [],
    tools: [],
    agents: [],
    timeout_ms: 60_000,
    source,
    extra: {},
    ...fields,
  };
}

/** A plain `.prompt`: a system block and the task. */
export const PLAIN_PROMPT = `---
model: openai/test-model
---
{{role "system"}}
You are a careful assistant.
{{role "user"}}
{{userInput}}
`;

export interface AgentHarness {
  db: Database;
  /** The ledger's sync the services wait for (`ledger.durability`: fsync with `durability`, else normal). */
  sync: Durability;
  service: AgentService;
  defs: Map<string, AgentDefinition>;
  /** A second service on the same ledger (a restarted station). */
  restart(): AgentService;
  close(): Promise<void>;
}

/** An AgentService on a real SQLite file, its models at the scripted server `baseUrl`. */
export async function agentHarness(
  baseUrl: string,
  defs: AgentDefinition[],
  options: {
    provider?: "openai" | "anthropic";
    env?: Record<string, string>;
    mcpTools?: McpTools;
    sandbox?: SandboxService;
    /** `agents.max_tool_output` (default 1024 bytes, so cuts show with small outputs). */
    maxToolOutput?: number;
    /** `ai.limits`. */
    limits?: Config["ai"]["limits"];
    /** `ai.prices` (docs/agents.md#cost). */
    prices?: Record<string, ModelPrice>;
    /** The services wait for WAL syncs of the ledger, as under `ledger.durability: fsync` or `step`. */
    durability?: boolean;
  } = {},
): Promise<AgentHarness> {
  const dir = await Deno.makeTempDir({ prefix: "stn-agents-" });
  const db = openDatabase(join(dir, "station.db"));
  const sync = options.durability ? walDurability(db, join(dir, "station.db")) : processDurability;
  const byName = new Map(defs.map((d) => [d.name, d]));
  const source: AgentSource = (_env, name) => byName.get(name);
  const services: AgentService[] = [];
  const make = () => {
    const s = new AgentService({
      db,
      config: {
        ai: {
          provider: options.provider ?? "openai",
          model: "openai/test-model",
          base_url: baseUrl,
          api_key: "sk-test",
          limits: options.limits ?? {},
          prices: options.prices ?? {},
        },
        agents: { max_tool_output: options.maxToolOutput ?? 1024, default_max_steps: 5, timeout: 60_000 },
      },
      env: options.env ?? {},
      source,
      mcpTools: options.mcpTools ?? ((env, def, signal) => openMcpToolbox(db, env, def.tools, { signal })),
      mcpToolSpecs: (env, def) => mcpToolSpecs(db, env, def.tools),
      sandbox: options.sandbox,
      durable: () => sync.durable(),
    });
    services.push(s);
    return s;
  };
  const service = make();
  return {
    db,
    sync,
    service,
    defs: byName,
    restart: make,
    close: async () => {
      for (const s of services) await s.stop();
      sync.close();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
