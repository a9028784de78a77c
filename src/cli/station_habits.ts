/**
 * Station's command-line habits, read before the parser (src/cli/command.ts) reads them: its flags become stn's (`--endpoint` →
 * `--station`, approve `-c`, reject `-r`) with a warning, its commands stn has no place for stop with a
 * one-line pointer, and `--version N` after a subcommand goes to that subcommand's own --version only.
 */

import type { Command } from "./command.ts";
import { usageError } from "../errors.ts";
import { GLOBAL_VALUE_OPTIONS } from "./commands.ts";

/** Station's commands stn does otherwise, by command path: what to run instead. */
const POINTERS: Record<string, string> = {
  runs:
    "agent runs are `stn agent runs` (`stn agent inspect RUN` for one); workflow runs are `stn workflow runs`",
  "mcp list":
    "`stn env show ENV` lists an environment's MCP servers and their tools (`stn env list`: every environment)",
  "mcp tools": "`stn env show ENV` lists each MCP server's tools; an agent names them as `__<tool>`",
  "mcp status":
    "`stn env show ENV` shows each MCP server's state; `stn sync ENV` starts them and discovers their tools",
  "mcp add":
    "edit the environment's MCP config files (docs/mcp-servers.md), then `stn sync ENV` and `stn mcp approve`",
  "mcp delete": "remove the server from the environment's MCP config files, then `stn sync ENV`",
  "agent create":
    "agents are files: write environments/ENV/agents/NAME.prompt (docs/agents.md), then `stn sync ENV`",
  "agent delete":
    "remove environments/ENV/agents/NAME.prompt, then `stn sync ENV` (the agent's runs are kept)",
};

/** Station's flags that have no stn meaning, by command path: what to run instead. */
const FLAG_POINTERS: Record<string, Record<string, string>> = {
  sync: {
    "--dry-run":
      "`stn agent validate --env ENV` and `stn workflow validate FILE…` check the files without loading them",
  },
};

/** Station's short flags read as stn's long ones, by command path (stn gives each letter one meaning). */
const SHORT_ALIASES: Record<string, Record<string, string>> = {
  "workflow approvals approve": { "-c": "--comment" },
  "workflow approvals reject": { "-c": "--comment", "-r": "--reason" },
};

/** The args as stn reads them, and a warning for each Station flag translated. */
export interface TranslatedArgs {
  args: string[];
  warnings: string[];
}

/** Walks the command words of args: the deepest command reached, its path, and where its own args start. */
function commandOf(program: Command, args: string[]): { cmd: Command; path: string[]; next?: string } {
  let cmd = program;
  const path: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (a.startsWith("-")) {
      if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) return { cmd, path, next: a };
    cmd = sub;
    path.push(sub.name());
  }
  return { cmd, path };
}

function pointer(command: string, instead: string, what = "command"): never {
  throw usageError("invalid_usage", `\`stn ${command}\` is Station's; stn has no such ${what}`, instead);
}

/** Translates Station's habits in args (before the parser reads them); a pointer is thrown as a usage error. */
export function translateStationHabits(program: Command, args: string[]): TranslatedArgs {
  const { cmd, path, next } = commandOf(program, args);
  const reached = path.join(" ");
  const typed = next === undefined ? reached : [...path, next].join(" ");
  if (POINTERS[typed]) pointer(typed, POINTERS[typed]);
  const end = args.indexOf("--") < 0 ? args.length : args.indexOf("--");
  const warnings: string[] = [];
  const out: string[] = [];
  const hasOwnVersion = cmd.options.some((o) => o.long === "--version" && (o.required || o.optional));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (i >= end) {
      out.push(a);
      continue;
    }
    const flag = a.split("=")[0];
    const instead = FLAG_POINTERS[reached]?.[flag];
    if (instead) pointer(`${reached} ${flag}`, instead, "option");
    const long = SHORT_ALIASES[reached]?.[a];
    if (flag === "--endpoint") {
      warnings.push("--endpoint is Station's flag: read as --station");
      out.push(a === flag ? "--station" : `--station=${a.slice(flag.length + 1)}`);
    } else if (long) {
      warnings.push(`${a} is Station's short flag: read as ${long}`);
      out.push(long);
    } else if (a === "--version" && path.length && /^\d+$/.test(args[i + 1] ?? "")) {
      // Commander lets the global -V/--version appear anywhere: `workflow show X --version 2` would print
      // stn's version. Joined as --version=N, only a subcommand's value-taking --version accepts it.
      if (!hasOwnVersion) {
        throw usageError(
          "invalid_usage",
          `\`stn ${reached}\` has no --version option`,
          "stn's own version is `stn --version`",
        );
      }
      out.push(`--version=${args[++i]}`);
    } else out.push(a);
  }
  return { args: out, warnings };
}
