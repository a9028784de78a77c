/**
 * `stn faker` itself (docs/faker.md): Station's flags checked and read, the real server started (or a tools
 * file read), the session begun, and the faker served over stdin/stdout until its client goes away.
 */

import type { LoadedConfig } from "../config/resolve.ts";
import { createModels, type ResolvedModel } from "../agents/providers.ts";
import { errorMessage, usageError } from "../errors.ts";
import { log } from "../log.ts";
import { connectMcpServer, type McpConnection } from "../mcp/client/mod.ts";
import { serveCatalogStdio } from "../mcp/server/mod.ts";
import type { McpToolSpec } from "../mcp/server/tool.ts";
import { fakerCatalog, type Listing } from "./proxy.ts";
import { type FakerSession, type FakerTool, newSessionId, SessionRecorder } from "./session.ts";
import { inventedTools } from "./invent.ts";
import { template } from "./templates.ts";
import { parseToolsFile } from "./tools_file.ts";

/** The flags of `stn faker`, as the CLI parser hands them over (Station's names). */
export interface FakerFlags {
  command?: string;
  /** Comma-separated arguments of the command. */
  args?: string;
  /** KEY=VALUE, repeatable. */
  env: string[];
  passthrough?: boolean;
  aiEnabled?: boolean;
  aiModel?: string;
  aiInstruction?: string;
  aiTemplate?: string;
  standalone?: boolean;
  tools?: string;
  /** --standalone without --tools: the id the invented tools are kept under. */
  fakerId?: string;
}

/** How long the real server may take to start and answer the MCP handshake (npx may fetch it first). */
const START_TIMEOUT_MS = 120_000;

/** The session mode the flags ask for; contradictory or missing flags are usage errors. */
export function fakerMode(f: FakerFlags): FakerSession["mode"] {
  const ai = f.aiEnabled || f.aiModel !== undefined || f.aiInstruction !== undefined ||
    f.aiTemplate !== undefined;
  if (f.standalone) {
    if (f.command !== undefined || f.args !== undefined || f.env.length || f.passthrough) {
      throw usageError(
        "invalid_usage",
        "--standalone serves a tools file with no real server: --command, --args, --env and --passthrough do not apply",
      );
    }
    if ((f.tools === undefined) === (f.fakerId === undefined)) {
      throw usageError(
        "invalid_usage",
        "--standalone needs --tools FILE (the tools to serve, a `stn mock` spec) or --faker-id ID (tools the " +
          "model invents from --ai-instruction, kept for the next run), not both",
        "docs/faker.md#standalone",
      );
    }
    if (f.fakerId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(f.fakerId)) {
      throw usageError(
        "invalid_usage",
        `--faker-id ${f.fakerId}: use letters, digits, _ . - (it names a file)`,
      );
    }
    if (f.fakerId !== undefined && f.aiInstruction === undefined && f.aiTemplate === undefined) {
      throw usageError(
        "invalid_usage",
        "--faker-id needs --ai-instruction (or --ai-template): what the server's tools are for",
      );
    }
    return "standalone";
  }
  if (f.tools !== undefined || f.fakerId !== undefined) {
    throw usageError("invalid_usage", "--tools FILE and --faker-id go with --standalone");
  }
  if (f.command === undefined) {
    throw usageError(
      "invalid_usage",
      "`stn faker` needs --command (the real MCP server to front), or --standalone --tools FILE",
      "e.g. stn faker --command npx --args -y,@modelcontextprotocol/server-filesystem,/tmp --ai-enabled; " +
        "`stn faker sessions list` lists recorded sessions",
    );
  }
  if (f.passthrough && ai) {
    throw usageError(
      "invalid_usage",
      "--passthrough returns the real answers unchanged; it does not go with --ai-enabled, --ai-model, " +
        "--ai-instruction or --ai-template",
    );
  }
  return ai ? "ai" : "passthrough";
}

/** `--env KEY=VALUE` flags as a record; one without `=` or a name is a usage error. */
export function envFlags(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw usageError(
        "invalid_usage",
        `--env ${pair}: expected KEY=VALUE`,
        "repeat --env for each variable",
      );
    }
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** `--args` as the command's arguments: split at commas, as Station does. */
export function argsFlag(args: string | undefined): string[] {
  return args === undefined || args === "" ? [] : args.split(",");
}

/** The tools of the real server, as a session keeps them, and how it listed them besides. */
async function realTools(connection: McpConnection) {
  const listed = await connection.listTools({ timeoutMs: START_TIMEOUT_MS });
  const tools: FakerTool[] = listed.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema,
    ...(t.outputSchema && { output_schema: t.outputSchema }),
  }));
  const listing = new Map(listed.map((t): [string, Listing] => [t.name, {
    ...(t.title && { title: t.title }),
    ...(t.annotations && { annotations: t.annotations as McpToolSpec["annotations"] }),
  }]));
  return { tools, listing };
}

/** The tools file of --standalone, read and checked. */
async function toolsFile(path: string): Promise<{ name: string; tools: FakerTool[]; file: string }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw usageError("invalid_usage", `--tools ${path}: cannot read: ${errorMessage(err)}`);
  }
  return { ...parseToolsFile(text, path), file: path };
}

/** Runs the faker the flags describe until its client closes stdin; the session file is left behind. */
export async function runFaker(flags: FakerFlags, config: LoadedConfig): Promise<void> {
  const mode = fakerMode(flags);
  const env = envFlags(flags.env);
  const chosen = flags.aiTemplate === undefined ? undefined : template(config.values, flags.aiTemplate);
  const instruction = [chosen?.instruction, flags.aiInstruction].filter(Boolean).join("\n\n") || undefined;
  const now = new Date();
  const given = flags.tools === undefined ? undefined : await toolsFile(flags.tools);
  let model: ResolvedModel | undefined;
  if (mode !== "passthrough") {
    // A missing key or an unknown provider stops the faker before the real server starts.
    model = createModels(config.values.ai, Deno.env.toObject()).resolve(flags.aiModel ?? chosen?.model);
  }
  const file = flags.fakerId === undefined ? given : await inventedTools(model!, {
    home: config.paths.home,
    fakerId: flags.fakerId,
    instruction: instruction!,
  });
  const name = file?.name ?? "stn-faker";
  let connection: McpConnection | undefined;
  let tools = file?.tools ?? [];
  let listing: Map<string, Listing> | undefined;
  if (!file) {
    connection = await connectMcpServer(
      {
        transport: "stdio",
        command: flags.command!,
        args: argsFlag(flags.args),
        env: { ...Deno.env.toObject(), ...env },
      },
      { server: flags.command!, timeoutMs: START_TIMEOUT_MS },
    );
    try {
      ({ tools, listing } = await realTools(connection));
    } catch (err) {
      await connection.close();
      throw err;
    }
  }

  const recorder = new SessionRecorder(config.paths.home, {
    id: newSessionId(now),
    mode,
    ...(connection && {
      server: { command: flags.command!, args: argsFlag(flags.args), env_keys: Object.keys(env).sort() },
    }),
    ...(file && { tools_file: file.file }),
    name,
    ...(instruction && { instruction }),
    ...(model && { model: model.id }),
    started_at: now.toISOString(),
    tools,
    calls: [],
  });
  // The file is created at the first call: a client that only lists the tools (`stn sync` discovering
  // them) leaves no session behind.
  log.info(`stn faker: session ${recorder.session.id} (${mode}, ${tools.length} tools) → ${recorder.path}`);
  try {
    await serveCatalogStdio(fakerCatalog({ connection, model, instruction, recorder, listing }));
  } finally {
    await connection?.close();
    await recorder.end().catch((err) =>
      log.warn(`stn faker: cannot record the session: ${errorMessage(err)}`)
    );
  }
}
