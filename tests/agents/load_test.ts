import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import {
  checkReferences,
  loadAgentFiles,
  loadAgentsFolder,
  parseAgent,
  type ParsedAgent,
} from "../../src/agents/definition/mod.ts";
import { agentReferenceIssues } from "../../src/workflows/definition/agent_refs.ts";
import { validateSource } from "../../src/workflows/definition/load.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/station/", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../examples/environments/default/", import.meta.url));

const parse = (text: string, name = "probe", defaultMaxSteps?: number) =>
  parseAgent(text, { environment: "default", path: `/env/agents/${name}.prompt`, defaultMaxSteps });

/** `code@line:col` of each issue, the form the assertions read best in. */
const where = (issues: ParsedAgent["errors"]) => issues.map((i) => `${i.code}@${i.line}:${i.column}`);

Deno.test("agent loader: every front matter field lands in the definition", async () => {
  const text = `---
model: anthropic/claude-3-5-haiku-latest
max_steps: 7
metadata:
  name: "Triage"
  description: "Sorts incidents"
  tags: [sre, triage]
tools: ["__read_text_file", "__list_directory"]
agents: [helper]
input:
  schema:
    userInput: string
    region?: string, the AWS region
output:
  format: json
  schema:
    type: object
    required: [severity]
    properties:
      severity: {type: string, enum: [low, high]}
sandbox:
  mode: code
  runtime: python
  image: stn/python:3.11-local
  session: workflow
  timeout_seconds: 60
  allow_network: true
  limits: {memory_mb: 512}
schedule:
  cron: "*/15 * * * *"
  timezone: Europe/Berlin
  enabled: false
  task: "check the queue"
  variables: {region: eu-west-1}
timeout: 1h30m
---
{{role "system"}}
Region {{region}}.
{{role "user"}}
{{userInput}}
`;
  const a = await parse(text, "triage");
  assertEquals([a.errors, a.warnings], [[], []]);
  const d = a.definition!;
  assertEquals(d.name, "triage");
  assertEquals(d.environment, "default");
  assertEquals(d.path, "/env/agents/triage.prompt");
  assertEquals(d.checksum.length, 64);
  assertEquals(d.model, "anthropic/claude-3-5-haiku-latest");
  assertEquals([d.max_steps, d.description, d.tags], [7, "Sorts incidents", ["sre", "triage"]]);
  assertEquals([d.tools, d.agents], [["__read_text_file", "__list_directory"], ["helper"]]);
  assertEquals(d.input_schema, {
    type: "object",
    properties: {
      userInput: { type: "string" },
      region: { type: ["string", "null"], description: "the AWS region" },
    },
    required: ["userInput"],
    additionalProperties: false,
  });
  assertEquals(d.output_schema, {
    type: "object",
    required: ["severity"],
    properties: { severity: { type: "string", enum: ["low", "high"] } },
  });
  assertEquals(d.sandbox, {
    mode: "code",
    runtime: "python",
    image: "stn/python:3.11-local",
    session: "workflow",
    timeout_seconds: 60,
    allow_network: true,
    limits: { memory_mb: 512 },
  });
  assertEquals(d.schedule, {
    cron: "*/15 * * * *",
    timezone: "Europe/Berlin",
    enabled: false,
    task: "check the queue",
    variables: { region: "eu-west-1" },
  });
  assertEquals(d.timeout_ms, 90 * 60_000);
  assertEquals(d.source, text);
  assertEquals(d.extra, {});
});

Deno.test("agent loader: defaults, metadata.max_steps, config's default, no front matter at all", async () => {
  const bare = (await parse('{{role "user"}}\n{{userInput}}\n')).definition!;
  assertEquals([bare.max_steps, bare.timeout_ms, bare.model, bare.tools, bare.description], [
    5,
    15 * 60_000,
    undefined,
    [],
    "",
  ]);
  assertEquals((await parse("hi\n", "x", 12)).definition!.max_steps, 12);
  const meta = await parse("---\nmetadata: {max_steps: 9}\ndescription: top\n---\nhi\n", "x", 12);
  assertEquals([meta.definition!.max_steps, meta.definition!.description], [9, "top"]);
  const top = await parse(
    "---\nmax_steps: 3\nmetadata: {max_steps: 9, description: meta}\ndescription: top\n---\nhi",
  );
  assertEquals([top.definition!.max_steps, top.definition!.description], [3, "meta"]);
});

Deno.test("agent loader: input as JSON Schema is kept; output as output_schema string, inline, or both", async () => {
  const json = await parse(`---
input:
  schema:
    type: object
    properties: {team: {type: string}}
---
hi`);
  assertEquals(json.definition!.input_schema, { type: "object", properties: { team: { type: "string" } } });

  const str = await parse(`---
output_schema: '{"type":"object","properties":{"a":{"type":"number"}}}'
---
hi`);
  assertEquals(str.definition!.output_schema, { type: "object", properties: { a: { type: "number" } } });

  const inline = await parse(
    "---\noutput:\n  format: json\n  type: object\n  properties: {b: {type: string}}\n---\nhi",
  );
  assertEquals(inline.definition!.output_schema, { type: "object", properties: { b: { type: "string" } } });
  assertEquals(inline.warnings, []);

  const pico = await parse(
    "---\noutput:\n  format: json\n  schema:\n    verdict: string\n    score?: number\n---\nhi",
  );
  assertEquals(pico.definition!.output_schema, {
    type: "object",
    properties: { verdict: { type: "string" }, score: { type: ["number", "null"] } },
    required: ["verdict"],
    additionalProperties: false,
  });

  const both = await parse(`---
output:
  schema: {type: object}
output_schema: '{"type":"string"}'
---
hi`);
  assertEquals(both.definition!.output_schema, { type: "string" });
  assertEquals(where(both.warnings), ["output_schema_twice@3:3"]);
});

Deno.test("agent loader: sandbox short form is compute with that runtime; the long form keeps its fields", async () => {
  const short = await parse("---\nsandbox: node\n---\nhi");
  assertEquals(short.definition!.sandbox, {
    mode: "compute",
    runtime: "node",
    session: "agent",
    allow_network: false,
  });
  const long = await parse("---\nsandbox:\n  mode: code\n  image: stn-test/busybox\n---\nhi");
  assertEquals(long.definition!.sandbox, {
    mode: "code",
    image: "stn-test/busybox",
    session: "agent",
    allow_network: false,
  });
  const bad = await parse("---\nmodel: openai/x\nsandbox: ruby\n---\nhi");
  assertEquals(where(bad.errors), ["invalid_sandbox@3:10"]);
  assert(bad.errors[0].hint!.includes("python, node, bash"));
  const mode = await parse("---\nsandbox:\n  mode: vm\n---\nhi");
  assertEquals(where(mode.errors), ["invalid_value@3:9"]);
  // Station's `mode: docker` runs as code mode, with a warning at the value (station_agents_test.ts).
  const docker = await parse("---\nmodel: openai/x\nsandbox:\n  mode: docker\n---\nhi");
  assertEquals([where(docker.errors), where(docker.warnings)], [[], ["station_docker_sandbox@4:3"]]);
});

Deno.test("agent loader: unknown keys are kept in extra and warned about, with did-you-mean or Station's name", async () => {
  const a = await parse(`---
model: gpt-4o-mini
app: finops
modle: openai/x
metadata:
  app_type: investigations
schedule:
  cron: "0 9 * * *"
  timezon: UTC
tools: [__agent_helper, __read_file, list_directory]
---
hi`);
  assertEquals(a.errors, []);
  assertEquals(
    a.warnings.map((w) => `${w.code}@${w.line}:${w.column} ${w.hint}`),
    [
      "model_without_provider@2:1 write `provider/name`, e.g. `openai/gpt-4o-mini`",
      "unknown_field@3:1 Station's files keep working in stn; docs/agents.md lists what stn reads",
      "unknown_field@4:1 did you mean `model`?",
      "unknown_field@6:3 Station's files keep working in stn; docs/agents.md lists what stn reads",
      "unknown_field@9:3 did you mean `timezone`?",
      "child_agent_in_tools@10:9 list child agents by name under `agents:`",
      "tool_name_form@10:38 write `__list_directory` for the server's tool `list_directory`; sandbox tools come from `sandbox:`, not `tools:`",
    ],
  );
  assertEquals(a.definition!.extra, { app: "finops", modle: "openai/x" });
  assertEquals(a.definition!.tools, ["__read_file", "list_directory"]);
  assertEquals(a.definition!.model, "gpt-4o-mini");
});

Deno.test("agent loader: malformed files are errors at their file line and column", async () => {
  // YAML: line 3 of the file is line 2 of the front matter.
  const yaml = await parse("---\nmodel: openai/x\ntools: [a\n---\nhi\n");
  assertEquals(yaml.errors.map((e) => [e.code, e.line]), [["parse_error", 3]]);
  assert(yaml.errors[0].message.startsWith("the front matter is not valid YAML"));

  const types = await parse(`---
max_steps: 0
tools: read_file
timeout: soon
schedule:
  cron: "every day"
  timezone: Mars/Olympus
input:
  schema:
    x: strin
output_schema: '{"type": "object", "requried": []}'
---
hi`);
  assertEquals(where(types.errors), [
    "invalid_value@2:12",
    "invalid_value@3:8",
    "invalid_duration@4:10",
    "invalid_cron@6:9",
    "invalid_timezone@7:13",
  ]);
  // Schemas are checked once the fields themselves are right.
  const schemas = await parse(`---
input:
  schema:
    x: strin
output_schema: '{"type": "object", "requried": []}'
---
hi`);
  assertEquals(schemas.errors.map((e) => [e.code, e.line, e.path]), [
    ["invalid_schema", 3, "/input/schema"],
    ["invalid_json_schema", 5, "/output_schema/requried"],
  ]);
  assertEquals(schemas.errors[1].hint, "did you mean `required`?");
  assertEquals((await parse("---\nmodel: x\n")).errors.map((e) => [e.code, e.line]), [[
    "unclosed_front_matter",
    1,
  ]]);
  assertEquals((await parse("---\n- a\n- b\n---\nhi")).errors.map((e) => e.code), ["invalid_front_matter"]);
  assertEquals((await parse("---\nmodel: openai/x\n---\nhi\n---\nstill the body\n")).errors, []);
});

Deno.test("agent loader: Handlebars errors point into the body", async () => {
  const unclosed = await parse('---\nmodel: openai/x\n---\n\n{{role "system"}}\n{{#if x}}\nno end\n{{/if}\n');
  assertEquals(unclosed.errors.map((e) => [e.code, e.line, e.path]), [["invalid_template", 8, "/body"]]);
  const helper = await parse("---\nmodel: openai/x\n---\nhello\n  {{shout name}}\n");
  assertEquals(where(helper.errors), ["invalid_template@5:3"]);
  assertEquals(helper.errors[0].message, "unknown Handlebars helper `shout`");
  assertEquals((await parse("---\nmax_steps: 2\n---\n{{#if}}")).errors.map((e) => e.code), [
    "invalid_template",
  ]);
});

Deno.test("agent references: unknown tools name the servers searched; unknown, self and cyclic children", async () => {
  const make = async (name: string, front: string) => await parse(`---\n${front}\n---\nhi\n`, name);
  const agents = [
    await make("a", "tools: [__read_file, __read_fil, wrtie_file]\nagents: [b, nobody]"),
    await make("b", "agents:\n  - c"),
    await make("c", "agents: [a]"),
    await make("d", "agents: [d]"),
    await make("e", "agents: [b]"),
  ];
  const catalogue = new Map([["__read_file", "fs"], ["__write_file", "fs"], ["__search", "web"]]);
  checkReferences(agents, { knownTools: catalogue });
  const [a, b, c, d, e] = agents;
  assertEquals(where(a.errors), [
    "unknown_tool@2:22",
    "unknown_tool@2:34",
    "unknown_agent@3:13",
    "agent_cycle@3:10",
  ]);
  assertEquals(a.errors[0].message, "no MCP server offers the tool `__read_fil` (searched: fs, web)");
  assertEquals(a.errors[0].hint, "did you mean `__read_file`?");
  assertEquals(a.errors[2].hint, "agents are the agents/<Name>.prompt files: a, b, c, d, e");
  // Each agent on the cycle is told, at its own link, so none of them is stored.
  assertEquals(a.errors[3].message, "child agents form a cycle: a → b → c → a");
  assertEquals(where(b.errors), ["agent_cycle@3:5"]);
  assertEquals(b.errors[0].message, "child agents form a cycle: b → c → a → b");
  assertEquals(where(c.errors), ["agent_cycle@2:10"]);
  assertEquals([a.definition, b.definition, c.definition], [undefined, undefined, undefined]);
  assertEquals(d.errors.map((x) => x.message), ["`d` lists itself as a child agent"]);
  assert(e.definition, "an agent calling into a cycle is not itself in one");

  const none = [await make("x", "tools: [__anything]")];
  checkReferences(none, { knownTools: new Map() });
  assertEquals(
    none[0].errors[0].message,
    "no MCP server offers the tool `__anything`: the environment has no MCP tools",
  );
  const unchecked = [await make("y", "tools: [__anything]")];
  checkReferences(unchecked);
  assertEquals(unchecked[0].errors, []);
});

Deno.test("agent loader: Station-style files load, with warnings only for what stn does not implement", async () => {
  const agents = await loadAgentsFolder(FIXTURES, { environment: "default" });
  assertEquals(agents.map((a) => a.name), [
    "Cost Spike Investigator",
    "code-reviewer",
    "k8s-triage",
    "log-summarizer",
    "nightly-report",
  ]);
  for (const a of agents) assertEquals(a.errors, [], a.name);
  assertEquals(
    agents.flatMap((a) => a.warnings.map((w) => `${a.name}: ${w.code} ${w.path}`)),
    [
      "Cost Spike Investigator: model_without_provider /model",
      "Cost Spike Investigator: unknown_field /app",
      "Cost Spike Investigator: unknown_field /app_type",
      "code-reviewer: unknown_field /harness",
      "nightly-report: unknown_field /cloudshipai",
    ],
  );
  const cost = agents[0].definition!;
  assertEquals([
    cost.max_steps,
    cost.tags.length,
    Object.keys(cost.output_schema!.properties as object).length,
  ], [
    10,
    3,
    4,
  ]);
  assertEquals(agents[2].definition!.agents, ["log-summarizer"]);
  assertEquals(agents[4].definition!.schedule?.cron, "0 2 * * *");
  // Station's pip_packages are kept: the image must carry them (checked when the sandbox is first used).
  assertEquals(agents[1].definition!.sandbox?.pip_packages, ["pytest"]);
});

Deno.test("agent loader: the example environment's agents are valid without warnings, its tools are the fs server's", async () => {
  const agents = await loadAgentsFolder(join(EXAMPLE, "agents"), { environment: "default" });
  assertEquals(agents.map((a) => a.name), [
    "assistant",
    "cost-analyzer",
    "data-analyst",
    "digest-writer",
    "file-auditor",
    "incident-analyst",
  ]);
  for (const a of agents) assertEquals([a.errors, a.warnings], [[], []], a.name);
  const byName = Object.fromEntries(agents.map((a) => [a.name, a.definition!]));
  assert(byName["data-analyst"].sandbox?.session === "workflow");
  assert(byName["file-auditor"].output_schema && byName["file-auditor"].input_schema);
  // Checked against the tools the filesystem server lists (2026.8.31), as sync will.
  const fsTools = [
    "list_allowed_directories",
    "list_directory",
    "directory_tree",
    "read_text_file",
    "search_files",
  ]
    .concat(["get_file_info", "read_file", "write_file", "edit_file", "move_file", "create_directory"]);
  checkReferences(agents, { knownTools: new Map(fsTools.map((t) => [`__${t}`, "fs"])) });
  assertEquals(agents.flatMap((a) => a.errors), []);
});

Deno.test("agent validate files: each is checked with its folder's agents as the known children", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "parent.prompt"), "---\nagents: [child, ghost]\n---\nhi\n");
    await Deno.writeTextFile(join(dir, "child.prompt"), "---\nmax_steps: 1\n---\nhi\n");
    const [parent] = await loadAgentFiles([join(dir, "parent.prompt")], { environment: "default" });
    assertEquals(parent.errors.map((e) => e.message), ["no agent `ghost` in this environment"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the example environment's workflow is valid and names only the example's agents", async () => {
  const file = join(EXAMPLE, "workflows", "audit-and-report.workflow.yaml");
  const text = await Deno.readTextFile(file);
  const result = validateSource(text, { fileName: file });
  assertEquals(result.errors, []);
  assertEquals(result.warnings.map((w) => w.code), ["agent_not_checked"]);
  const types = new Set<string>(result.definition!.states.map((s) => s.type));
  for (const t of ["agent", "switch", "human_approval"]) assert(types.has(t), `no ${t} step`);
  const names = (await loadAgentsFolder(join(EXAMPLE, "agents"), { environment: "default" })).map((a) =>
    a.name
  );
  assertEquals(agentReferenceIssues(text, "default", () => names), []);
  const typo = agentReferenceIssues(
    text.replace("agent: assistant", "agent: asistant"),
    "default",
    () => names,
  );
  assertEquals(typo.map((i) => [i.code, i.path, i.hint]), [
    ["unknown_agent", "/states/4/agent", "did you mean `assistant`?"],
  ]);
  assertEquals(agentReferenceIssues(text, "default", () => undefined), []);
});

Deno.test("agent loader: `queue` names a task queue; with child agents it is not used, and says so", async () => {
  const queued = await parse("---\nqueue: gpu\n---\nhi");
  assertEquals([queued.definition!.queue, queued.warnings], ["gpu", []]);
  const bad = await parse("---\nqueue: GPU nodes\n---\nhi");
  assertEquals(bad.definition, undefined);
  assert(
    bad.errors.some((e) => e.path === "/queue" && e.message.includes("lowercase")),
    JSON.stringify(bad.errors),
  );
  const parent = await parse("---\nqueue: gpu\nagents: [Helper]\n---\nhi");
  assertEquals(where(parent.warnings), ["queue_with_child_agents@2:1"]);
});

Deno.test("agent loader: concurrency keys and priority land in the definition; bad ones are errors where written", async () => {
  const ok = await parse(`---
concurrency:
  - key: "\${input.customer_id}"
    limit: 1
  - limit: 20
priority: 7
---
{{userInput}}
`);
  assertEquals(ok.errors, []);
  assertEquals(ok.definition?.concurrency, [{ key: "${input.customer_id}", limit: 1 }, { limit: 20 }]);
  assertEquals(ok.definition?.priority, 7);
  const bad = await parse(`---
concurrency:
  - key: "\${input.("
    limit: 0
priority: 12
---
{{userInput}}
`);
  assertEquals(bad.errors.map((e) => e.path).sort(), [
    "/concurrency/0/key",
    "/concurrency/0/limit",
    "/priority",
  ]);
});
