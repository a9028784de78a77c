/** `stn faker`: the MCP proxy that fakes tool answers, its recorded sessions and their export (docs/faker.md). */

import { lazyImport } from "../lib/lazy_import.ts";
import { resolve } from "node:path";
import type { Command } from "./command.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { commandConfig, jsonMode, numberFlag } from "./context.ts";
import { fields, render, StationError, table } from "./output.ts";
import { usageError } from "../errors.ts";
import type { FakerFlags, FakerSession } from "../faker/mod.ts";

const HELP = `
Modes (every call and answer is recorded as a session under $STATION_HOME/faker/sessions):
  --passthrough (the default without --ai-*)  calls go to the real server, its answers come back unchanged
  --ai-enabled                                 calls go to the real server; the client gets data the model
                                               writes in the shape of the real answer (the tool's output
                                               schema, else the real answer's JSON, else text)
  --standalone --tools FILE                    no real server: FILE's tools, every answer written by the model
  --standalone --faker-id ID --ai-instruction  no real server: tools the model invents (once, then kept in
                                               $STATION_HOME/faker/tools/ID.yaml), every answer generated

The model is ai.model of config.yaml (or --ai-model, or the template's), through the same providers as
agents; it needs the provider's key in the faker's environment.

Examples:
  stn faker --command npx --args -y,@modelcontextprotocol/server-filesystem,/tmp --ai-enabled
  stn faker --command npx --args -y,@aws-sdk/mcp-server-aws-cost-explorer --env AWS_REGION=us-east-1 \\
    --ai-template aws-finops
  stn faker --standalone --tools billing.yaml --ai-instruction "a SaaS company with 40 customers"
  stn faker sessions list
  stn faker sessions export <id> -o billing.mock.yaml   # then: stn mock billing.mock.yaml

In an environment's MCP config: {"command": "stn", "args": ["faker", "--command", "npx", "--args",
  "-y,@modelcontextprotocol/server-filesystem,/tmp", "--ai-enabled"]} (docs/faker.md).`;

const collect = (value: string, previous: string[]) => [...previous, value];

/** The CLI's side of `stn faker`. */
export function fakerCommand(program: Command): void {
  const faker = program.command("faker")
    .description(
      "an MCP proxy over stdin/stdout that forwards tool calls to a real MCP server and returns its answers, " +
        "or AI-generated data of the same shape; sessions are recorded and export to `stn mock` specs",
    )
    .option("--command <program>", "the real MCP server's command (stdio)")
    .option(
      "--args <list>",
      "its arguments, comma-separated (e.g. -y,@modelcontextprotocol/server-filesystem,/tmp)",
    )
    .option("--env <KEY=VALUE>", "an environment variable of the real server (repeatable)", collect, [])
    .option("--passthrough", "return the real answers unchanged (the default without --ai-* flags)")
    .option("--ai-enabled", "return AI-generated data shaped like the real answers")
    .option("--ai-model <provider/name>", "the model that writes the data (default: ai.model of config.yaml)")
    .option("--ai-instruction <text>", "what the generated data should be like (implies --ai-enabled)")
    .option(
      "--ai-template <name>",
      "a named instruction (`stn faker templates` lists them; `list` too) (implies --ai-enabled)",
    )
    .option(
      "--standalone",
      "no real server: serve the tools of --tools FILE (or --faker-id), every answer generated",
    )
    .option("--tools <file>", "--standalone: the tools to serve (a `stn mock` spec; answers are not used)")
    .option(
      "--faker-id <id>",
      "--standalone without --tools: the model invents the tools from --ai-instruction once, kept in " +
        "$STATION_HOME/faker/tools/<id>.yaml for every later run with this id",
    )
    .addHelpText("after", HELP)
    .action(async (opts: FakerFlags, cmd: Command) => {
      if (opts.aiTemplate === "list") return await listTemplates(cmd);
      // The proxy's modules (MCP client and server, the AI SDK) load only for this command.
      const { runFaker } = await lazyImport<typeof import("../faker/mod.ts")>(
        "../faker/mod.ts",
        import.meta.url,
      );
      await runFaker(opts, await commandConfig(cmd));
    });

  faker.command("templates")
    .description("list the --ai-template instructions: built-in ones and faker.templates of config.yaml")
    .action(async (_opts: unknown, cmd: Command) => await listTemplates(cmd));

  const sessions = faker.command("sessions").description("the recorded faker sessions");
  sessions.command("list")
    .description("list the faker sessions of this STATION_HOME, newest first")
    .option("--limit <n>", "at most this many")
    .action(async (opts: { limit?: string }, cmd: Command) => {
      const limit = numberFlag(opts.limit);
      if (opts.limit !== undefined && (typeof limit !== "number" || limit < 1)) {
        throw usageError("invalid_usage", `--limit ${opts.limit} is not a positive number`);
      }
      const { listSessions } = await lazyImport<typeof import("../faker/mod.ts")>(
        "../faker/mod.ts",
        import.meta.url,
      );
      const all = await listSessions((await commandConfig(cmd)).paths.home);
      const list = typeof limit === "number" ? all.slice(0, limit) : all;
      render({ sessions: list }, {
        json: jsonMode(cmd),
        text: (r) =>
          r.sessions.length === 0
            ? "No faker sessions yet: `stn faker --command …` records one per run."
            : table(
              ["SESSION", "MODE", "STARTED", "CALLS", "TOOLS"],
              r.sessions.map((s) => [s.id, s.mode, s.started_at, String(s.calls), String(s.tools)]),
            ),
      });
    });
  sessions.command("view <id>")
    .description("show a session: what it fronted, and every call with its answer")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { readSession } = await lazyImport<typeof import("../faker/mod.ts")>(
        "../faker/mod.ts",
        import.meta.url,
      );
      const session = await readSession((await commandConfig(cmd)).paths.home, id);
      render(session, { json: jsonMode(cmd), text: sessionText });
    });
  sessions.command("export <id>")
    .description(
      "write a session as a `stn mock` spec (each tool answers as it did, calls in order), so `stn mock` " +
        "replays it deterministically",
    )
    .option("-o, --output <file>", "write the spec to this file (default: stdout)")
    .option("-f, --force", "replace the output file if it exists")
    .action(async (id: string, opts: { output?: string; force?: boolean }, cmd: Command) => {
      const { readSession, sessionSpec } = await lazyImport<typeof import("../faker/mod.ts")>(
        "../faker/mod.ts",
        import.meta.url,
      );
      const spec = sessionSpec(await readSession((await commandConfig(cmd)).paths.home, id));
      if (opts.output === undefined) {
        return render({ spec }, { json: jsonMode(cmd), text: (r) => r.spec.trimEnd() });
      }
      const target = resolve(opts.output);
      if (!opts.force && await Deno.lstat(target).then(() => true, () => false)) {
        throw new StationError("file_exists", `${target} already exists`, {
          hint: "pass --force to replace it, or choose another path with -o",
        });
      }
      await writeFileAtomic(target, spec);
      render({ file: target }, {
        json: jsonMode(cmd),
        text: (r) => `Wrote ${r.file} (serve it: stn mock ${r.file})`,
      });
    });
}

async function listTemplates(cmd: Command): Promise<void> {
  const { templates } = await lazyImport<typeof import("../faker/mod.ts")>(
    "../faker/mod.ts",
    import.meta.url,
  );
  const list = templates((await commandConfig(cmd)).values);
  render({ templates: list }, {
    json: jsonMode(cmd),
    text: (r) =>
      table(
        ["TEMPLATE", "MODEL", "DESCRIPTION"],
        r.templates.map((t) => [t.name, t.model ?? "-", t.description]),
      ),
  });
}

function sessionText(s: FakerSession): string[] {
  const head = fields([
    ["Session", s.id],
    ["Mode", s.mode],
    [
      "Server",
      s.server ? [s.server.command, ...s.server.args].join(" ") : `(standalone) ${s.tools_file ?? ""}`,
    ],
    ...(s.instruction ? [["Instruction", s.instruction] as [string, string]] : []),
    ...(s.model ? [["Model", s.model] as [string, string]] : []),
    ["Started", s.started_at],
    ["Ended", s.ended_at ?? "(running, or it did not stop cleanly)"],
    ["Tools", String(s.tools.length)],
    ["Calls", String(s.calls.length)],
  ]);
  const calls = s.calls.flatMap((c) => [
    "",
    `#${c.seq} ${c.tool} ${JSON.stringify(c.args)} — ${c.source}${
      c.answer.is_error ? ", error" : ""
    }, ${c.duration_ms} ms`,
    ...c.answer.content.flatMap((b) =>
      (b.type === "text" ? String(b.text) : JSON.stringify(b)).split("\n").map((l) => `  ${l}`)
    ),
  ]);
  return [...head, ...calls];
}
