import { didYouMean } from "../../lib/did_you_mean.ts";
import type { ValidationIssue } from "../../workflows/definition/validate.ts";
import type { ParsedAgent } from "./load.ts";

/**
 * The checks that need more than one file: `tools` against the environment's MCP tool catalogue (when
 * one is known: after sync discovered the servers' tools), and `agents` against the environment's
 * other agents, without cycles. An agent with an error here loses its definition, like any other error.
 */

export interface ReferenceOptions {
  /** The environment's MCP tools: exposed name (`__read_file`) → server. Without it tools are not checked. */
  knownTools?: ReadonlyMap<string, string>;
  /**
   * MCP servers of the environment whose tools are not discovered yet (not approved, or failed): while
   * any is, a tool missing from the catalogue may be theirs, so it is a warning, not an error.
   */
  pendingServers?: readonly string[];
  /** Agent names that exist (default: the agents checked together). */
  knownAgents?: Iterable<string>;
}

function unknownTool(tool: string, catalogue: ReadonlyMap<string, string>) {
  const servers = [...new Set(catalogue.values())].sort();
  const near = didYouMean(tool, [...catalogue.keys()]) ??
    (catalogue.has(`__${tool}`) ? `__${tool}` : undefined);
  return {
    code: "unknown_tool",
    message: servers.length
      ? `no MCP server offers the tool \`${tool}\` (searched: ${servers.join(", ")})`
      : `no MCP server offers the tool \`${tool}\`: the environment has no MCP tools`,
    hint: near
      ? `did you mean \`${near}\`?`
      : servers.length
      ? "tools are named `__<tool>` as the server lists them; `stn sync` rediscovers them"
      : "add an MCP config (environments/<env>/*.json) and run `stn sync`",
  };
}

/** The cycles through `agents` lists (self-references excluded), each as the names along it, first = last. */
function cycles(agents: ParsedAgent[]): string[][] {
  const byName = new Map(agents.filter((a) => a.definition).map((a) => [a.name, a]));
  const found: string[][] = [];
  const done = new Set<string>();
  const visit = (a: ParsedAgent, stack: string[]) => {
    if (done.has(a.name)) return;
    stack.push(a.name);
    for (const child of a.definition!.agents) {
      const at = stack.indexOf(child);
      if (at >= 0) {
        if (child !== a.name) found.push([...stack.slice(at), child]);
        continue;
      }
      const next = byName.get(child);
      if (next) visit(next, stack);
    }
    stack.pop();
    done.add(a.name);
  };
  for (const a of byName.values()) visit(a, []);
  return found;
}

/** Adds the cross-file errors to each agent, dropping the definition of any agent that gets one. */
export function checkReferences(agents: ParsedAgent[], options: ReferenceOptions = {}): void {
  const names = [...new Set(options.knownAgents ?? agents.map((a) => a.name))];
  const add = (a: ParsedAgent, pointer: string, issue: Omit<ValidationIssue, "path">) => {
    a.errors.push({ ...issue, path: pointer, ...a.place(pointer, true) });
  };
  for (const a of agents) {
    const def = a.definition;
    if (!def) continue;
    if (options.knownTools) {
      const pending = options.pendingServers ?? [];
      for (const tool of def.tools) {
        if (options.knownTools.has(tool)) continue;
        const pointer = pointerOf(a, "tools", tool);
        if (!pending.length) add(a, pointer, unknownTool(tool, options.knownTools));
        else {
          a.warnings.push({
            code: "tool_not_discovered",
            path: pointer,
            ...a.place(pointer, true),
            message: `\`${tool}\` is not in the tool catalogue yet: MCP server${
              pending.length === 1 ? "" : "s"
            } ${
              pending.join(", ")
            } not discovered (not approved, or failed); the agent cannot run until it is`,
            hint: "approve the servers (`stn env trust <env>` or `stn mcp approve`) and run `stn sync`",
          });
        }
      }
    }
    for (const child of def.agents) {
      if (child === a.name) {
        add(a, pointerOf(a, "agents", child), {
          code: "agent_cycle",
          message: `\`${child}\` lists itself as a child agent`,
          hint: "an agent cannot call itself; remove it from `agents:`",
        });
      } else if (!names.includes(child)) {
        const near = didYouMean(child, names);
        add(a, pointerOf(a, "agents", child), {
          code: "unknown_agent",
          message: `no agent \`${child}\` in this environment`,
          hint: near
            ? `did you mean \`${near}\`?`
            : `agents are the agents/<Name>.prompt files: ${names.join(", ")}`,
        });
      }
    }
  }
  // Every agent on a cycle gets the error, at the entry that continues it, so none of them is stored.
  const byName = new Map(agents.map((a) => [a.name, a]));
  const told = new Set<string>();
  for (const path of cycles(agents)) {
    for (let i = 0; i + 1 < path.length; i++) {
      const from = byName.get(path[i])!;
      const pointer = pointerOf(from, "agents", path[i + 1]);
      if (told.has(`${from.name}\0${pointer}`)) continue;
      told.add(`${from.name}\0${pointer}`);
      add(from, pointer, {
        code: "agent_cycle",
        message: `child agents form a cycle: ${[...path.slice(i, -1), ...path.slice(0, i + 1)].join(" → ")}`,
        hint: "a child agent must not call back into one of its parents; remove one link",
      });
    }
  }
  for (const a of agents) if (a.errors.length) delete a.definition;
}

/** Where a list entry was written (the source list may hold entries the definition dropped or merged). */
function indexIn(a: ParsedAgent, list: "tools" | "agents", value: string): number {
  const i = a.lists[list].indexOf(value);
  return i >= 0 ? i : 0;
}

function pointerOf(a: ParsedAgent, list: "tools" | "agents", value: string): string {
  return `/${list}/${indexIn(a, list, value)}`;
}
