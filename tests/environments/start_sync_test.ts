import assert from "node:assert/strict";
import { join } from "node:path";
import { tempHome } from "../helpers/home.ts";
import { startServe } from "../helpers/stn.ts";

const workflow = (id: string) =>
  `id: ${id}\nstates:\n  - id: done\n    type: transform\n    expression: "{'ok': true}"\n`;

Deno.test("stn serve on a fresh home syncs every environment, creates default, and POST /api/v1/sync answers 200", async () => {
  const home = await tempHome();
  try {
    // Two environments, no `default`; beta also holds an MCP server nobody approved, and a broken workflow.
    for (const env of ["alpha", "beta"]) {
      await Deno.mkdir(home.path("environments", env, "workflows"), { recursive: true });
      await Deno.writeTextFile(
        home.path("environments", env, "workflows", `${env}-flow.workflow.yaml`),
        workflow(`${env}-flow`),
      );
    }
    await Deno.mkdir(home.path("environments", "beta", "mcp-configs"));
    const marker = home.path("mcp-started");
    await Deno.writeTextFile(
      home.path("environments", "beta", "mcp-configs", "tools.json"),
      JSON.stringify({ mcpServers: { unapproved: { command: "touch", args: [marker] } } }),
    );
    await Deno.writeTextFile(
      home.path("environments", "beta", "workflows", "broken.workflow.yaml"),
      "states: [",
    );
    // An agent using that server's tool still loads: the unapproved server holds back nothing else.
    await Deno.mkdir(home.path("environments", "beta", "agents"));
    await Deno.writeTextFile(
      home.path("environments", "beta", "agents", "Reader.prompt"),
      "---\ntools: [__read_it]\n---\n{{userInput}}\n",
    );

    const serve = await startServe({ home: home.home, env: home.env });
    try {
      const ids = (await (await fetch(`${serve.url}/api/v1/workflows`)).json()).workflows
        .map((w: { id: string }) => w.id).sort();
      assert.deepEqual(ids, ["alpha-flow", "beta-flow"]);
      const agents = await (await fetch(`${serve.url}/api/v1/agents?environment=beta`)).json();
      assert.deepEqual(
        agents.agents.map((a: { name: string }) => a.name),
        ["Reader"],
        serve.stderr(),
      );
      const log = serve.stderr();
      assert.match(log, /MCP server unapproved of environment beta is not approved: not started/);
      assert.match(log, /skipped invalid workflow: .*broken\.workflow\.yaml/);
      assert.match(log, /synced environment alpha/);
      assert.equal(
        await Deno.stat(marker).then(() => true, () => false),
        false,
        "an unapproved server never runs",
      );

      const made = await Deno.stat(home.path("environments", "default"));
      assert.ok(made.isDirectory);
      assert.equal(made.mode! & 0o777, 0o700, "created private like the rest of the home");
      for (const f of ["agents", "mcp-configs", "workflows"]) {
        assert.ok((await Deno.stat(join(home.path("environments", "default"), f))).isDirectory);
      }

      const sync = await fetch(`${serve.url}/api/v1/sync`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      const report = await sync.json();
      assert.equal(sync.status, 200, JSON.stringify(report));
      assert.equal(report.environment, "default");
    } finally {
      await serve.stop();
    }
  } finally {
    await home.cleanup();
  }
});
