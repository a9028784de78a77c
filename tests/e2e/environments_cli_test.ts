import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { manifestFor, tarGz } from "../environments/bundle_fixtures.ts";

/** Every file under the home with its bytes and mtime, so "changes nothing" is checked, not assumed. */
function snapshot(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) Object.assign(out, snapshot(path, `${prefix}${e.name}/`));
    else {
      const info = Deno.statSync(path);
      out[prefix + e.name] = `${info.mtime?.getTime()} ${info.mode! & 0o777} ${Deno.readTextFileSync(path)}`;
    }
  }
  return out;
}

async function ok(home: TempHome, args: string[], stdin?: string) {
  const r = await runStn(args, { env: home.env, stdin });
  assertEquals(r.code, 0, `stn ${args.join(" ")}: ${r.stderr}`);
  return r;
}

Deno.test("stn init: an empty home, then sync and a run of the example workflow; init twice changes nothing", async (t) => {
  const home = await tempHome();
  try {
    await t.step("init writes config.yaml and environments/default, and says what to try next", async () => {
      const r = await ok(home, ["init"]);
      assertStringIncludes(r.stdout, "config: set ai.provider, ai.model");
      assertStringIncludes(r.stdout, `stn workflow run hello --input '{"name": "Ada"}'`);
      assertStringIncludes(r.stdout, "export OPENAI_API_KEY=…; stn agent run hello");
      assertEquals(
        Deno.readTextFileSync(home.path("config.yaml")),
        "ai:\n  provider: openai\n  model: openai/gpt-4o-mini\n",
      );
      const env = home.path("environments", "default");
      for (
        const f of ["agents/hello.prompt", "mcp-configs/filesystem.json", "workflows/hello.workflow.yaml"]
      ) {
        assert(Deno.statSync(join(env, f)).isFile, f);
      }
      assertEquals(Deno.statSync(join(env, "variables.yml")).mode! & 0o777, 0o600);
    });

    await t.step("init again changes nothing", async () => {
      const before = snapshot(home.home);
      const r = await ok(home, ["init", "--yes"]);
      assertStringIncludes(r.stdout, "unchanged");
      assertStringIncludes(r.stdout, "already set up");
      assertEquals(snapshot(home.home), before);
    });

    await t.step("sync loads the example, and the example workflow runs with no model key", async () => {
      const s = await ok(home, ["sync"]);
      assertStringIncludes(s.stdout, "created: hello (v1)");
      const short = await ok(home, ["workflow", "run", "hello", "--input", '{"name": "Ada"}']);
      assertEquals(JSON.parse(short.stdout), { greeting: "Hello, Ada!", letters: 3 });
      const long = await ok(home, ["workflow", "run", "hello", "--input", '{"name": "Bartholomew"}']);
      assertEquals(JSON.parse(long.stdout).greeting, "Hello, Bartholomew! That is a long name: 11 letters.");
    });

    await t.step(
      "env show lists the example, its MCP tools, its agent's status and its variable",
      async () => {
        const r = await ok(home, ["env", "show", "default", "--json"]);
        const d = JSON.parse(r.stdout);
        assertEquals(d.agents, [{
          name: "hello",
          file: "agents/hello.prompt",
          status: "valid",
          errors: [],
          warnings: [],
          synced: "current",
        }]);
        assertEquals(d.mcp_configs[0].servers, [{
          name: "filesystem",
          transport: "stdio",
          program: "deno",
          variables: ["FILESYSTEM_ROOT"],
        }]);
        // The sync started the example's filesystem server (offline, from Deno's cache) and stored its tools.
        assertEquals(d.mcp_servers.map((s: { name: string; status: string }) => [s.name, s.status]), [[
          "filesystem",
          "ok",
        ]]);
        assert(d.mcp_servers[0].tools > 5, `tools: ${d.mcp_servers[0].tools}`);
        const text = await ok(home, ["env", "show", "default"]);
        assertMatch(text.stdout, /hello {2}valid, synced/);
        assertMatch(text.stdout, /filesystem \(stdio\) {2}\d+ tools/);
        assertEquals(d.variables.map((v: { name: string; source: string }) => [v.name, v.source]), [[
          "FILESYSTEM_ROOT",
          "variables.yml",
        ]]);
      },
    );

    await t.step(
      "the example agent runs once the provider answers: ai.base_url at the scripted model",
      async () => {
        const model = startModelServer();
        try {
          // init adds the key the user chose now (base_url) and keeps the others.
          const set = await ok(home, ["init", "--base-url", model.url]);
          assertStringIncludes(set.stdout, "config: set ai.base_url");
          model.script({ text: "Hello from the example agent, in five words." });
          const run = await runStn(["agent", "run", "hello", "Say hello in five words"], {
            env: { ...home.env, OPENAI_API_KEY: "sk-test" },
          });
          assertEquals(run.code, 0, run.stderr);
          assertEquals(run.stdout.trim(), "Hello from the example agent, in five words.");
          const sent = model.requests[0].body;
          assertEquals(sent.model, "gpt-4o-mini");
          assertStringIncludes(JSON.stringify(sent.messages), "Say hello in five words");
        } finally {
          await model.close();
        }
      },
    );

    await t.step("a value already in config.yaml is kept unless --force", async () => {
      const kept = await ok(home, ["init", "--provider", "anthropic"]);
      assertStringIncludes(
        kept.stdout,
        'kept ai.provider: "openai" (asked "anthropic"; --force replaces it)',
      );
      assertStringIncludes(Deno.readTextFileSync(home.path("config.yaml")), "provider: openai");
      await ok(home, ["init", "--provider", "anthropic", "--force"]);
      // base_url was not asked for this time, so it stays as the earlier step set it.
      assertMatch(
        Deno.readTextFileSync(home.path("config.yaml")),
        /^ai:\n {2}provider: anthropic\n {2}model: anthropic\/claude-3-5-haiku-latest\n {2}base_url: http:\/\/127\.0\.0\.1:\d+\/v1\n$/,
      );
    });
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn init: bad input is refused and changes nothing", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("server: [not, a, map\n");
    const bad = await runStn(["init"], { env: home.env });
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /^error: .*config\.yaml: not a YAML map/m);
    assertEquals(Deno.readTextFileSync(home.path("config.yaml")), "server: [not, a, map\n");
    assertEquals([...Deno.readDirSync(home.home)].map((e) => e.name), ["config.yaml"]);

    const compat = await runStn(["init", "--provider", "openai-compatible"], { env: home.env });
    assertEquals(compat.code, 2);
    assertStringIncludes(compat.stderr, "needs --model and --base-url");
    const unknown = await runStn(["init", "--provider", "nope"], { env: home.env });
    assertEquals(unknown.code, 2);
  } finally {
    await home.cleanup();
  }
});

const SECRET = "ghp_e2e_do_not_print_me";

Deno.test("env vars and bundles through the real stn: secrets masked in CLI, API and logs; a bundle moves to a fresh home", async (t) => {
  const a = await tempHome();
  const b = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-bundle-e2e-" });
  const bundle = join(work, "default.tar.gz");
  try {
    await ok(a, ["init"]);
    Deno.writeTextFileSync(
      a.path("environments", "default", "mcp-configs", "github.json"),
      JSON.stringify({
        mcpServers: { github: { command: "github-mcp", env: { GITHUB_TOKEN: "{{ .GITHUB_TOKEN }}" } } },
      }),
    );

    await t.step(
      "against a running server: every command masks the secret, and so does its log",
      async () => {
        const serve = await startServe({ env: { ...a.env, STN_LOG_LEVEL: "debug" }, home: a.home });
        try {
          const set = await ok(a, ["env", "vars", "set", "default", "GITHUB_TOKEN", "-"], `${SECRET}\n`);
          assertStringIncludes(set.stdout, "set GITHUB_TOKEN = ********");
          const outputs = [set.stdout, set.stderr];
          for (
            const args of [
              ["env", "vars", "list", "default"],
              ["env", "vars", "get", "default", "GITHUB_TOKEN"],
              ["env", "vars", "list", "default", "--json"],
              ["env", "show", "default"],
              ["env", "show", "default", "--json"],
              ["bundle", "create", "default", "-o", bundle],
            ]
          ) {
            const r = await ok(a, args);
            outputs.push(r.stdout, r.stderr);
          }
          assertEquals((await ok(a, ["env", "vars", "get", "default", "GITHUB_TOKEN"])).stdout, "********\n");
          for (const out of outputs) assert(!out.includes(SECRET), `the secret was printed:\n${out}`);
          assertStringIncludes(
            Deno.readTextFileSync(a.path("environments", "default", "variables.yml")),
            `GITHUB_TOKEN: ${SECRET}`,
          );
          await serve.stop();
          assertStringIncludes(serve.stderr(), "variable set");
          assert(!serve.stderr().includes(SECRET), "the server logged the secret");
        } finally {
          await serve.stop();
        }
      },
    );

    await t.step(
      "the archive holds agents, MCP configs and workflows, never variables.yml or a secret",
      async () => {
        const tar = new TextDecoder().decode(gunzipSync(Deno.readFileSync(bundle)));
        assert(!tar.includes(SECRET) && !tar.includes("variables.yml"));
        const inspect = await ok(a, ["bundle", "inspect", bundle]);
        assertStringIncludes(inspect.stdout, "variables:   FILESYSTEM_ROOT, GITHUB_TOKEN [secret]");
        const exists = await runStn(["bundle", "create", "default", "-o", bundle], { env: a.env });
        assertEquals(exists.code, 1);
        assertStringIncludes(exists.stderr, "already exists");
      },
    );

    await t.step(
      "install into a new environment on a fresh home: same agents and workflows, variables missing",
      async () => {
        const r = await ok(b, ["bundle", "install", bundle, "shared", "--defer-variables"]);
        assertStringIncludes(r.stdout, "installed environment shared");
        assertStringIncludes(r.stdout, "variables still to set: FILESYSTEM_ROOT, GITHUB_TOKEN");
        assertStringIncludes(r.stdout, "stn env vars set shared GITHUB_TOKEN -");
        // The bundle's own server waits for approval, showing what it runs; stn init's example is trusted.
        assertStringIncludes(r.stdout, "mcp server github (stdio): not approved, not started");
        assertStringIncludes(r.stdout, "runs: github-mcp\n    env: GITHUB_TOKEN={{ .GITHUB_TOKEN }}");
        assertStringIncludes(r.stdout, "synced mcp server filesystem (stdio): failed:");
        const show = (home: TempHome, env: string) =>
          ok(home, ["env", "show", env, "--json"]).then((x) => JSON.parse(x.stdout));
        const [from, to] = [await show(a, "default"), await show(b, "shared")];
        assertEquals([to.agents, to.workflows, to.mcp_configs], [
          from.agents,
          from.workflows,
          from.mcp_configs,
        ]);
        assertEquals(to.missing, ["FILESYSTEM_ROOT", "GITHUB_TOKEN"]);
        const run = await ok(b, ["workflow", "run", "hello", "--input", '{"name": "Ada"}']);
        assertEquals(JSON.parse(run.stdout).greeting, "Hello, Ada!");
      },
    );

    await t.step("install from a URL; a hostile bundle is refused with a clear error", async () => {
      const server = Deno.serve(
        { port: 0, hostname: "127.0.0.1", onListen: () => {} },
        () => new Response(Deno.readFileSync(bundle)),
      );
      try {
        const r = await ok(b, [
          "bundle",
          "install",
          `http://127.0.0.1:${server.addr.port}/default.tar.gz`,
          "fromurl",
          "--force",
          "--defer-variables",
        ]);
        assertStringIncludes(r.stdout, "installed environment fromurl");
        // Its workflow `hello` was stored from `shared`: --force takes it over, and says so.
        assertStringIncludes(r.stdout, "replaced workflow hello (v1, from environment shared's files)");
      } finally {
        await server.shutdown();
      }
      const evil = join(work, "evil.tar.gz");
      const agent = { name: "agents/x.prompt", body: "hi" };
      const link = { name: "agents/y.prompt", type: "symlink" as const, linkname: "/etc/shadow" };
      Deno.writeFileSync(evil, await tarGz([manifestFor([agent]), agent, link]));
      const refused = await runStn(["bundle", "install", evil, "evil"], { env: b.env });
      assertEquals(refused.code, 1);
      assertMatch(refused.stderr, /^error: member agents\/y\.prompt is a symlink \(to \/etc\/shadow\)/m);
      assert(!refused.stderr.includes("    at "), "no stack trace");
      assert(
        !Deno.readDirSync(b.path("environments")).some((e) => e.name === "evil" || e.name.startsWith(".")),
      );
      const inspect = await runStn(["bundle", "inspect", evil], { env: b.env });
      assertEquals(inspect.code, 1);
    });

    await t.step("delete asks for --yes without a terminal", async () => {
      const r = await runStn(["env", "delete", "fromurl"], { env: b.env });
      assertEquals(r.code, 2);
      assertStringIncludes(r.stderr, "pass --yes");
      await ok(b, ["env", "delete", "fromurl", "--yes"]);
      const list = JSON.parse((await ok(b, ["env", "list", "--json"])).stdout);
      // `default` is the one the station created empty when it started on this fresh home.
      assertEquals(list.environments.map((e: { name: string }) => e.name), ["default", "shared"]);
    });
  } finally {
    await a.cleanup();
    await b.cleanup();
    await Deno.remove(work, { recursive: true });
  }
});
