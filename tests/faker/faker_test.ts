import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { EXAMPLE_MCP_SERVER } from "../../src/environment_files/examples.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { childEnv, MAIN, runStn } from "../helpers/stn.ts";

/**
 * `stn faker` end to end: the real MCP filesystem server from npm (run by Deno, as the example environment
 * runs it) behind the real `stn faker`, an MCP client in front, the scripted model server as the provider.
 */

// deno-lint-ignore no-explicit-any -- the MCP SDK client types as any through its .js subpaths
type SdkClient = any;

/** The filesystem server's command line, rooted at `root`. */
function realServer(root: string): { command: string; args: string[] } {
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--no-config",
      "--allow-env",
      `--allow-read=${root}`,
      `--allow-write=${root}`,
      EXAMPLE_MCP_SERVER,
      root,
    ],
  };
}

async function connect(command: string, args: string[], env: Record<string, string>): Promise<SdkClient> {
  const client = new Client({ name: "stn-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env: childEnv(env), stderr: "pipe" }));
  return client;
}

/** `stn faker` in front of the real server, with the given mode flags. */
function faker(home: TempHome, root: string, flags: string[]): Promise<SdkClient> {
  const real = realServer(root);
  return connect(
    Deno.execPath(),
    [...STN_RUN_ARGS, MAIN, "faker", "--command", real.command, "--args", real.args.join(","), ...flags],
    home.env,
  );
}

/** The user prompt of a model request (the faker's generation prompt). */
function prompt(req: ModelRequest): string {
  const users = req.body.messages.filter((m: { role: string }) => m.role === "user");
  return String(users[0].content);
}

async function stnJson(home: TempHome, args: string[]) {
  const r = await runStn(["--json", ...args], { env: home.env });
  assertEquals(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function fixture(): Promise<{ home: TempHome; root: string }> {
  const home = await tempHome();
  const root = home.path("files");
  Deno.mkdirSync(`${root}/sub`, { recursive: true });
  Deno.writeTextFileSync(`${root}/a.txt`, "hello\n");
  return { home, root };
}

Deno.test("stn faker: --passthrough returns the real server's answers unchanged, and records them", async () => {
  const { home, root } = await fixture();
  const model = startModelServer();
  home.writeConfig(`ai:\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  let real: SdkClient, faked: SdkClient;
  try {
    real = await connect(realServer(root).command, realServer(root).args, home.env);
    faked = await faker(home, root, ["--passthrough", "--env", "FAKER_TEST=1"]);
    // The real listing, but for `execution` (MCP tasks), which the faker does not offer.
    const realTools = (await real.listTools()).tools.map(({ execution: _, ...t }: { execution?: unknown }) =>
      t
    );
    assertEquals((await faked.listTools()).tools, realTools, "the real tools, schemas and annotations");
    for (
      const [name, path] of [["list_directory", root], ["read_text_file", `${root}/a.txt`]]
    ) {
      const args = { path };
      const want = await real.callTool({ name, arguments: args });
      assertEquals(await faked.callTool({ name, arguments: args }), want, name);
    }
    // A failure of the real tool comes back as it is, too.
    const missing = { name: "read_text_file", arguments: { path: `${root}/nope.txt` } };
    const failed = await faked.callTool(missing);
    assertEquals(failed.isError, true);
    assertEquals(failed, await real.callTool(missing));
    assertEquals(model.requests.length, 0, "no model call in passthrough");
  } finally {
    await real?.close();
    await faked?.close();
  }
  try {
    const { sessions } = await stnJson(home, ["faker", "sessions", "list"]);
    assertEquals(sessions.length, 1);
    assertEquals([sessions[0].mode, sessions[0].calls], ["passthrough", 3]);
    const session = await stnJson(home, ["faker", "sessions", "view", sessions[0].id]);
    assertEquals(session.server.env_keys, ["FAKER_TEST"], "env names, never values");
    assertEquals(session.calls.map((c: { tool: string; source: string }) => `${c.tool}:${c.source}`), [
      "list_directory:real",
      "read_text_file:real",
      "read_text_file:real",
    ]);
    assertEquals(session.calls[1].answer.content, [{ type: "text", text: "hello\n" }]);
    assertEquals(session.calls[1].answer.structured_content, { content: "hello\n" });
    const mode = Deno.statSync(home.path("faker/sessions", `${session.id}.jsonl`)).mode! & 0o777;
    assertEquals(mode, 0o600, "a session file is private");
    // A line cut short (a crash mid-write) is the last one: the session still reads, without it.
    const file = home.path("faker/sessions", `${session.id}.jsonl`);
    Deno.writeTextFileSync(file, '{"call": {"seq": 4, "tool": "list_dir', { append: true });
    const torn = await stnJson(home, ["faker", "sessions", "view", session.id]);
    assertEquals(torn.calls.length, 3);
  } finally {
    await model.close();
    await home.cleanup();
  }
});

Deno.test("stn faker --ai-enabled: generated data shaped like the real answer; the session exports to a spec stn mock serves", async () => {
  const { home, root } = await fixture();
  const model = startModelServer();
  home.writeConfig(`ai:\n  base_url: ${model.url}\n  api_key: sk-test\n  model: openai/faker-test\n`);
  let badOnce = true;
  model.route((req) => {
    const p = prompt(req);
    if (p.includes("Tool: list_directory")) {
      return { text: '{"content": "[FILE] invoice-2031.pdf\\n[DIR] q3"}' };
    }
    // read_text_file: first an answer that does not match the schema, then a good one.
    if (badOnce) {
      badOnce = false;
      return { text: '{"text": "wrong field"}' };
    }
    return { text: '```json\n{"content": "Dear customer, your invoice is attached.\\n"}\n```' };
  });
  let faked: SdkClient;
  try {
    faked = await faker(home, root, ["--ai-enabled", "--ai-instruction", "an accounting team's files"]);
    const tools = (await faked.listTools()).tools;
    assert(
      tools.some((t: { name: string; outputSchema?: unknown }) =>
        t.name === "list_directory" && t.outputSchema
      ),
    );

    const listed = await faked.callTool({ name: "list_directory", arguments: { path: root } });
    // The filesystem server sends its text and {content: text}: the generated answer does the same.
    assertEquals(listed.content, [{ type: "text", text: "[FILE] invoice-2031.pdf\n[DIR] q3" }]);
    assertEquals(listed.structuredContent, { content: "[FILE] invoice-2031.pdf\n[DIR] q3" });
    const first = prompt(model.requests[0]);
    assert(first.includes("[FILE] a.txt"), `the real answer is the model's example of the shape: ${first}`);
    assert(first.includes("an accounting team's files"), first);
    assert(first.includes('"required":["content"]'), `the tool's output schema is the shape: ${first}`);
    assertEquals(model.requests[0].body.model, "faker-test");

    const read = await faked.callTool({ name: "read_text_file", arguments: { path: `${root}/a.txt` } });
    assertEquals(read.structuredContent, { content: "Dear customer, your invoice is attached.\n" });
    assertEquals(model.requests.length, 3, "one retry after an answer that did not match");
    const retry = model.requests[2].body.messages.at(-1).content;
    assert(String(retry).includes("does not match the schema"), String(retry));
    const again = prompt(model.requests[1]);
    assert(again.includes("Earlier calls in this session"), again);

    // The real call fails (no such file): the client still gets data in the tool's shape, and the model was told.
    const missing = await faked.callTool({ name: "read_text_file", arguments: { path: `${root}/nope.txt` } });
    assertEquals(missing.isError, undefined);
    assertEquals(missing.structuredContent, { content: "Dear customer, your invoice is attached.\n" });
    assert(prompt(model.requests[3]).includes("The real server gave no answer"), prompt(model.requests[3]));
  } finally {
    await faked?.close();
  }

  let mock: SdkClient;
  try {
    const { sessions } = await stnJson(home, ["faker", "sessions", "list"]);
    const session = await stnJson(home, ["faker", "sessions", "view", sessions[0].id]);
    assertEquals(session.mode, "ai");
    assertEquals(session.model, "openai/faker-test");
    assertEquals(session.calls[0].source, "generated");
    assertEquals(session.calls[0].real.structured_content, { content: "[FILE] a.txt\n[DIR] sub" });
    assert(session.calls[1].input_tokens > 0);
    assertEquals(session.calls[2].real.is_error, true);

    const spec = home.path("fs.mock.yaml");
    const out = await stnJson(home, ["faker", "sessions", "export", session.id, "-o", spec]);
    assertEquals(out.file, spec);
    const again = await runStn(["faker", "sessions", "export", session.id, "-o", spec], { env: home.env });
    assertEquals(again.code, 1, "an existing file is never replaced without --force");
    assert(again.stderr.includes("already exists"), again.stderr);

    // The faked session as a deterministic mock: the same answers, no model, no real server.
    mock = await connect(Deno.execPath(), [...STN_RUN_ARGS, MAIN, "mock", spec], home.env);
    const replay = await mock.callTool({ name: "list_directory", arguments: { path: "/anywhere" } });
    assertEquals(replay.content, [{ type: "text", text: "[FILE] invoice-2031.pdf\n[DIR] q3" }]);
    const text = await mock.callTool({ name: "read_text_file", arguments: { path: "/x" } });
    assertEquals(text.content, [{ type: "text", text: "Dear customer, your invoice is attached.\n" }]);
    const never = await mock.callTool({ name: "move_file", arguments: { source: "a", destination: "b" } });
    assertEquals(never.isError, true, "a tool the session never called fails saying so");
    assertEquals(model.requests.length, 4, "the mock asks no model");
  } finally {
    await mock?.close();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("stn faker --standalone: a tools file's tools, every answer generated; bad calls and bad answers are tool errors", async () => {
  const home = await tempHome();
  const model = startModelServer();
  home.writeConfig(`ai:\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  Deno.writeTextFileSync(
    home.path("billing.yaml"),
    `name: billing
tools:
  get_invoice:
    description: One invoice by id
    input_schema: { type: object, properties: { id: { type: string } }, required: [id] }
    output_schema:
      type: object
      properties: { id: { type: string }, amount_cents: { type: integer } }
      required: [id, amount_cents]
  region:
    description: The account's region
`,
  );
  model.script(
    { text: '{"id": "in_42", "amount_cents": 129900}' },
    { text: "eu-west-1" },
    { text: "not json" },
    { text: "still not json" },
  );
  let client: SdkClient;
  try {
    client = await connect(
      Deno.execPath(),
      [
        ...STN_RUN_ARGS,
        MAIN,
        "faker",
        "--standalone",
        "--tools",
        home.path("billing.yaml"),
        "--ai-template",
        "stripe-payments",
      ],
      home.env,
    );
    assertEquals(client.getServerVersion()?.name, "billing");
    const invoice = await client.callTool({ name: "get_invoice", arguments: { id: "in_42" } });
    assertEquals(invoice.structuredContent, { id: "in_42", amount_cents: 129900 });
    assert(prompt(model.requests[0]).includes("Answer like Stripe's API"), "the template's instruction");
    const region = await client.callTool({ name: "region", arguments: {} });
    assertEquals(
      region.content,
      [{ type: "text", text: "eu-west-1" }],
      "a text answer may come as plain text",
    );

    const refused = await client.callTool({ name: "get_invoice", arguments: {} });
    assertEquals(refused.isError, true);
    assert(refused.content[0].text.includes("required"), refused.content[0].text);
    assertEquals(model.requests.length, 2, "a refused call asks no model");

    const failed = await client.callTool({ name: "get_invoice", arguments: { id: "x" } });
    assertEquals(failed.isError, true);
    assert(failed.content[0].text.includes("did not write a usable answer"), failed.content[0].text);
  } finally {
    await client?.close();
  }
  try {
    const { sessions } = await stnJson(home, ["faker", "sessions", "list"]);
    const session = await stnJson(home, ["faker", "sessions", "view", sessions[0].id]);
    assertEquals(session.mode, "standalone");
    assertEquals(session.calls.map((c: { source: string }) => c.source), [
      "generated",
      "generated",
      "refused",
      "generated",
    ]);
    const spec = await stnJson(home, ["faker", "sessions", "export", session.id]);
    assert(spec.spec.includes("in_42"), spec.spec);
  } finally {
    await model.close();
    await home.cleanup();
  }
});

Deno.test("stn faker --standalone --faker-id: the model invents the tools once; later runs serve the kept file", async () => {
  const home = await tempHome();
  const model = startModelServer();
  home.writeConfig(`ai:\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  const tools = {
    tools: {
      get_alarm: {
        description: "One CloudWatch alarm",
        input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        output_schema: {
          type: "object",
          properties: { state: { enum: ["OK", "ALARM"] } },
          required: ["state"],
        },
      },
    },
  };
  model.script(
    { text: '{"tools": {"bad name!": {}}}' },
    { text: JSON.stringify(tools) },
    { text: '{"state": "ALARM"}' },
  );
  const args = [
    ...STN_RUN_ARGS,
    MAIN,
    "faker",
    "--standalone",
    "--faker-id",
    "cw",
    "--ai-instruction",
    "AWS CloudWatch alarms",
  ];
  let client: SdkClient;
  try {
    client = await connect(Deno.execPath(), args, home.env);
    assertEquals((await client.listTools()).tools.map((t: { name: string }) => t.name), ["get_alarm"]);
    assert(String(model.requests[0].body.messages.at(-1).content).includes("AWS CloudWatch alarms"));
    const told = String(model.requests[1].body.messages.at(-1).content);
    assert(told.includes("letters, digits"), `told what was wrong: ${told}`);
    const alarm = await client.callTool({ name: "get_alarm", arguments: { name: "cpu-high" } });
    assertEquals(alarm.structuredContent, { state: "ALARM" });
    await client.close();
    const kept = Deno.readTextFileSync(home.path("faker/tools/cw.yaml"));
    assert(kept.includes("get_alarm") && kept.startsWith("# Tools openai/"), kept);

    // The same id again: the kept tools, no model call to invent them.
    client = await connect(Deno.execPath(), args, home.env);
    assertEquals((await client.listTools()).tools.map((t: { name: string }) => t.name), ["get_alarm"]);
    assertEquals(model.requests.length, 3);
  } finally {
    await client?.close();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("stn faker: bad flags and unknown sessions are clear errors", async () => {
  const home = await tempHome();
  try {
    const cases: [string[], number, string][] = [
      [["faker"], 2, "needs --command"],
      [["faker", "--command", "x", "--passthrough", "--ai-enabled"], 2, "does not go with"],
      [["faker", "--command", "x", "--env", "NOEQUALS"], 2, "expected KEY=VALUE"],
      [["faker", "--standalone"], 2, "needs --tools"],
      [["faker", "--standalone", "--faker-id", "x"], 2, "--faker-id needs --ai-instruction"],
      [["faker", "--command", "x", "--ai-template", "nope"], 2, "no such template"],
      [["faker", "sessions", "view", "faker-20260101-000000-abcdef"], 1, "no faker session"],
    ];
    for (const [args, code, says] of cases) {
      const r = await runStn(args, { env: home.env });
      assertEquals(r.code, code, `${args.join(" ")}: ${r.stderr}`);
      assert(r.stderr.includes(says), `${args.join(" ")}: ${r.stderr}`);
    }
    // Station's way to list the templates.
    const list = await runStn(["faker", "--ai-template", "list"], { env: home.env });
    assertEquals(list.code, 0, list.stderr);
    assert(list.stdout.includes("aws-finops"), list.stdout);
    Deno.writeTextFileSync(home.path("bad.yaml"), "tools:\n  t:\n    input_schema: { type: objekt }\n");
    const bad = await runStn(["faker", "--standalone", "--tools", home.path("bad.yaml")], { env: home.env });
    assertEquals(bad.code, 2, bad.stderr);
    assert(/bad\.yaml:3:\d+/.test(bad.stderr), bad.stderr);
  } finally {
    await home.cleanup();
  }
});
