import { join } from "node:path";
import { syncWorkflows } from "../../src/client/workflows.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { startTestStation } from "../helpers/station.ts";
import { runStn } from "../helpers/stn.ts";

const SECRET = "tok-a41d0c9e-cli";

/** A home whose `default` environment has the stdio test server, a server that cannot start and a bad file. */
async function homeWithServers() {
  const home = await tempHome();
  const dir = home.path("environments", "default");
  await Deno.mkdir(join(dir, "mcp-configs"), { recursive: true });
  await Deno.writeTextFile(join(dir, "variables.yml"), `LOCAL_TOKEN: ${SECRET}\n`);
  await Deno.writeTextFile(
    join(dir, "mcp-configs", "servers.json"),
    JSON.stringify({
      mcpServers: {
        local: stdioServerEntry({ env: { LOCAL_TOKEN: "{{ .LOCAL_TOKEN }}" } }),
        gone: { command: "stn-test-no-such-program", args: ["{{ .LOCAL_TOKEN }}"] },
      },
    }),
  );
  await Deno.writeTextFile(
    join(dir, "broken.json"),
    '{\n  "mcpServers": {\n    "x": {"command": }\n  }\n}\n',
  );
  return home;
}

Deno.test("stn sync: each MCP server with its tools or its error, config problems with file:line, exit 1", async () => {
  const home = await homeWithServers();
  try {
    const sync = await runStn(["sync", "--trust"], { env: home.env });
    assertEquals(sync.code, 1, sync.stderr);
    assertMatch(sync.stdout, /^mcp server local \(stdio\): 8 tool\(s\): __big, __echo, __env, /m);
    assertMatch(
      sync.stdout,
      /^mcp server gone \(stdio\): failed: cannot connect to MCP server gone: .*ENOENT/m,
    );
    assertMatch(
      sync.stderr,
      /invalid: .*broken\.json:3:\d+: mcp_config_invalid: not valid JSON: expected a value, found `}`/,
    );
    assertStringIncludes(sync.stderr, "error: MCP: 1 server(s) failed discovery, 1 config problem(s)");
    assert(!(sync.stdout + sync.stderr).includes(SECRET), "the secret is not printed");

    // Fixed: exit 0, and the catalogue is what `--json` reports.
    await Deno.remove(home.path("environments", "default", "broken.json"));
    const servers = home.path("environments", "default", "mcp-configs", "servers.json");
    const config = JSON.parse(await Deno.readTextFile(servers));
    delete config.mcpServers.gone;
    await Deno.writeTextFile(servers, JSON.stringify(config));
    const json = await runStn(["sync", "--json"], { env: home.env });
    assertEquals(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout).mcp_servers;
    assertEquals([report.servers.map((s: { name: string }) => s.name), report.removed], [["local"], [
      "gone",
    ]]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("POST /api/v1/sync: the report's mcp_servers section, synced before the workflows, without secrets", async () => {
  const home = await homeWithServers();
  const t = await startTestStation({ home, configYaml: "workflows:\n  sync_on_start: false\n" });
  try {
    const report = await syncWorkflows(t.client, "default", { trust: true });
    const byName = Object.fromEntries(report.mcp_servers.servers.map((s) => [s.name, s]));
    assertEquals([byName.local.status, byName.local.tools.length, byName.gone.status], ["ok", 8, "failed"]);
    assertEquals(report.mcp_servers.errors.map((e) => [e.code, e.line]), [["mcp_config_invalid", 3]]);
    assertEquals(report.created, []);
    assert(!JSON.stringify(report).includes(SECRET));
  } finally {
    await t.close();
    await home.cleanup();
  }
});
