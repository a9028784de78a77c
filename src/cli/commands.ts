/**
 * The top-level commands and the modules that define them, each imported only when its command runs: a
 * client command (`stn workflow runs`) loads its own group, not the other ~60 command modules and what they
 * import (docs/benchmarks.md, startup). Help, completion scripts and an unknown command load the whole tree.
 */

import type { Command } from "./command.ts";
import { lazyImport } from "../lib/lazy_import.ts";

const init = () => lazyImport<typeof import("./init.ts")>("./init.ts", import.meta.url);
const serve = () => lazyImport<typeof import("./serve.ts")>("./serve.ts", import.meta.url);
const worker = () => lazyImport<typeof import("./worker.ts")>("./worker.ts", import.meta.url);
const status = () => lazyImport<typeof import("./status.ts")>("./status.ts", import.meta.url);
const up = () => lazyImport<typeof import("./up.ts")>("./up.ts", import.meta.url);
const doctor = () => lazyImport<typeof import("./doctor.ts")>("./doctor.ts", import.meta.url);
const config = () => lazyImport<typeof import("./config.ts")>("./config.ts", import.meta.url);
const importing = () => lazyImport<typeof import("./import.ts")>("./import.ts", import.meta.url);
const version = () => lazyImport<typeof import("./version.ts")>("./version.ts", import.meta.url);
const sandbox = () => lazyImport<typeof import("./sandbox.ts")>("./sandbox.ts", import.meta.url);
const files = () => lazyImport<typeof import("./files.ts")>("./files.ts", import.meta.url);
const workflow = () => lazyImport<typeof import("./workflow.ts")>("./workflow.ts", import.meta.url);
const run = () => lazyImport<typeof import("./run.ts")>("./run.ts", import.meta.url);
const runs = () => lazyImport<typeof import("./runs.ts")>("./runs.ts", import.meta.url);
const reruns = () => lazyImport<typeof import("./reruns.ts")>("./reruns.ts", import.meta.url);
const events = () => lazyImport<typeof import("./events.ts")>("./events.ts", import.meta.url);
const agent = () => lazyImport<typeof import("./agent.ts")>("./agent.ts", import.meta.url);
const agentRuns = () => lazyImport<typeof import("./agent_runs.ts")>("./agent_runs.ts", import.meta.url);
const sync = () => lazyImport<typeof import("./sync.ts")>("./sync.ts", import.meta.url);
const test = () => lazyImport<typeof import("./test.ts")>("./test.ts", import.meta.url);
const evals = () => lazyImport<typeof import("./eval.ts")>("./eval.ts", import.meta.url);
const evalReport = () => lazyImport<typeof import("./eval_report.ts")>("./eval_report.ts", import.meta.url);
const env = () => lazyImport<typeof import("./env.ts")>("./env.ts", import.meta.url);
const bundle = () => lazyImport<typeof import("./bundle.ts")>("./bundle.ts", import.meta.url);
const mcp = () => lazyImport<typeof import("./mcp.ts")>("./mcp.ts", import.meta.url);
const mock = () => lazyImport<typeof import("./mock.ts")>("./mock.ts", import.meta.url);
const faker = () => lazyImport<typeof import("./faker.ts")>("./faker.ts", import.meta.url);
const completions = () => lazyImport<typeof import("./completions.ts")>("./completions.ts", import.meta.url);
const completeNames = () =>
  lazyImport<typeof import("./complete_names.ts")>("./complete_names.ts", import.meta.url);

/** A top-level command group: the names (and aliases) it adds, and how it adds them once its modules load. */
export interface CommandGroup {
  names: string[];
  /** Its action reads the whole command tree (completion), so every group is loaded with it. */
  wholeTree?: boolean;
  /** Imports the group's modules (all at once, in parallel) and returns what adds it to the program. */
  load: () => Promise<(program: Command) => void>;
}

/** Every top-level command group, in the order `stn --help` lists them. */
export const COMMAND_GROUPS: CommandGroup[] = [
  { names: ["init"], load: async () => (await init()).initCommand },
  { names: ["serve"], load: async () => (await serve()).serveCommand },
  {
    names: ["worker", "workers"],
    load: async () => {
      const m = await worker();
      return (p) => {
        m.workerCommand(p);
        m.workersCommand(p);
      };
    },
  },
  { names: ["status"], load: async () => (await status()).statusCommand },
  { names: ["up", "down", "logs", "image"], load: async () => (await up()).upCommands },
  { names: ["doctor"], load: async () => (await doctor()).doctorCommand },
  { names: ["config"], load: async () => (await config()).configCommand },
  { names: ["import"], load: async () => (await importing()).importCommand },
  { names: ["version"], load: async () => (await version()).versionCommand },
  { names: ["sandbox"], load: async () => (await sandbox()).sandboxCommand },
  { names: ["files"], load: async () => (await files()).filesCommand },
  {
    names: ["workflow", "workflows"],
    load: async () => {
      const [w, r, rs, rr, e] = await Promise.all([workflow(), run(), runs(), reruns(), events()]);
      return (p) => {
        const group = w.workflowCommand(p);
        r.runCommand(group);
        rs.workflowRunCommands(group);
        rr.workflowRerunCommands(group);
        e.workflowSignalCommand(group);
      };
    },
  },
  { names: ["run"], load: async () => (await run()).runCommand },
  { names: ["events", "event"], load: async () => (await events()).eventsCommand },
  {
    names: ["agent", "agents"],
    load: async () => {
      const [a, r] = await Promise.all([agent(), agentRuns()]);
      return (p) => void r.agentRunCommands(a.registerAgentCommands(p));
    },
  },
  { names: ["sync"], load: async () => (await sync()).syncCommand },
  { names: ["test"], load: async () => (await test()).testCommand },
  {
    names: ["eval"],
    load: async () => {
      const [e, r] = await Promise.all([evals(), evalReport()]);
      return (p) => void r.evalReportCommand(e.evalCommand(p));
    },
  },
  { names: ["env", "environment"], load: async () => (await env()).envCommand },
  { names: ["bundle"], load: async () => (await bundle()).bundleCommand },
  { names: ["mcp"], load: async () => (await mcp()).mcpCommand },
  { names: ["mock"], load: async () => (await mock()).mockCommand },
  { names: ["faker"], load: async () => (await faker()).fakerCommand },
  { names: ["completions"], wholeTree: true, load: async () => (await completions()).completionsCommand },
  { names: ["__complete"], wholeTree: true, load: async () => (await completeNames()).completeNamesCommand },
];

/** The global options that take a value: the word after one is not a command. */
export const GLOBAL_VALUE_OPTIONS = new Set(["--station", "--config", "--endpoint"]);

/** The first command word of args (before `--`), skipping global options and their values. */
export function commandWord(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return undefined;
    if (!a.startsWith("-")) return a;
    if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
  }
  return undefined;
}

/**
 * Adds the command groups args need to program: only the one its first word names, or every group when
 * it names none (help, a typo commander suggests a command for) or one that reads the whole tree.
 */
export async function addCommands(program: Command, args: string[]): Promise<void> {
  const word = commandWord(args);
  const named = COMMAND_GROUPS.find((g) => word !== undefined && g.names.includes(word));
  const groups = named && !named.wholeTree ? [named] : COMMAND_GROUPS;
  const adders = await Promise.all(groups.map((g) => g.load()));
  for (const add of adders) add(program);
}
