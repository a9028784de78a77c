import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installBundle } from "../../src/environments/bundle/install.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { childEnv, MAIN, runStn, startServe } from "../helpers/stn.ts";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tarGz } from "./bundle_fixtures.ts";

/** Station's own bundles (fixtures/station_bundles/README.md). */
const BUNDLES = fileURLToPath(new URL("./fixtures/station_bundles/", import.meta.url));
const NAMES = [...Deno.readDirSync(BUNDLES)].map((e) => e.name).filter((n) => n.endsWith(".tar.gz")).sort();
const SWITCH = fileURLToPath(
  new URL("../workflows/fixtures/station/ok/switch-routing.workflow.yaml", import.meta.url),
);

Deno.test("station bundles: all 10 of Station's bundles inspect, install, and their agents validate", async () => {
  assertEquals(NAMES.length, 10);
  const home = await tempHome();
  const serve = await startServe({ env: home.env, home: home.home });
  try {
    for (const file of NAMES) {
      const inspect = await runStn(["bundle", "inspect", BUNDLES + file, "--json"], { env: home.env });
      assertEquals(inspect.code, 0, `${file}: ${inspect.stderr}`);
      const shown = JSON.parse(inspect.stdout);
      const env = shown.manifest.name;
      assertEquals(shown.station.format, "station");
      assert(shown.manifest.contents.agents.length >= 3, file);
      // Station's demo servers run its built-in mocks, which stn lacks: each is named with what to write.
      assertStringIncludes(shown.station.notes.join("\n"), "built-in demo mock");

      const r = await runStn(["bundle", "install", BUNDLES + file, "--json"], { env: home.env });
      assertEquals(r.code, 0, `${file}: ${r.stderr}`);
      const installed = JSON.parse(r.stdout);
      assertEquals(installed.environment, env);
      assertEquals(installed.station.agents.length, shown.manifest.contents.agents.length);
      // Not approved, so not discovered: the agents are stored, their tools warned about, not refused.
      assertEquals(installed.sync.agents.invalid, [], file);
      assertEquals(installed.sync.agents.created.length, shown.manifest.contents.agents.length, file);
      const codes = installed.sync.agents.warnings.flatMap((w: { warnings: { code: string }[] }) =>
        w.warnings.map((x) => x.code)
      );
      assert(codes.includes("tool_not_discovered"), file);

      const v = await runStn(["agent", "validate", "--env", env, "--json"], { env: home.env });
      assertEquals(v.code, 0, `${file}: ${v.stdout}${v.stderr}`);
      assertEquals(JSON.parse(v.stdout).valid, true);
    }
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});

/** A bundle as Station's `stn bundle create` makes one, with a templated config, a workflow and a report. */
async function stationBundle(): Promise<Uint8Array> {
  const manifest = {
    version: "1.0",
    bundle: { name: "ops", description: "ops bundle", station_version: "v0.2.0", tags: [] },
    agents: [],
    mcp_servers: [],
    required_variables: [{ name: "API_TOKEN" }, { name: "REGION" }],
  };
  const template = {
    name: "ops",
    mcpServers: {
      ops: {
        command: "ops-mcp",
        args: ["--region", "{{ .REGION }}"],
        env: { API_TOKEN: "{{ .API_TOKEN }}" },
      },
    },
  };
  const agent =
    `---\nmodel: gpt-4o-mini\ntools: ["__lookup"]\n---\n{{role "system"}}\nAnalyse.\n{{role "user"}}\n{{userInput}}\n`;
  return await tarGz([
    { name: "manifest.json", body: JSON.stringify(manifest) },
    { name: "agents", type: "directory" },
    { name: "agents/incident-analyst.prompt", body: agent },
    { name: "template.json", body: JSON.stringify(template) },
    { name: "workflows/switch-routing.workflow.yaml", body: Deno.readTextFileSync(SWITCH) },
    { name: "reports/report-1-weekly.json", body: "{}" },
  ]);
}

Deno.test("station bundles: a templated config asks for its variables; workflows go through migrate; the rest is named", async () => {
  const home = await tempHome();
  try {
    const file = home.path("ops.tar.gz");
    Deno.writeFileSync(file, await stationBundle());

    const inspect = await runStn(["bundle", "inspect", file], { env: home.env });
    assertEquals(inspect.code, 0, inspect.stderr);
    assertStringIncludes(inspect.stdout, "variables:   API_TOKEN [secret], REGION");
    assertStringIncludes(inspect.stdout, "workflow workflows/switch-routing.workflow.yaml: migrated (");
    assertStringIncludes(
      inspect.stdout,
      "left out reports/report-1-weekly.json: Station's reports do not carry over",
    );

    // Not on a terminal: refused, naming every missing variable, and nothing is written.
    const refused = await runStn(["bundle", "install", file, "--json"], { env: home.env });
    assertEquals(refused.code, 1, refused.stdout);
    const err = JSON.parse(refused.stdout).error;
    assertEquals([err.code, err.details.missing], ["bundle_variables_missing", ["API_TOKEN", "REGION"]]);
    assertStringIncludes(err.hint, "--var API_TOKEN=…");
    const written = () => [...Deno.readDirSync(home.path("environments"))].map((e) => e.name);
    assert(
      !existsSync(home.path("environments")) || !written().some((n) => n === "ops" || n.startsWith(".")),
    );

    const r = await runStn(
      ["bundle", "install", file, "--var", "API_TOKEN=t0ken", "--var", "REGION=eu-west-1"],
      { env: home.env },
    );
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "installed environment ops");
    assertStringIncludes(r.stdout, "station bundle (Station v0.2.0): read as stn's layout");
    assertStringIncludes(r.stdout, "synced workflows: 1 created");
    assertStringIncludes(r.stdout, "variables: all set");
    const vars = home.path("environments", "ops", "variables.yml");
    assertEquals(Deno.statSync(vars).mode! & 0o777, 0o600);
    assertStringIncludes(Deno.readTextFileSync(vars), "API_TOKEN: t0ken");
    // The workflow on disk is the migrated one, and it validates.
    const w = await runStn(
      ["workflow", "validate", home.path("environments", "ops", "workflows", "switch-routing.workflow.yaml")],
      { env: home.env },
    );
    assertEquals(w.code, 0, w.stdout + w.stderr);
    const onDisk = Deno.readTextFileSync(
      home.path("environments", "ops", "workflows", "switch-routing.workflow.yaml"),
    );
    assert(onDisk !== Deno.readTextFileSync(SWITCH) && onDisk.includes("${alert.service}"), onDisk);
    // --defer-variables installs without them, listing what is still to set.
    const other = await tempHome();
    try {
      const later = await runStn(["bundle", "install", file, "--defer-variables"], { env: other.env });
      assertEquals(later.code, 0, later.stderr);
      assertStringIncludes(later.stdout, "variables still to set: API_TOKEN, REGION");
    } finally {
      await other.cleanup();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("station bundles: Station's layout loosens nothing — links, climbing names and stray files are refused or left out", async () => {
  const root = await Deno.makeTempDir();
  const envs = join(root, "environments");
  const manifest = (name: string) => ({
    name: "manifest.json",
    body: JSON.stringify({ version: "1.0", bundle: { name } }),
  });
  const agent = { name: "agents/a.prompt", body: "---\nmodel: openai/x\n---\n{{userInput}}\n" };
  try {
    const refused = async (members: Parameters<typeof tarGz>[0], code: string) => {
      const bytes = await tarGz(members);
      const err = await assertRejects(() => installBundle(envs, bytes), StationError);
      assertEquals((err as StationError).code, code);
      assert(!existsSync(envs) || [...Deno.readDirSync(envs)].length === 0, "nothing written");
    };
    await refused([manifest("ops"), agent, {
      name: "agents/b.prompt",
      type: "symlink",
      linkname: "/etc/shadow",
    }], "bundle_invalid");
    await refused([manifest("ops"), agent, { name: "../escape.json", body: "{}" }], "bundle_invalid");
    await refused([manifest("../up"), agent], "invalid_environment");

    // A script, a JSON file that is no MCP config (Station's faker-config.json): left out, named, never written.
    const installed = await installBundle(
      envs,
      await tarGz([manifest("ops"), agent, { name: "run.sh", body: "rm -rf ~" }, {
        name: "faker-config.json",
        body: '{"faker": {}}',
      }]),
    );
    assertEquals(installed.files, ["agents/a.prompt"]);
    assertEquals(installed.station!.left_out.map((l) => [l.path, l.reason]), [
      ["faker-config.json", 'not an MCP config (no "mcpServers" object)'],
      ["run.sh", "not an agent, MCP config or workflow"],
    ]);
    assert(!existsSync(join(envs, "ops", "run.sh")));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("station bundles: on a terminal, install asks for each missing variable, a secret without echo", async () => {
  const home = await tempHome();
  try {
    const file = home.path("vault.tar.gz");
    const template = {
      mcpServers: {
        vault: {
          command: "vault-mcp",
          env: { API_TOKEN: "{{ .API_TOKEN }}", DB_PASSWORD: "{{ .DB_PASSWORD }}" },
        },
      },
    };
    Deno.writeFileSync(
      file,
      await tarGz([
        { name: "manifest.json", body: JSON.stringify({ version: "1.0", bundle: { name: "vault" } }) },
        { name: "template.json", body: JSON.stringify(template) },
      ]),
    );
    // `script` gives stn a pseudo-terminal: the answers are typed into it.
    const line = [Deno.execPath(), ...STN_RUN_ARGS, MAIN, "bundle", "install", file].join(" ");
    const child = new Deno.Command("script", {
      args: ["-qec", line, "/dev/null"],
      env: childEnv(home.env),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("tok-123\n\n"));
    await writer.close();
    const out = await child.output();
    const printed = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, printed);
    assertStringIncludes(printed, "API_TOKEN, used by template.json (empty: set later): [hidden]");
    // The empty answer leaves DB_PASSWORD for later: installed, and listed to set.
    assertStringIncludes(printed, "variables still to set: DB_PASSWORD");
    assertEquals(
      Deno.readTextFileSync(home.path("environments", "vault", "variables.yml")),
      "API_TOKEN: tok-123\n",
    );
  } finally {
    await home.cleanup();
  }
});
