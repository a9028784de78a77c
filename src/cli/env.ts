/** `stn env …`: environment folders and their variables (secrets masked). */

import type { Command } from "./command.ts";
import {
  approveMcpServers,
  copyEnvironment,
  createEnvironment,
  deleteEnvironment,
  getVariable,
  listEnvironments,
  listVariables,
  setVariable,
  showEnvironment,
  unsetVariable,
} from "../client/environments.ts";
import type { EnvironmentDetails } from "../contract/environments.ts";
import { usageError } from "../errors.ts";
import { jsonMode, withStation } from "./context.ts";
import { approvalLines } from "./mcp_sync.ts";
import { fields, note, render, type Style, table } from "./output.ts";

/** Environment commands need no start-up sync (their own answers are read from the folders). */
const NO_SYNC = { embeddedFlags: { "workflows.sync_on_start": false } };

/** How `env show` says whether the station holds an agent file's current version. */
const SYNCED: Record<EnvironmentDetails["agents"][number]["synced"], string> = {
  current: "synced",
  outdated: "changed since the last sync",
  never: "not synced yet",
};

/** The text view of `env show`, `env create` and `env copy`. */
export function environmentText(d: EnvironmentDetails, style: Style): string[] {
  const lines = fields([["environment", d.name], ["path", d.path]]);
  lines.push("", `agents (${d.agents.length}):`);
  for (const a of d.agents) {
    const state = a.status === "valid" ? `valid, ${SYNCED[a.synced]}` : style.red("invalid");
    lines.push(`  ${a.name}  ${state}  ${style.dim(a.file)}`);
    for (const e of a.errors) {
      const at = e.line ? `:${e.line}${e.column ? `:${e.column}` : ""}` : "";
      lines.push(`    ${a.file}${at}: ${e.message}${e.hint ? style.dim(` (${e.hint})`) : ""}`);
    }
  }
  const servers = d.mcp_servers.map((s) => {
    const where = style.dim(s.file);
    if (s.status === "never_synced") {
      return `  ${s.name} (${s.transport})  not synced yet (stn sync)  ${where}`;
    }
    const tools = `${s.tools} tool${s.tools === 1 ? "" : "s"}`;
    if (s.status === "ok") return `  ${s.name} (${s.transport})  ${tools}  ${where}`;
    const hint = s.error?.hint ? style.dim(` (${s.error.hint})`) : "";
    const kept = s.tools ? ` (keeps the ${tools} found before)` : "";
    return `  ${s.name} (${s.transport})  ${
      style.red("failed")
    }: ${s.error?.message}${hint}${kept}  ${where}`;
  });
  const invalidConfigs = d.mcp_configs.filter((c) => c.error).map((c) =>
    `  ${style.red("invalid")} ${c.file}: ${c.error}`
  );
  lines.push(`mcp servers (${servers.length}):`, ...servers, ...invalidConfigs);
  lines.push(
    `workflows (${d.workflows.length}):`,
    ...d.workflows.map((w) => `  ${w.id ?? style.red("(no id)")}  ${style.dim(w.file)}`),
  );
  lines.push(`variables needed (${d.variables.length}):`);
  for (const v of d.variables) {
    const where = v.source === "missing" ? style.red("missing") : `set (${v.source})`;
    lines.push(`  ${v.name}${v.secret ? " [secret]" : ""}  ${where}  ${style.dim(v.used_by.join(", "))}`);
  }
  if (d.missing.length) {
    lines.push("", `set the missing ones with: stn env vars set ${d.name} NAME -   (value from stdin)`);
  }
  return lines;
}

/** Reads a value from stdin, without its final newline. */
async function readStdin(name: string): Promise<string> {
  if (Deno.stdin.isTerminal()) note(`value of ${name} (end with Ctrl-D):`);
  const text = await new Response(Deno.stdin.readable).text();
  return text.replace(/\r?\n$/, "");
}

function varsCommand(env: Command): void {
  const vars = env.command("vars").alias("variables").description(
    "the variables of an environment (variables.yml, mode 0600); secret-looking names are always masked",
  );
  vars.command("list <env>").description("list the variables (secrets masked)").action(
    async (name: string, _o: unknown, cmd: Command) => {
      const result = await withStation(cmd, (client) => listVariables(client, name), NO_SYNC);
      render(result, {
        json: jsonMode(cmd),
        text: (r) =>
          r.variables.length
            ? table(["NAME", "VALUE"], r.variables.map((v) => [v.name, v.value]))
            : `no variables in ${r.environment}`,
      });
    },
  );
  vars.command("get <env> <name>").description("print one value (a secret prints masked)").action(
    async (name: string, variable: string, _o: unknown, cmd: Command) => {
      const result = await withStation(cmd, (client) => getVariable(client, name, variable), NO_SYNC);
      render(result, { json: jsonMode(cmd), text: (r) => r.value });
    },
  );
  vars.command("set <env> <name> [value]")
    .description("set a variable; without a value, or with `-`, the value is read from stdin (for secrets)")
    .action(async (name: string, variable: string, value: string | undefined, _o: unknown, cmd: Command) => {
      const fromStdin = value === undefined || value === "-";
      const v = fromStdin ? await readStdin(variable) : value;
      const result = await withStation(cmd, (client) => setVariable(client, name, variable, v), NO_SYNC);
      if (!fromStdin && result.secret) {
        note("note: a value on the command line stays in your shell history; pass `-` to read it from stdin");
      }
      render(result, {
        json: jsonMode(cmd),
        text: (r) => `${r.created ? "set" : "updated"} ${r.name} = ${r.value} in ${name}`,
      });
    });
  vars.command("unset <env> <name>").description("remove a variable").action(
    async (name: string, variable: string, _o: unknown, cmd: Command) => {
      const result = await withStation(cmd, (client) => unsetVariable(client, name, variable), NO_SYNC);
      render(result, { json: jsonMode(cmd), text: (r) => `removed ${r.name} from ${name}` });
    },
  );
}

/** `stn env …`: environments as folders, and their variables. */
export function envCommand(program: Command): void {
  const env = program.command("env").alias("environment").description(
    "list, show, create, copy and delete environments ($STATION_HOME/environments/<env>), and their variables",
  );
  env.command("list").description("list environments with their agents, MCP servers and workflows").action(
    async (_o: unknown, cmd: Command) => {
      const list = await withStation(cmd, (client) => listEnvironments(client), NO_SYNC);
      render({ environments: list }, {
        json: jsonMode(cmd),
        text: (r) =>
          r.environments.length
            ? table(
              ["NAME", "AGENTS", "MCP SERVERS", "WORKFLOWS", "MISSING VARIABLES"],
              r.environments.map((e) => [
                e.error ? `${e.name} (unreadable: ${e.error})` : e.name,
                String(e.agents),
                String(e.mcp_servers),
                String(e.workflows),
                String(e.missing_variables),
              ]),
            )
            : "no environments (`stn init` creates `default`)",
      });
    },
  );
  env.command("show <env>")
    .description("agents, MCP servers, workflows and the variables it needs (missing ones marked)")
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const d = await withStation(cmd, (client) => showEnvironment(client, name), NO_SYNC);
      render(d, { json: jsonMode(cmd), text: environmentText });
    });
  env.command("trust <env>")
    .description(
      "approve every MCP server of the environment as its configs write them now (prints what each runs); " +
        "then `stn sync <env>` starts them",
    )
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const r = await withStation(cmd, (client) => approveMcpServers(client, name), NO_SYNC);
      render(r, { json: jsonMode(cmd), text: approvalLines });
    });
  env.command("create <env>").description("create an empty environment").action(
    async (name: string, _o: unknown, cmd: Command) => {
      const d = await withStation(cmd, (client) => createEnvironment(client, name), NO_SYNC);
      render(d, { json: jsonMode(cmd), text: (r) => `created environment ${r.name} (${r.path})` });
    },
  );
  env.command("copy <from> <to>").description("copy an environment, variables.yml included, into a new one")
    .action(async (from: string, to: string, _o: unknown, cmd: Command) => {
      const d = await withStation(cmd, (client) => copyEnvironment(client, from, to), NO_SYNC);
      render(d, { json: jsonMode(cmd), text: (r) => `copied ${from} to ${r.name} (${r.path})` });
    });
  env.command("delete <env>")
    .description("delete an environment and all its files (asks on a terminal; otherwise needs --yes)")
    .option("-y, --yes", "do not ask")
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) => {
      const json = jsonMode(cmd);
      if (!opts.yes && (json || !Deno.stdin.isTerminal())) {
        throw usageError(
          "confirmation_required",
          `refusing to delete environment ${name} without confirmation`,
          "pass --yes",
        );
      }
      if (!opts.yes) {
        const answer = prompt(`Delete environment ${name} and every file in it? [y/N]`);
        if (!/^y(es)?$/i.test(answer?.trim() ?? "")) {
          return render({ deleted: null }, {
            json,
            text: () => "Not deleted.",
          });
        }
      }
      const r = await withStation(cmd, (client) => deleteEnvironment(client, name), NO_SYNC);
      render(r, {
        json,
        text: (x) => [
          `deleted environment ${x.name}`,
          ...(x.disabled_workflows.length ? [`disabled workflows: ${x.disabled_workflows.join(", ")}`] : []),
        ],
      });
    });
  varsCommand(env);
}
