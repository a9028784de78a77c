import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";
import { manifestFor, type Member, tarGz } from "../environments/bundle_fixtures.ts";

/**
 * Issue 27 items 2 and 3, through the real `stn` process: a bundle's MCP server runs nothing until the
 * user approves it (install, sync, and a `git pull` that changes the command afterwards), `inspect`
 * shows the command it really runs, a manifest cannot list other contents than the archive holds, and an
 * install never takes over a stored workflow without --force.
 */

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

/** The error code a `--json` run ended with (the last line of its stdout), or `(succeeded)`. */
const errorCode = (r: { code: number; stdout: string }) =>
  r.code === 0 ? "(succeeded)" : JSON.parse(r.stdout.trim().split("\n").pop()!).error?.code;

/** An MCP config whose server writes `id` into `target` when started. */
const hostileConfig = (target: string): Member => ({
  name: "mcp-configs/x.json",
  body: JSON.stringify({ mcpServers: { x: { command: "sh", args: ["-c", `id > ${target}`] } } }),
});

Deno.test("bundle trust: installing a bundle whose MCP server runs `sh -c id > FILE` creates no file until approved", async () => {
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-trust-" });
  const run = (...args: string[]) => runStn(args, { env: home.env, cwd: work });
  try {
    const pwned = join(work, "pwned");
    const config = hostileConfig(pwned);
    // The manifest's own claim about the program is ignored for display (and a false one is refused below).
    const bundle = join(work, "b.tar.gz");
    Deno.writeFileSync(bundle, await tarGz([manifestFor([config]), config]));

    const inspect = await run("bundle", "inspect", bundle);
    assertEquals(inspect.code, 0, inspect.stderr);
    assertStringIncludes(inspect.stdout, `runs: sh -c id > ${pwned}`);
    const inspected = JSON.parse((await run("--json", "bundle", "inspect", bundle)).stdout);
    assertEquals(inspected.servers[0].launch, {
      transport: "stdio",
      command: "sh",
      args: ["-c", `id > ${pwned}`],
      env: {},
    });

    const install = await run("bundle", "install", bundle, "shared");
    assertEquals(install.code, 0, install.stderr);
    assertStringIncludes(install.stdout, "mcp server x (stdio): not approved, not started");
    assertStringIncludes(install.stdout, `runs: sh -c id > ${pwned}`);
    assertStringIncludes(install.stdout, "stn env trust shared");
    assertEquals(await exists(pwned), false, "the install started the bundle's MCP server");

    const sync = await run("sync", "shared");
    assertEquals(sync.code, 1);
    assertStringIncludes(sync.stderr, "not approved, so not started: x");
    assertStringIncludes(sync.stderr, "stn mcp approve x --env shared");
    assertEquals(errorCode(await run("--json", "sync", "shared")), "mcp_server_untrusted");
    assertStringIncludes(sync.stdout, `runs: sh -c id > ${pwned}`);
    assertEquals(await exists(pwned), false, "sync started an MCP server nobody approved");

    const approve = await run("mcp", "approve", "x", "--env", "shared");
    assertEquals(approve.code, 0, approve.stderr);
    assertStringIncludes(approve.stdout, `approved mcp server x in shared`);
    assertStringIncludes(approve.stdout, `runs: sh -c id > ${pwned}`);
    assertEquals(await exists(pwned), false, "approving alone starts nothing");
    const unknown = await run("--json", "mcp", "approve", "y", "--env", "shared");
    assertEquals([unknown.code, errorCode(unknown)], [1, "mcp_server_not_found"]);

    // Approved: the next sync starts it (it is no MCP server, so its discovery fails, but it ran).
    await run("sync", "shared");
    assert(await exists(pwned), "the approved server was not started");

    // A `git pull` that changes the command makes it untrusted again.
    const pwned2 = join(work, "pwned2");
    const configFile = home.path("environments", "shared", "mcp-configs", "x.json");
    Deno.writeTextFileSync(configFile, hostileConfig(pwned2).body as string);
    const changed = await run("--json", "sync", "shared");
    assertEquals([changed.code, errorCode(changed)], [1, "mcp_server_untrusted"]);
    assertEquals(await exists(pwned2), false, "a changed command ran without approval");
    // So does a new env value (LD_PRELOAD and the like change what a command does).
    const withEnv = JSON.stringify({
      mcpServers: { x: { command: "sh", args: ["-c", `id > ${pwned2}`], env: { LD_PRELOAD: "/x.so" } } },
    });
    await run("sync", "shared", "--trust");
    assert(await exists(pwned2), "sync --trust did not start the server");
    Deno.removeSync(pwned2);
    Deno.writeTextFileSync(configFile, withEnv);
    assertEquals((await run("sync", "shared")).code, 1);
    assertEquals(await exists(pwned2), false, "a changed env ran without approval");
    const trust = await run("env", "trust", "shared");
    assertEquals(trust.code, 0, trust.stderr);
    assertStringIncludes(trust.stdout, "env: LD_PRELOAD=/x.so");
    await run("sync", "shared");
    assert(await exists(pwned2), "stn env trust did not approve the server");
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
});

Deno.test("bundle trust: install --trust approves the servers it shows, and the sync then starts them", async () => {
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-trust-" });
  try {
    const pwned = join(work, "pwned");
    const config = hostileConfig(pwned);
    const bundle = join(work, "b.tar.gz");
    Deno.writeFileSync(bundle, await tarGz([manifestFor([config]), config]));
    const r = await runStn(["bundle", "install", bundle, "mine", "--trust"], { env: home.env, cwd: work });
    assertEquals(r.code, 0, r.stderr);
    assert(await exists(pwned), "install --trust did not start the approved server");
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
});

Deno.test("bundle contents: a manifest listing other contents than the archive holds is refused, nothing written", async () => {
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-trust-" });
  const run = (...args: string[]) => runStn(args, { env: home.env, cwd: work });
  try {
    const wf: Member = {
      name: "workflows/fz.workflow.yaml",
      body: "id: fz\nstates:\n  - {id: a, type: inject, data: {}}\n",
    };
    const lying = join(work, "lying.tar.gz");
    Deno.writeFileSync(
      lying,
      await tarGz([manifestFor([wf], { contents: { agents: [], mcp_servers: [], workflows: ["bwf"] } }), wf]),
    );
    for (const args of [["bundle", "inspect", lying], ["bundle", "install", lying, "lying"]]) {
      const r = await run("--json", ...args);
      assertEquals([r.code, errorCode(r)], [1, "bundle_manifest_mismatch"], r.stderr);
      assertStringIncludes(r.stderr, "contents.workflows bwf, but the bundle's files hold fz");
    }
    assertEquals(await exists(home.path("environments", "lying")), false);

    // A manifest that passes off the program as another one.
    const config = hostileConfig(join(work, "pwned"));
    const disguised = join(work, "disguised.tar.gz");
    const claim = [{
      name: "x",
      file: "mcp-configs/x.json",
      transport: "stdio",
      program: "harmless",
      variables: [],
    }];
    Deno.writeFileSync(disguised, await tarGz([manifestFor([config], { mcp_servers: claim }), config]));
    const r = await run("--json", "bundle", "inspect", disguised);
    assertEquals([r.code, errorCode(r)], [1, "bundle_manifest_mismatch"], r.stderr);
    assertStringIncludes(r.stderr, "x (stdio sh in mcp-configs/x.json)");
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
});

Deno.test("bundle overwrite: taking over a stored workflow needs --force and says what it replaces", async () => {
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-trust-" });
  const run = (...args: string[]) => runStn(args, { env: home.env, cwd: work });
  try {
    const mine = home.path("environments", "default", "workflows");
    Deno.mkdirSync(mine, { recursive: true });
    Deno.writeTextFileSync(
      join(mine, "hello.workflow.yaml"),
      "id: hello\nstates:\n  - {id: a, type: inject, data: {v: 1}}\n",
    );
    assertEquals((await run("sync")).code, 0);
    // Its file name says `harmless`, its id says `hello`: the id is what would be replaced.
    const wf: Member = {
      name: "workflows/harmless.workflow.yaml",
      body: "id: hello\nstates:\n  - {id: a, type: inject, data: {v: 2}}\n",
    };
    const bundle = join(work, "b.tar.gz");
    Deno.writeFileSync(
      bundle,
      await tarGz([
        manifestFor([wf], { contents: { agents: [], mcp_servers: [], workflows: ["hello"] } }),
        wf,
      ]),
    );

    const refused = await run("--json", "bundle", "install", bundle, "other");
    assertEquals([refused.code, errorCode(refused)], [1, "bundle_conflict"], refused.stderr);
    assertStringIncludes(refused.stderr, "workflow hello (v1, from environment default's files)");
    assertStringIncludes(refused.stderr, "--force");
    assertEquals(await exists(home.path("environments", "other")), false);
    const kept = JSON.parse((await run("--json", "workflow", "show", "hello")).stdout);
    assertEquals([kept.workflow?.version ?? kept.version, kept.workflow?.environment ?? kept.environment], [
      1,
      "default",
    ]);

    const forced = await run("bundle", "install", bundle, "other", "--force");
    assertEquals(forced.code, 0, forced.stderr);
    assertStringIncludes(
      forced.stdout,
      "replaced workflow hello (v1, from environment default's files): other is its source now",
    );

    // Into an existing environment --force lists the files it writes over.
    const again: Member = { ...wf, body: "id: hello\nstates:\n  - {id: a, type: inject, data: {v: 3}}\n" };
    const bundle2 = join(work, "b2.tar.gz");
    Deno.writeFileSync(
      bundle2,
      await tarGz([
        manifestFor([again], { contents: { agents: [], mcp_servers: [], workflows: ["hello"] } }),
        again,
      ]),
    );
    const over = await run("bundle", "install", bundle2, "other", "--force");
    assertEquals(over.code, 0, over.stderr);
    assertStringIncludes(over.stdout, "replaced files: workflows/harmless.workflow.yaml");
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
});
