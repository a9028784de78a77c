import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";
import { hashTree, stationHome } from "../helpers/station_home.ts";

// Every command a Station user tries first, on Station's home: each works or explains itself (exit 2 with a
// pointer), and Station's files keep their bytes.
const COMMANDS: Array<{ args: string[]; code: number; out?: string }> = [
  { args: ["status"], code: 0, out: "status:  ok" },
  { args: ["config", "show"], code: 0, out: "Station's" },
  { args: ["config", "migrate"], code: 0, out: "provider: openai" },
  { args: ["init", "--yes"], code: 0, out: "is Station's" },
  { args: ["import", "station", "--dry-run"], code: 0, out: "agents/db-only-agent.prompt" },
  { args: ["import", "station"], code: 0, out: "workflows/greet.workflow.yaml" },
  { args: ["sync"], code: 0, out: "created: greet (v1)" },
  { args: ["agent", "list"], code: 0, out: "echo-agent" },
  { args: ["workflow", "list"], code: 0, out: "greet" },
  { args: ["workflow", "run", "greet", "--version", "1"], code: 0, out: '"text": "hi hi"' },
  { args: ["env", "list"], code: 0, out: "default" },
  { args: ["runs", "list"], code: 2 },
  { args: ["mcp", "list"], code: 2 },
];

Deno.test("Station's home: every stn command works or explains itself, and Station's files hash the same", async () => {
  const home = await tempHome();
  try {
    stationHome(home.home);
    const before = await hashTree(home.home);
    assertEquals(Object.keys(before).length, 4, "config.yaml, station.db, an agent and variables.yml");
    const env = { ...home.env, STN_SANDBOX_ENABLED: "false" };
    for (const c of COMMANDS) {
      const r = await runStn(c.args, { env });
      const what = `stn ${c.args.join(" ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
      assertEquals(r.code, c.code, what);
      if (c.out) assertStringIncludes(r.stdout, c.out, what);
      if (c.code !== 0) assert(/^error: .+\nhint: .+/m.test(r.stderr), `a message and a pointer: ${what}`);
      assert(!/\n\s+at |schema_migrations|already exists/.test(r.stderr), `no stack, no SQL: ${what}`);
      // A command that loads the config warns once per Station key, naming the stn key (migrate, init and
      // import read the file as Station's instead).
      const warned = r.stderr.match(/ai_provider is Station's key: read as ai\.provider/g)?.length ?? 0;
      assertEquals(
        warned,
        c.code === 0 && !["config migrate", "init", "import"].some((p) => c.args.join(" ").startsWith(p))
          ? 1
          : 0,
        what,
      );
    }
    // stn doctor: the config is a warning listing Station's keys, not a failure.
    const doctor = await runStn(["--json", "doctor"], { env });
    const report = JSON.parse(doctor.stdout);
    const checks: { name: string; status: string; detail: string }[] = report.checks ??
      report.error.details.checks;
    const config = checks.find((c) => c.name === "config")!;
    assertEquals(config.status, "warn", doctor.stdout);
    assertStringIncludes(config.detail, "api_port is Station's key: read as server.port");
    const after = await hashTree(home.home);
    for (const [file, hash] of Object.entries(before)) assertEquals(after[file], hash, `${file} unchanged`);
    assertEquals(
      after["station.db-wal"] ?? after["station.db-shm"],
      undefined,
      "nothing added beside station.db",
    );
    assert(after["stn.db"], "stn's own ledger is stn.db");
  } finally {
    await home.cleanup();
  }
});

Deno.test("config migrate: -o writes a new file only; --write keeps the exact original first", async () => {
  const home = await tempHome();
  try {
    stationHome(home.home);
    const original = Deno.readFileSync(home.path("config.yaml"));
    const out = home.path("stn-config.yaml");
    assertEquals((await runStn(["config", "migrate", "-o", out], { env: home.env })).code, 0);
    assertStringIncludes(Deno.readTextFileSync(out), "server:\n  port: 8585");
    const again = await runStn(["config", "migrate", "-o", out], { env: home.env });
    assertEquals(again.code, 2, again.stderr);
    assertStringIncludes(again.stderr, "exists: nothing was written");
    assertEquals(Deno.readFileSync(home.path("config.yaml")), original);

    const write = await runStn(["--json", "config", "migrate", "--write"], { env: home.env });
    assertEquals(write.code, 0, write.stderr);
    const r = JSON.parse(write.stdout);
    assertEquals([r.output, r.backup], [home.path("config.yaml"), home.path("config.yaml.station-backup")]);
    assertEquals(Deno.readFileSync(r.backup), original);
    // The rewritten config loads without a Station warning.
    const status = await runStn(["config", "show"], { env: home.env });
    assertEquals(status.code, 0, status.stderr);
    assert(!status.stderr.includes("Station's key"), status.stderr);
    // Migrated once, there is nothing left to write, and the backup stays the original.
    const twice = await runStn(["config", "migrate", "--write"], { env: home.env });
    assertEquals(twice.code, 0, twice.stderr);
    assertStringIncludes(twice.stdout, "nothing to migrate");
    assertEquals(Deno.readFileSync(r.backup), original);
  } finally {
    await home.cleanup();
  }
});

Deno.test("import station --home: a Station home's environments come to stn's home as new files, once", async () => {
  const station = await tempHome();
  const home = await tempHome();
  try {
    stationHome(station.home);
    const before = await hashTree(station.home);
    const args = ["--json", "import", "station", "--home", station.home];
    const first = await runStn(args, { env: home.env });
    assertEquals(first.code, 0, first.stderr);
    const r = JSON.parse(first.stdout);
    const env = r.environments.find((e: { name: string }) => e.name === "default");
    assertEquals([env.shared, env.copied], [false, ["agents/echo-agent.prompt", "variables.yml"]]);
    assertEquals(env.agents_written, ["agents/db-only-agent.prompt"]);
    assertEquals(env.workflows_written, ["workflows/greet.workflow.yaml"]);
    assertEquals(
      r.not_imported.map((n: { what: string; count: number }) => `${n.count} ${n.what}`).sort(),
      ["1 users", "2 workflow runs", "3 agent runs", "6 benchmark_tasks"],
    );
    assertEquals(
      Deno.readTextFileSync(home.path("environments/default/agents/echo-agent.prompt")),
      Deno.readTextFileSync(station.path("environments/default/agents/echo-agent.prompt")),
    );
    assertStringIncludes(
      Deno.readTextFileSync(home.path("environments/default/agents/db-only-agent.prompt")),
      "You summarize text.",
    );
    // Again: everything is there already, nothing is written.
    const again = JSON.parse((await runStn(args, { env: home.env })).stdout);
    const env2 = again.environments.find((e: { name: string }) => e.name === "default");
    assertEquals([env2.copied, env2.agents_written, env2.workflows_written], [[], [], []]);
    assertEquals(env2.kept.length, 2);
    assertEquals(await hashTree(station.home), before, "Station's home is unchanged");
    // What it wrote loads.
    const sync = await runStn(["sync"], { env: { ...home.env, STN_SANDBOX_ENABLED: "false" } });
    assertEquals(sync.code, 0, sync.stderr);
    assertStringIncludes(sync.stdout, "created: greet (v1)");
  } finally {
    await home.cleanup();
    await station.cleanup();
  }
});
