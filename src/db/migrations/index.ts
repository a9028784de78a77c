import type { Migration } from "../migrate.ts";
import m0001 from "./0001_station_meta.ts";
import m0002 from "./0002_workflows.ts";
import m0003 from "./0003_engine.ts";
import m0004 from "./0004_sandbox.ts";
import m0005 from "./0005_mcp.ts";
import m0006 from "./0006_agents.ts";
import m0007 from "./0007_agent_runs.ts";
import m0008 from "./0008_events.ts";
import m0014 from "./0014_agent_schedules.ts";
import m0015 from "./0015_idempotency.ts";
import m0017 from "./0017_mcp_approvals.ts";
import m0020 from "./0020_agent_tool_call_detail.ts";
import m0021 from "./0021_evals.ts";
import m0022 from "./0022_agent_cost.ts";
import m0024 from "./0024_run_lineage.ts";
import m0025 from "./0025_flow_control.ts";
import m0026 from "./0026_step_flow_control.ts";
import m0027 from "./0027_rate_debounce.ts";
import m0028 from "./0028_agent_run_queues.ts";
import m0029 from "./0029_agent_concurrency.ts";
import m0030 from "./0030_model_calls.ts";

/**
 * Every schema change, in order. Add a file `NNNN_name.ts` and list it here; never edit one that
 * has shipped. (Listed statically so `deno compile` bundles them.)
 */
export const MIGRATIONS: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0014,
  m0015,
  m0017,
  m0020,
  m0021,
  m0022,
  m0024,
  m0025,
  m0026,
  m0027,
  m0028,
  m0029,
  m0030,
];
