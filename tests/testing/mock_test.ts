import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { STN_RUN_ARGS } from "../../scripts/stn_flags.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { childEnv, MAIN, runStn } from "../helpers/stn.ts";
import { connectHttp, toolJson } from "../mcp/helpers.ts";
import { mockCatalog, specTools } from "../../src/testing/mock_server.ts";
import { parseMockSpec } from "../../src/testing/mock_spec.ts";

const SPEC = `name: billing
tools:
  add:
    description: Adds two numbers
    input_schema:
      type: object
      properties: { a: { type: number }, b: { type: number } }
      required: [a, b]
    expr: '{ "sum": a + b, "seen": $args }'
  next_ticket:
    description: The next ticket in the queue
    sequence: [{ result: { id: 1 } }, { error: rate limited }, { result: { id: 2 } }]
  region:
    result: eu-west-1
  quota:
    description: Always over quota
    error: quota exceeded for this account
`;

/** Lists and calls the spec's tools through a connected SDK client, as an agent would. */
async function exercise(client: any): Promise<void> {
  const { tools } = await client.listTools();
  assertEquals(tools.map((t: { name: string }) => t.name).sort(), ["add", "next_ticket", "quota", "region"]);
  const add = tools.find((t: { name: string }) => t.name === "add");
  assertEquals(add.description, "Adds two numbers");
  assertEquals(add.inputSchema.required, ["a", "b"]);

  // JSONata sees the call's arguments.
  const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  assertEquals(sum.isError, undefined);
  assertEquals(toolJson(sum), { sum: 42, seen: { a: 2, b: 40 } });
  assertEquals(sum.structuredContent, { sum: 42, seen: { a: 2, b: 40 } });

  // A sequence advances per call; its last answer repeats.
  const tickets = [];
  for (let i = 0; i < 4; i++) {
    const r = await client.callTool({ name: "next_ticket", arguments: {} });
    tickets.push(r.isError ? toolJson(r).error.message : toolJson(r));
  }
  assertEquals(tickets, [{ id: 1 }, "rate limited", { id: 2 }, { id: 2 }]);

  // A string result is the text as it is.
  const region = await client.callTool({ name: "region", arguments: {} });
  assertEquals(region.content, [{ type: "text", text: "eu-west-1" }]);

  const quota = await client.callTool({ name: "quota", arguments: {} });
  assertEquals(quota.isError, true);
  assertEquals(toolJson(quota).error.code, "mock_tool_failed");
  assertEquals(toolJson(quota).error.message, "quota exceeded for this account");

  // Arguments its input schema does not allow: a tool error naming the problem, as a real server's.
  const bad = await client.callTool({ name: "add", arguments: { a: "two" } });
  assertEquals(bad.isError, true);
  assertEquals(toolJson(bad).error.code, "mock_input_invalid");
  assert(toolJson(bad).error.message.includes("required"), toolJson(bad).error.message);
}

async function specHome(): Promise<TempHome> {
  const home = await tempHome();
  Deno.writeTextFileSync(home.path("billing.yaml"), SPEC);
  return home;
}

Deno.test("stn mock: an MCP client lists and calls a spec's tools over stdio", async () => {
  const home = await specHome();
  const client = new Client({ name: "stn-test", version: "1.0.0" });
  try {
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [...STN_RUN_ARGS, MAIN, "mock", home.path("billing.yaml")],
        env: childEnv(home.env),
        stderr: "inherit",
      }),
    );
    assertEquals(client.getServerVersion()?.name, "billing");
    await exercise(client);
  } finally {
    await client.close();
    await home.cleanup();
  }
});

Deno.test("stn mock --port: the same tools over Streamable HTTP, the URL printed on stdout", async () => {
  const home = await specHome();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, MAIN, "mock", home.path("billing.yaml"), "--port", "0"],
    env: childEnv(home.env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let client: any;
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stn mock exited before printing its URL: ${out}`);
      out += value;
    }
    reader.releaseLock();
    const url = out.trim();
    assert(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(url), url);
    client = await connectHttp(url);
    await exercise(client);
  } finally {
    await client?.close();
    child.kill("SIGTERM");
    assertEquals((await child.status).code, 0, "Ctrl-C/SIGTERM stops it cleanly");
    await child.stdout.cancel().catch(() => {});
    await home.cleanup();
  }
});

Deno.test("stn mock: Station's built-in mock names get the spec format and an example", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["mock", "aws-cost-explorer"], { env: home.env, cwd: home.home });
    assertEquals(r.code, 2);
    assert(r.stderr.includes("Station's built-in demo mocks"), r.stderr);
    assert(r.stderr.includes("docs/testing.md#mock-mcp-servers"), r.stderr);
    assert(r.stderr.includes("tools:") && r.stderr.includes('["mock", "aws-cost-explorer.yaml"]'), r.stderr);

    // The hint's example is a spec stn mock takes.
    const example = r.stderr.split("e.g.\n")[1].split("\nand put")[0];
    Deno.writeTextFileSync(home.path("aws-cost-explorer.yaml"), example);
    const client = new Client({ name: "stn-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [...STN_RUN_ARGS, MAIN, "mock", home.path("aws-cost-explorer.yaml")],
        env: childEnv(home.env),
        stderr: "inherit",
      }),
    );
    try {
      const cost = await client.callTool({ name: "get_cost_and_usage", arguments: { period: "2026-10" } });
      assertEquals(toolJson(cost as any).period, "2026-10");
    } finally {
      await client.close();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn mock: a spec that does not validate names each problem at file:line:col", async () => {
  const home = await tempHome();
  try {
    Deno.writeTextFileSync(
      home.path("bad.yaml"),
      "tools:\n  both:\n    result: 1\n    error: no\n  typo:\n    resul: 1\n  broken:\n    expr: '1 +'\n",
    );
    const r = await runStn(["mock", "bad.yaml"], { env: home.env, cwd: home.home });
    assertEquals(r.code, 2);
    assert(
      r.stderr.includes("bad.yaml:2:3: a tool answers with one of `result`, `error`, not several"),
      r.stderr,
    );
    assert(
      r.stderr.includes("bad.yaml:6:5: unknown field `resul`") || r.stderr.includes("bad.yaml:5:3"),
      r.stderr,
    );
    assert(r.stderr.includes("bad.yaml:8:5") && r.stderr.includes("(at /tools/broken/expr)"), r.stderr);
    assert(!r.stderr.includes("    at "), "no stack trace");
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn mock: the spec example in docs/testing.md is a spec, and its expr sees the args", async () => {
  const doc = Deno.readTextFileSync(new URL("../../docs/testing.md", import.meta.url));
  const example = doc.split("## Mock MCP servers")[1].split("```yaml\n")[1].split("```")[0];
  const spec = parseMockSpec(example, "billing.yaml");
  const tools = await mockCatalog(spec.name, "the example", specTools(spec)).tools();
  assertEquals(tools.map((t) => t.name), ["get_cost", "region", "next_ticket", "refund"]);
  const cost = await tools[0].call({ service: "s3", month: "2026-10" }, new AbortController().signal);
  assertEquals(cost, { service: "s3", month: "2026-10", total: 200 });
});
