/** `stn mock SPEC`: a mock MCP server serving a spec file's tools, over stdio or Streamable HTTP. */

import { lazyImport } from "../lib/lazy_import.ts";
import { basename } from "node:path";
import type { Command } from "./command.ts";
import { type StationError, usageError } from "../errors.ts";
import { jsonMode, numberFlag } from "./context.ts";
import { readLocalText } from "./local_files.ts";
import { note, render } from "./output.ts";

/**
 * The names Station's `stn mock <name>` knew: demo servers with canned data compiled into Station. stn has no
 * canned data; a spec file says what each tool answers.
 */
const STATION_BUILTINS = [
  "aws-billing",
  "aws-cloudwatch",
  "aws-compute-optimizer",
  "aws-cost-explorer",
  "aws-cost-explorer-extended",
  "aws-guardduty",
  "aws-inspector",
  "aws-pricing",
  "aws-xray",
  "bigquery",
  "cloudquery",
  "cloudtrail",
  "datadog",
  "falco",
  "github",
  "grafana",
  "guardduty",
  "iam-access-analyzer",
  "macie",
  "opencost",
  "pagerduty",
  "semgrep",
  "stripe",
  "trivy",
];

/** `stn mock <name>` for one of Station's built-in mocks: what to write instead, with an example. */
function builtinError(name: string): StationError {
  return usageError(
    "mock_builtin_unavailable",
    `\`stn mock ${name}\` is one of Station's built-in demo mocks; stn has none built in: ` +
      `it serves the tools of a spec file you write (or --from-cassette FILE, the tools a recording saw)`,
    `write ${name}.yaml (docs/testing.md#mock-mcp-servers), e.g.\n` +
      `  tools:\n` +
      `    get_cost_and_usage:\n` +
      `      description: Costs by service for a period\n` +
      `      input_schema: { type: object, properties: { period: { type: string } } }\n` +
      `      expr: '{ "period": $args.period, "total": 1234.5, "currency": "USD" }'\n` +
      `and put ["mock", "${name}.yaml"] in the MCP config's args`,
  );
}

/** The CLI's side of `stn mock`. */
export function mockCommand(program: Command): void {
  program.command("mock [spec]")
    .description(
      "serve mock MCP tools from a spec file (YAML or JSON: each tool's description, input_schema and one " +
        "answer — result, expr (JSONata over the call's arguments), sequence or error) over stdin/stdout, " +
        "for MCP configs and tests (docs/testing.md#mock-mcp-servers)",
    )
    .option("--from-cassette <file>", "serve the tools a recorded cassette saw, answering as recorded")
    .option(
      "--port <n>",
      "serve Streamable HTTP at http://127.0.0.1:<n>/mcp instead of stdio (0: a free port); prints the URL",
    )
    .action(
      async (spec: string | undefined, opts: { fromCassette?: string; port?: string }, cmd: Command) => {
        const { catalog } = await loadCatalog(spec, opts.fromCassette);
        // The MCP server plumbing loads only for this command.
        const { serveCatalogHttp, serveCatalogStdio } = await lazyImport<
          typeof import("../mcp/server/mod.ts")
        >("../mcp/server/mod.ts", import.meta.url);
        if (opts.port === undefined) return await serveCatalogStdio(catalog);
        const port = numberFlag(opts.port);
        if (typeof port !== "number" || port > 65_535) {
          throw usageError(
            "invalid_usage",
            `--port ${opts.port} is not a port number`,
            "give 0-65535 (0: any free port)",
          );
        }
        const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
        let onSignal!: () => void;
        const signalled = new Promise<void>((resolve) => (onSignal = resolve));
        for (const s of signals) Deno.addSignalListener(s, onSignal);
        try {
          const server = await serveCatalogHttp(catalog, {
            host: "127.0.0.1",
            port,
            idleMs: 30 * 60_000,
            maxBodyBytes: 4 * 1024 * 1024,
          });
          const tools = (await catalog.tools()).map((t) => t.name);
          render({ url: server.url, name: catalog.name, tools }, { json: jsonMode(cmd), text: (r) => r.url });
          note(`stn mock: serving ${tools.length} tool(s) of ${catalog.name}; Ctrl-C stops`);
          await signalled;
          await server.close();
        } finally {
          for (const s of signals) Deno.removeSignalListener(s, onSignal);
        }
      },
    );
}

/** The catalog a spec file (or a cassette) gives; a Station built-in name gets its own error. */
async function loadCatalog(spec: string | undefined, cassette: string | undefined) {
  if (spec !== undefined && cassette !== undefined) {
    throw usageError("invalid_usage", "give a spec file or --from-cassette FILE, not both");
  }
  if (spec === undefined && cassette === undefined) {
    throw usageError(
      "invalid_usage",
      "`stn mock` needs a spec file (or --from-cassette FILE)",
      "docs/testing.md#mock-mcp-servers describes the spec file; `stn mock --help` the options",
    );
  }
  // Loaded only by this command.
  const { mockCatalog, specTools } = await lazyImport<typeof import("../testing/mock_server.ts")>(
    "../testing/mock_server.ts",
    import.meta.url,
  );
  if (cassette !== undefined) {
    const { parseCassette } = await lazyImport<typeof import("../testing/cassette.ts")>(
      "../testing/cassette.ts",
      import.meta.url,
    );
    const { cassetteTools } = await lazyImport<typeof import("../testing/mock_cassette.ts")>(
      "../testing/mock_cassette.ts",
      import.meta.url,
    );
    const recorded = parseCassette(await readLocalText(cassette), cassette);
    const name = basename(cassette).replace(/\.(ya?ml|json)$/, "");
    return { catalog: mockCatalog(name, `the cassette ${cassette}`, cassetteTools(recorded)) };
  }
  if (STATION_BUILTINS.includes(spec!) && !await exists(spec!)) throw builtinError(spec!);
  const { parseMockSpec } = await lazyImport<typeof import("../testing/mock_spec.ts")>(
    "../testing/mock_spec.ts",
    import.meta.url,
  );
  const parsed = parseMockSpec(await readLocalText(spec!), spec!);
  return { catalog: mockCatalog(parsed.name, `the spec ${spec}`, specTools(parsed)) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
