/**
 * Agent concurrency-key admission benchmark (docs/agents.md#concurrency): RUNS one-turn agent runs started at
 * once through the agent service (SQLite ledger, the tests' scripted OpenAI-protocol model server) for an agent
 * without keys, with keys no run waits for (`{key: "${input.customer}", limit: 1000}` over 5 customers plus
 * `{limit: 1000}`: evaluating, recording and releasing keys), and with keys most runs wait for (limit 4 per
 * customer: runs are admitted as others end). Alternated ROUNDS times on one ledger, so the machine's load hits
 * all three; the overhead is the median of each round's own ratio to the plain agent.
 *
 *   deno run -A scripts/bench/agent_concurrency.ts [runs=300] [rounds=3]
 */
import { join } from "node:path";
import { AgentService } from "../../src/agents/service.ts";
import type { AgentDefinition } from "../../src/agents/types.ts";
import { openDatabase } from "../../src/db/database.ts";
import { setLogLevel } from "../../src/log.ts";
import { startModelServer } from "../../tests/helpers/model_server.ts";
import { tableRow } from "./table.ts";

const RUNS = Number(Deno.args[0] ?? 300);
const ROUNDS = Number(Deno.args[1] ?? 3);
const CUSTOMERS = 5;

setLogLevel("warn");
const model = startModelServer();
model.route(() => ({ text: "ok" }));
const variants = {
  plain: undefined,
  keys: [{ key: "${input.customer}", limit: 1000 }, { limit: 1000 }],
  waiting: [{ key: "${input.customer}", limit: 4 }],
};
type Variant = keyof typeof variants;
const defs = new Map<string, AgentDefinition>(
  Object.entries(variants).map(([name, concurrency]) => [name, {
    name,
    environment: "default",
    path: `/bench/${name}.prompt`,
    checksum: "bench",
    model: "openai/bench",
    max_steps: 1,
    description: "",
    tags: [],
    tools: [],
    agents: [],
    timeout_ms: 600_000,
    source: "---\nmodel: openai/bench\n---\n{{userInput}}\n",
    extra: {},
    ...(concurrency ? { concurrency } : {}),
  }]),
);
const dir = await Deno.makeTempDir({ prefix: "stn-bench-agent-concurrency-" });
const db = openDatabase(join(dir, "station.db"));
const service = new AgentService({
  db,
  config: {
    ai: {
      provider: "openai",
      model: "openai/bench",
      base_url: model.url,
      api_key: "sk-bench",
      limits: {},
      prices: {},
    },
    agents: { max_tool_output: 10_240, default_max_steps: 1, timeout: 600_000 },
  },
  env: {},
  source: (_env, name) => defs.get(name),
  mcpTools: () => Promise.resolve({ tools: [], close: () => Promise.resolve() }),
});

/** Runs per second of RUNS runs of one variant, all started at once; throws if one did not complete. */
async function measure(variant: Variant): Promise<number> {
  const t0 = performance.now();
  const started = await Promise.all(
    Array.from({ length: RUNS }, (_, i) =>
      service.start({
        agent: variant,
        environment: "default",
        task: `t${i}`,
        variables: { customer: `c${i % CUSTOMERS}` },
      })),
  );
  const ended = await Promise.all(started.map((s) => s.done));
  const secs = (performance.now() - t0) / 1000;
  const bad = ended.filter((r) => r.status !== "completed").length;
  if (bad) throw new Error(`${variant}: ${bad} of ${RUNS} runs did not complete`);
  return RUNS / secs;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rates: Record<Variant, number[]> = { plain: [], keys: [], waiting: [] };
try {
  await measure("plain"); // warm-up: the model client, the SQL statements
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of Object.keys(variants) as Variant[]) rates[v].push(await measure(v));
  }
  for (const v of Object.keys(variants) as Variant[]) {
    console.log(
      `${v}: ${median(rates[v]).toFixed(1)} runs/s (rounds: ${rates[v].map((x) => x.toFixed(1)).join(", ")})`,
    );
  }
  for (const v of ["keys", "waiting"] as const) {
    const overhead = median(rates[v].map((x, i) => 1 - x / rates.plain[i]));
    tableRow({
      figure: `agent concurrency-key admission, ${RUNS} one-turn runs (${
        v === "keys" ? "keys no run waits for" : "limit 4 per customer: most runs wait"
      })`,
      value: `${median(rates[v]).toFixed(1)} runs/s`,
      baseline: `the same agent without keys ${median(rates.plain).toFixed(1)} runs/s`,
      ratio: `overhead ${(overhead * 100).toFixed(1)}% (median of the rounds' own ratios)`,
      target: "-",
    });
  }
} finally {
  await service.stop();
  db.close();
  await model.close();
  await Deno.remove(dir, { recursive: true });
}
