import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { runStn } from "../helpers/stn.ts";

/**
 * Which agents can run (issue 30): pending while their tools' servers are not discovered, invalid when
 * sync refused the file (with its first problem), missing when there is no file; `agent validate`
 * checks tool names against the discovered catalogue, and a workflow naming an invalid agent says so.
 */

const agent = (tools: string[], extra = "") =>
  `---\nmodel: openai/test-model\ntools: ${JSON.stringify(tools)}\n${extra}---\n{{userInput}}\n`;

Deno.test("agent readiness: pending, invalid and missing agents are listed or refused with the reason", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("ai:\n  provider: openai\n  api_key: sk-test\nsandbox:\n  enabled: false\n");
    const env = home.path("environments", "default");
    await Deno.mkdir(join(env, "agents"), { recursive: true });
    await Deno.mkdir(join(env, "workflows"), { recursive: true });
    await Deno.writeTextFile(
      join(env, "servers.json"),
      JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
    );
    await Deno.writeTextFile(join(env, "agents", "Echoer.prompt"), agent(["__echo"]));
    await Deno.writeTextFile(join(env, "agents", "Broken.prompt"), agent([], "max_steps: -1\n"));
    await Deno.writeTextFile(
      join(env, "workflows", "uses-broken.workflow.yaml"),
      "id: uses-broken\nstates:\n  - id: a\n    type: agent\n    agent: Broken\n    task: hi\n",
    );

    // Not approved: the server is not discovered, so Echoer is stored but pending.
    const sync = await runStn(["sync", "--json"], { env: home.env });
    // The workflow naming Broken is refused, so the sync exits 1 with the report in the error's details.
    assertEquals(sync.code, 1, sync.stderr);
    const report = JSON.parse(sync.stdout).error.details;
    assertEquals(report.agents.created.map((a: { name: string }) => a.name), ["Echoer"]);
    const refusal = report.invalid.find((i: { file: string }) =>
      i.file.endsWith("uses-broken.workflow.yaml")
    );
    assertStringIncludes(
      refusal.errors[0].message,
      "agent `Broken` of environment `default`: file invalid: Broken.prompt:",
    );
    assertStringIncludes(refusal.errors[0].message, "max_steps");

    const list = JSON.parse((await runStn(["agent", "list", "--json"], { env: home.env })).stdout);
    assertEquals(list.agents.map((a: { name: string; status: string }) => [a.name, a.status]), [[
      "Echoer",
      "pending",
    ]]);
    assertStringIncludes(list.agents[0].problem, "__echo");
    assertEquals(list.invalid.map((a: { name: string }) => a.name), ["Broken"]);
    const text = (await runStn(["agent", "list"], { env: home.env })).stdout;
    assertStringIncludes(text, "Echoer: pending: tools not discovered yet: __echo");
    assertStringIncludes(text, "Broken: invalid: Broken.prompt:");

    const run = async (name: string) => {
      const r = await runStn(["agent", "run", name, "hi", "--json"], { env: home.env });
      assertEquals(r.code, 1, r.stdout);
      return JSON.parse(r.stdout).error;
    };
    assertEquals((await run("Echoer")).code, "agent_tools_pending");
    const broken = await run("Broken");
    assertEquals(broken.code, "agent_invalid");
    assertStringIncludes(broken.message, "file invalid: Broken.prompt:");
    const none = await run("Nobody");
    assertEquals(none.code, "agent_not_found");
    assertStringIncludes(none.message, "(no file agents/Nobody.prompt)");

    // No catalogue yet: validate warns that the tools went unchecked.
    const unchecked = await runStn(["agent", "validate", "--json"], { env: home.env });
    assertEquals(unchecked.code, 1, unchecked.stderr); // Broken is still invalid: the report is in the details
    const echoer = JSON.parse(unchecked.stdout).error.details.files.find((f: { name: string }) =>
      f.name === "Echoer"
    );
    assert(echoer.warnings.some((w: { code: string }) => w.code === "tools_not_checked"), unchecked.stdout);

    // Approved and discovered: Echoer is ok, and a tool the server lacks is an error at validate.
    // (exit 1 still: the workflow naming Broken stays refused)
    assertStringIncludes(
      (await runStn(["sync", "--trust"], { env: home.env })).stdout,
      "mcp server local (stdio): 8 tool(s)",
    );
    const after = JSON.parse((await runStn(["agent", "list", "--json"], { env: home.env })).stdout);
    assertEquals(after.agents.map((a: { status: string }) => a.status), ["ok"]);
    await Deno.writeTextFile(join(env, "agents", "Echoer.prompt"), agent(["__echo", "__nope"]));
    const v = await runStn(["agent", "validate", "--json"], { env: home.env });
    assertEquals(v.code, 1, v.stdout);
    const file = JSON.parse(v.stdout).error.details.files.find((f: { name: string }) => f.name === "Echoer");
    assertEquals(file.errors.map((e: { code: string }) => e.code), ["unknown_tool"]);

    // Every server discovered and none offers __nope: Echoer is invalid, listed so and refused.
    await runStn(["sync"], { env: home.env });
    const stale = JSON.parse((await runStn(["agent", "list", "--json"], { env: home.env })).stdout);
    const listed = [...stale.agents, ...stale.invalid].map((
      a: { name: string; status?: string; problem: string },
    ) => [a.name, a.status ?? "invalid", a.problem]);
    assertEquals(listed.sort(), [
      ["Broken", "invalid", "Broken.prompt:4:12: invalid_value: `max_steps` must be at least 1"],
      ["Echoer", "invalid", "no MCP server offers __nope"],
    ]);
    const refused = await run("Echoer");
    assertEquals([refused.code, refused.message], [
      "agent_invalid",
      "agent `Echoer` in environment `default`: no MCP server offers __nope",
    ]);
  } finally {
    await home.cleanup();
  }
});
