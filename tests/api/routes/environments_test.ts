import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  copyEnvironment,
  createBundle,
  createEnvironment,
  deleteEnvironment,
  getVariable,
  installBundle,
  listEnvironments,
  listVariables,
  setVariable,
  showEnvironment,
  unsetVariable,
} from "../../../src/client/environments.ts";
import { listWorkflows, syncWorkflows } from "../../../src/client/workflows.ts";
import { StationError } from "../../../src/errors.ts";
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { stdioServerEntry } from "../../helpers/mcp_stdio_server.ts";
import { startTestStation } from "../../helpers/station.ts";

const WORKFLOW = "id: greet\nstates:\n  - {id: a, type: inject, data: {msg: hi}}\n";
const MCP = JSON.stringify({
  mcpServers: {
    github: { command: "github-mcp", env: { GITHUB_TOKEN: "{{ .GITHUB_TOKEN }}" } },
    docs: { url: "https://docs.example/mcp", headers: { Authorization: "Bearer {{ .DOCS_AUTH }}" } },
  },
});

async function code(p: Promise<unknown>): Promise<[string, number]> {
  const err = await assertRejects(() => p, StationError) as StationError;
  return [err.code, err.status];
}

Deno.test("API: environments — create, show (needed variables), copy, variables masked, delete", async () => {
  // The server's own process environment is the second source of values.
  Deno.env.set("DOCS_AUTH", "from-the-process-env");
  const t = await startTestStation();
  const c = t.client;
  try {
    // A station creates its default environment, empty, when it starts.
    assertEquals((await listEnvironments(c)).map((e) => [e.name, e.agents, e.workflows]), [[
      "default",
      0,
      0,
    ]]);
    const created = await createEnvironment(c, "team");
    assertEquals([created.name, created.agents, created.workflows], ["team", [], []]);
    assertEquals(await code(createEnvironment(c, "team")), ["environment_exists", 409]);
    assertEquals(await code(createEnvironment(c, "../up")), ["invalid_environment", 400]);
    assertEquals(await code(showEnvironment(c, "nope")), ["environment_not_found", 404]);

    const dir = t.home.path("environments", "team");
    await Deno.writeTextFile(join(dir, "agents", "Helper.prompt"), "---\nmax_steps: 2\n---\n{{userInput}}\n");
    await Deno.writeTextFile(join(dir, "mcp-configs", "tools.json"), MCP);
    await Deno.writeTextFile(join(dir, "workflows", "greet.workflow.yaml"), WORKFLOW);

    let shown = await showEnvironment(c, "team");
    assertEquals(shown.agents, [{
      name: "Helper",
      file: "agents/Helper.prompt",
      status: "valid",
      errors: [],
      warnings: [],
      synced: "never",
    }]);
    assertEquals(shown.mcp_servers.map((s) => [s.name, s.status, s.tools]), [
      ["github", "never_synced", null],
      ["docs", "never_synced", null],
    ]);
    assertEquals(shown.mcp_configs[0].servers.map((s) => [s.name, s.transport]), [["github", "stdio"], [
      "docs",
      "http",
    ]]);
    assertEquals(shown.workflows, [{ id: "greet", file: "workflows/greet.workflow.yaml" }]);
    assertEquals(shown.variables.map((v) => [v.name, v.secret, v.source]), [
      ["DOCS_AUTH", true, "environment"],
      ["GITHUB_TOKEN", true, "missing"],
    ]);
    assertEquals(shown.missing, ["GITHUB_TOKEN"]);

    const set = await setVariable(c, "team", "GITHUB_TOKEN", "ghp_very_secret");
    assertEquals(set, { name: "GITHUB_TOKEN", value: "********", secret: true, created: true });
    await setVariable(c, "team", "REGION", "eu-west-1");
    assertEquals((await Deno.stat(join(dir, "variables.yml"))).mode! & 0o777, 0o600);
    shown = await showEnvironment(c, "team");
    assertEquals(shown.missing, []);
    const listed = await listVariables(c, "team");
    assertEquals(listed.variables.map((v) => [v.name, v.value]), [["GITHUB_TOKEN", "********"], [
      "REGION",
      "eu-west-1",
    ]]);
    assertEquals((await getVariable(c, "team", "GITHUB_TOKEN")).value, "********");
    // No answer of the API carries the secret: every route that reads the environment, raw.
    for (const path of ["", "/team", "/team/variables", "/team/variables/GITHUB_TOKEN"]) {
      const body = await (await c.fetch("GET", `/api/v1/environments${path}`)).text();
      assert(!body.includes("ghp_very_secret"), `GET ${path} leaks the secret`);
    }
    assertEquals(await code(getVariable(c, "team", "NOPE")), ["variable_not_found", 404]);
    assertEquals(await code(setVariable(c, "team", "bad-name", "x")), ["invalid_variable_name", 400]);

    const copy = await copyEnvironment(c, "team", "team2");
    assertEquals([copy.name, copy.agents.length, copy.missing], ["team2", 1, []]);
    assertEquals(await code(copyEnvironment(c, "team", "team2")), ["environment_exists", 409]);
    assertEquals(
      (await Deno.stat(t.home.path("environments", "team2", "variables.yml"))).mode! & 0o777,
      0o600,
    );
    assertEquals((await listEnvironments(c)).map((e) => [e.name, e.agents, e.mcp_servers, e.workflows]), [
      ["default", 0, 0, 0],
      ["team", 1, 2, 1],
      ["team2", 1, 2, 1],
    ]);
    await unsetVariable(c, "team2", "GITHUB_TOKEN");
    assertEquals((await showEnvironment(c, "team2")).missing, ["GITHUB_TOKEN"]);

    // After a sync, show reads the catalogue (tool counts, discovery errors) and the agents table.
    const team2 = t.home.path("environments", "team2");
    await Deno.writeTextFile(
      join(team2, "mcp-configs", "test.json"),
      JSON.stringify({ mcpServers: { probe: stdioServerEntry() } }),
    );
    await Deno.writeTextFile(join(team2, "agents", "Broken.prompt"), "---\nmax_steps: lots\n---\nhi\n");
    await c.json("POST", "/api/v1/sync", { body: { environment: "team2", trust: true } });
    await Deno.writeTextFile(join(team2, "agents", "Later.prompt"), "---\nmax_steps: 1\n---\nhi\n");
    const synced = await showEnvironment(c, "team2");
    assertEquals(synced.agents.map((a) => [a.name, a.status, a.synced]), [
      ["Broken", "invalid", "never"],
      ["Helper", "valid", "current"],
      ["Later", "valid", "never"],
    ]);
    assertEquals(synced.agents[0].errors.map((e) => [e.line, e.path]), [[2, "/max_steps"]]);
    assertEquals(synced.mcp_servers.map((s) => [s.name, s.file, s.status, s.tools]), [
      ["probe", "mcp-configs/test.json", "ok", 8],
      ["github", "mcp-configs/tools.json", "failed", 0],
      ["docs", "mcp-configs/tools.json", "failed", 0],
    ]);
    assertEquals(synced.mcp_servers[1].error?.code, "mcp_variable_missing");
    await Deno.remove(join(team2, "agents", "Broken.prompt"));

    // Delete: the folder goes, and the workflows its files defined are disabled.
    assertEquals((await listWorkflows(c, "active")).map((w) => [w.id, w.environment]), [["greet", "team2"]]);
    const deleted = await deleteEnvironment(c, "team2");
    assertEquals([deleted.deleted, deleted.disabled_workflows], [true, ["greet"]]);
    assertEquals((await listEnvironments(c)).map((e) => e.name), ["default", "team"]);
    assertEquals(await code(deleteEnvironment(c, "team2")), ["environment_not_found", 404]);

    // A broken variables.yml is named in the list, not hidden.
    await Deno.writeTextFile(join(dir, "variables.yml"), "A: [1]\n");
    const broken = (await listEnvironments(c)).find((e) => e.name === "team")!;
    assert(broken.error?.includes("variables.yml"), broken.error);
  } finally {
    Deno.env.delete("DOCS_AUTH");
    await t.close();
  }
});

Deno.test("API: bundles — create (no secrets inside), install into a new environment, synced, missing variables", async () => {
  const from = await startTestStation();
  const to = await startTestStation();
  try {
    const dir = from.home.path("environments", "team");
    await createEnvironment(from.client, "team");
    await Deno.writeTextFile(join(dir, "agents", "Helper.prompt"), "---\nmax_steps: 2\n---\n{{userInput}}\n");
    await Deno.writeTextFile(join(dir, "mcp-configs", "tools.json"), MCP);
    await Deno.writeTextFile(join(dir, "workflows", "greet.workflow.yaml"), WORKFLOW);
    await Deno.writeTextFile(join(dir, "notes.txt"), "not part of a bundle\n");
    await setVariable(from.client, "team", "GITHUB_TOKEN", "ghp_never_shared");

    const bytes = await createBundle(from.client, { environment: "team", version: "2.0.0" });
    const tarText = new TextDecoder().decode(gunzipSync(bytes));
    assert(!tarText.includes("ghp_never_shared"), "the archive holds no secret value");
    assert(!tarText.includes("variables.yml") && !tarText.includes("notes.txt"), "only the layout's files");
    assertEquals(await code(createBundle(from.client, { environment: "nope" })), [
      "environment_not_found",
      404,
    ]);

    const installed = await installBundle(to.client, bytes, { environment: "imported" });
    assertEquals([installed.environment, installed.created], ["imported", true]);
    assertEquals(installed.files, [
      "agents/Helper.prompt",
      "mcp-configs/tools.json",
      "workflows/greet.workflow.yaml",
    ]);
    assertEquals(installed.manifest.version, "2.0.0");
    // The manifest says what the agents and MCP servers need; the install synced them too.
    assertEquals(installed.manifest.agents, [{
      name: "Helper",
      file: "agents/Helper.prompt",
      tools: [],
      agents: [],
    }]);
    assertEquals(installed.manifest.mcp_servers?.map((m) => [m.name, m.transport, m.program, m.variables]), [
      ["github", "stdio", "github-mcp", ["GITHUB_TOKEN"]],
      ["docs", "http", undefined, ["DOCS_AUTH"]],
    ]);
    assertEquals(installed.sync.agents?.created.map((a) => a.name), ["Helper"]);
    // Nothing of the bundle is started before it is approved; the answer shows what each server runs.
    assertEquals(installed.sync.mcp_servers.servers.map((m) => [m.name, m.status, m.error?.code]), [
      ["github", "untrusted", "mcp_server_untrusted"],
      ["docs", "untrusted", "mcp_server_untrusted"],
    ]);
    assertEquals(installed.servers.map((m) => [m.name, m.launch?.command ?? m.launch?.url]), [
      ["github", "github-mcp"],
      ["docs", "https://docs.example/mcp"],
    ]);
    const unknown = await to.client.fetch("POST", "/api/v1/environments/imported/mcp-servers/nope/approve")
      .catch((e) => e);
    assertEquals([unknown.code, unknown.status], ["mcp_server_not_found", 404]);
    const approved = await to.client.json("POST", "/api/v1/environments/imported/mcp-servers/github/approve");
    assertEquals((approved as { approved: { server: string }[] }).approved.map((x) => x.server), ["github"]);
    const trusted = await to.client.json("POST", "/api/v1/environments/imported/trust");
    assertEquals((trusted as { approved: { server: string }[] }).approved.map((x) => x.server), [
      "github",
      "docs",
    ]);
    const resync = await syncWorkflows(to.client, "imported");
    assertEquals(resync.mcp_servers.servers.map((m) => [m.name, m.status, m.error?.code]), [
      ["github", "failed", "mcp_variable_missing"],
      ["docs", "failed", "mcp_variable_missing"],
    ]);
    assertEquals(installed.missing, ["DOCS_AUTH", "GITHUB_TOKEN"]);
    assertEquals(installed.sync.created.map((w) => w.id), ["greet"]);
    const a = await showEnvironment(from.client, "team");
    const b = await showEnvironment(to.client, "imported");
    assertEquals([b.workflows, b.mcp_configs], [a.workflows, a.mcp_configs]);
    // The install synced the agents; the origin never did.
    assertEquals(b.agents.map((x) => [x.name, x.status, x.synced]), [["Helper", "valid", "current"]]);
    assertEquals(a.agents.map((x) => [x.name, x.status, x.synced]), [["Helper", "valid", "never"]]);
    assertEquals((await listWorkflows(to.client, "active")).map((w) => [w.id, w.environment]), [[
      "greet",
      "imported",
    ]]);

    // Installing again needs force; a hostile upload answers 400 and writes nothing.
    const again = await to.client.fetch("POST", "/api/v1/bundles/install", {
      body: bytes as Uint8Array<ArrayBuffer>,
      query: { environment: "imported" },
    }).catch((e) => e);
    assertEquals([again.code, again.status], ["environment_exists", 409]);
    assertEquals(
      (await installBundle(to.client, bytes, { environment: "imported", force: true })).created,
      false,
    );
    const junk = await to.client.fetch("POST", "/api/v1/bundles/install", { body: "not a bundle" }).catch((
      e,
    ) => e);
    assertEquals([junk.code, junk.status], ["bundle_invalid", 400]);
    const big = await to.client.fetch("POST", "/api/v1/bundles/install", {
      body: new Uint8Array(17 * 1024 * 1024),
    }).catch((e) => e);
    assertEquals([big.code, big.status], ["bundle_too_large", 413]);
    assertEquals((await listEnvironments(to.client)).map((e) => e.name), ["default", "imported"]);

    // An invalid agent stops the bundle, naming file:line.
    await Deno.writeTextFile(join(dir, "agents", "Bad.prompt"), "---\nmax_steps: lots\n---\nhi\n");
    const bad = await assertRejects(
      () => createBundle(from.client, { environment: "team" }),
      StationError,
    ) as StationError;
    assertEquals([bad.code, bad.status], ["agent_invalid", 422]);
    assert(bad.message.includes("agents/Bad.prompt:2:12: error invalid_value"), bad.message);
    await Deno.remove(join(dir, "agents", "Bad.prompt"));

    // A literal secret in an MCP config stops the bundle.
    await Deno.writeTextFile(
      join(dir, "mcp-configs", "leak.json"),
      '{"mcpServers": {"x": {"url": "u", "headers": {"X-Api-Key": "k-123"}}}}',
    );
    assertEquals(await code(createBundle(from.client, { environment: "team" })), ["bundle_secret", 422]);
  } finally {
    await from.close();
    await to.close();
  }
});
