import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";
import { dockerClient } from "../../src/sandbox/docker.ts";
import { readServerFile } from "../../src/config/server_file.ts";
import { packEnvironment } from "../../src/environments/bundle/pack.ts";

// `stn up` against the real Docker Engine: the image is built from this checkout (the Debian root comes
// from the cache scripts/images/python fills), the station runs in a container, the host's CLI finds it.

const docker = dockerClient();

/** A base port with it and the next two free on 127.0.0.1 (API, MCP, agent MCP). */
function freePorts(): number {
  for (;;) {
    // Below the kernel's ephemeral range (32768+): the ports are held across minutes of build and restarts,
    // and every other test's listener on port 0 and outgoing connection takes its port from that range.
    const base = 20000 + Math.floor(Math.random() * 12000);
    const listeners: Deno.Listener[] = [];
    try {
      for (let p = base; p < base + 3; p++) listeners.push(Deno.listen({ hostname: "127.0.0.1", port: p }));
      return base;
    } catch {
      /* taken: try another */
    } finally {
      for (const l of listeners) l.close();
    }
  }
}

const WORKFLOW = `id: count
inputSchema:
  type: object
  required: [file_key]
  properties: { file_key: { type: string } }
states:
  - id: count
    type: sandbox
    image: stn-test/busybox
    stage: [{ file_key: "\${file_key}", destination: in.csv }]
    command: ["sh", "-c", "wc -l < in.csv > lines.txt"]
    publish: [lines.txt]
`;

async function containersOf(name: string) {
  return await docker.listContainers({ all: true, filters: { label: [`dev.stn.up=${name}`] } });
}

async function volumeExists(name: string): Promise<boolean> {
  return await docker.getVolume(name).inspect().then(() => true, () => false);
}

Deno.test("up: the station in a container, driven from the host, down keeps the data, purge leaves nothing", async () => {
  const home = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "stn-up-ws-" });
  const name = `t${crypto.randomUUID().slice(0, 8)}`;
  const port = freePorts();
  const opts = { env: home.env, cwd: workspace };
  const stn = (...args: string[]) => runStn(args, opts);
  const upArgs = [
    "--json",
    "up",
    "--name",
    name,
    "--port",
    String(port),
    "--env",
    'STN_SANDBOX_ALLOWED_IMAGES=["stn-test/busybox"]',
  ];
  try {
    await Deno.chmod(workspace, 0o755); // as a user's folder is: the station runs as uid 1000
    await Deno.mkdir(join(workspace, "environments/default/workflows"), { recursive: true });
    await Deno.writeTextFile(join(workspace, "environments/default/workflows/count.workflow.yaml"), WORKFLOW);

    // A cold build assembles a Debian root, Deno and the dependency cache: minutes on a loaded machine.
    const build = await runStn(["--json", "image", "build"], { ...opts, timeoutMs: 300_000 });
    assertEquals(build.code, 0, build.stderr);
    const built = JSON.parse(build.stdout);
    assertMatch(built.image, /^stn:\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    assert(built.size_bytes > 50e6, `${built.size_bytes} bytes`);

    const first = await stn(...upArgs);
    assertEquals(first.code, 0, first.stderr);
    const started = JSON.parse(first.stdout);
    assertEquals([started.image, started.built], [built.image, false], "up uses the image just built");
    assertEquals([started.action, started.container, started.url], [
      "started",
      `stn-${name}`,
      `http://127.0.0.1:${port}`,
    ]);
    assertMatch(started.token, /^[0-9a-f]{64}$/);
    const tokenFile = home.path("up", `${name}.token`);
    assertEquals(Deno.statSync(tokenFile).mode! & 0o777, 0o600);
    assertEquals(Deno.readTextFileSync(tokenFile).trim(), started.token);
    assertEquals(readServerFile(home.path("run", "server.json"))?.container, `stn-${name}`);

    // What the container is allowed: a non-root user, no privileges, ports on loopback, the workspace read-only.
    const info = await docker.getContainer(`stn-${name}`).inspect();
    assertEquals(info.Config.User, "1000:1000");
    const top = await docker.getContainer(`stn-${name}`).top({ ps_args: "-o pid,uid,comm" });
    const uid = top.Titles.indexOf("UID");
    assertEquals(
      new Set(top.Processes.map((p: string[]) => p[uid])),
      new Set(["1000"]),
      "stn and nats-server",
    );
    assertEquals(info.HostConfig.Privileged, false);
    assertEquals(info.HostConfig.CapDrop, ["ALL"]);
    const bindings = Object.values(info.HostConfig.PortBindings as Record<string, { HostIp: string }[]>)
      .flat();
    assertEquals(bindings.map((b) => b.HostIp), ["127.0.0.1", "127.0.0.1", "127.0.0.1"]);
    assert(info.HostConfig.Binds!.includes(`${workspace}:/workspace:ro`), String(info.HostConfig.Binds));
    // From outside the container the API wants the token (only /health answers without it).
    assertEquals(await fetch(`${started.url}/health`).then((r) => r.text().then(() => r.status)), 200);
    const anonymous = await fetch(`${started.url}/api/v1/workflows`);
    assertEquals([anonymous.status, (await anonymous.json()).error.code], [401, "unauthorized"]);

    const logs = await stn("--json", "logs", "--tail", "20");
    assertEquals(logs.code, 0, logs.stderr);
    assert(
      JSON.parse(logs.stdout).lines.some((l: { text: string }) => l.text.includes("stn serve listening")),
      logs.stdout,
    );

    const status = await stn("status");
    assertEquals(status.code, 0, status.stderr);
    assertMatch(status.stdout, new RegExp(`container: +stn-${name} running`));
    assertStringIncludes(status.stdout, `127.0.0.1:${port}->8585/tcp`);
    assertMatch(status.stdout, /status: +ok/);

    // A workflow with a sandbox step and a file round trip, through the container.
    await Deno.writeTextFile(join(workspace, "d.csv"), "a\nb\nc\n");
    assertEquals((await stn("files", "upload", "d.csv", "--key", "up/d.csv")).code, 0);
    const run = await stn("workflow", "run", "count", "--input", '{"file_key": "up/d.csv"}', "--wait");
    assertEquals(run.code, 0, run.stderr);
    const published = JSON.parse(run.stdout).files["lines.txt"];
    const download = await stn("files", "download", published, "-o", "-");
    assertEquals([download.code, download.stdout.trim()], [0, "3"]);
    const runId = published.split("/")[1];

    // A sandbox opened from inside is a sibling container carrying the station's label.
    const sandbox = await stn("sandbox", "open", "--image", "stn-test/busybox");
    assertEquals(sandbox.code, 0, sandbox.stderr);
    const sibling = await docker.listContainers({
      filters: {
        label: [`dev.stn.up=${name}`, `dev.stn.session=${sandbox.stdout.trim()}`, "dev.stn.managed=true"],
      },
    });
    assertEquals(sibling.length, 1, "the sandbox is a sibling container labelled with the station's name");

    const again = await stn(...upArgs);
    assertEquals([again.code, JSON.parse(again.stdout).action], [0, "unchanged"]);
    assertEquals(JSON.parse(again.stdout).token, undefined, "the token is printed once");

    // Other flags: the container is replaced, the volume (and so the run) stays.
    const replaced = await stn(...upArgs, "--env", "STN_LOG_LEVEL=debug");
    assertEquals([replaced.code, JSON.parse(replaced.stdout).action], [0, "replaced"], replaced.stderr);
    assertStringIncludes((await stn("workflow", "runs")).stdout, runId);

    const downed = await stn("--json", "down");
    assertEquals(downed.code, 0, downed.stderr);
    // The open sandbox at least (a run's own sandbox may already be gone when its run ended).
    assert(JSON.parse(downed.stdout).sandboxes >= 1, downed.stdout);
    assertEquals(await containersOf(name), []);
    assert(await volumeExists(`stn-${name}-data`), "down keeps the data volume");
    // …and removes its sandboxes' volumes (their supervisors') with them.
    const sandboxVolumes = await docker.listVolumes({
      filters: { label: [`dev.stn.up=${name}`, "dev.stn.managed=true"] },
    });
    assertEquals(sandboxVolumes.Volumes ?? [], []);
    assertEquals(readServerFile(home.path("run", "server.json")), null);

    const back = await stn(...upArgs);
    assertEquals([back.code, JSON.parse(back.stdout).action], [0, "started"], back.stderr);
    const runs = await stn("workflow", "runs");
    assertStringIncludes(runs.stdout, runId, "the data volume kept the earlier run");

    // A station that cannot start (no nats-server) is removed with the volume this up made, and says why.
    const broken = await runStn(
      [
        "up",
        "--name",
        `${name}-bad`,
        "--port",
        String(freePorts()),
        "--timeout",
        "60",
        "--env",
        "STN_NATS_SERVER_BIN=/nope",
      ],
      opts,
    );
    assertEquals(broken.code, 1, broken.stderr);
    assertStringIncludes(broken.stderr, `error: stn-${name}-bad did not become healthy: it exited`);
    assertStringIncludes(broken.stderr, "/nope");
    assertEquals(await containersOf(`${name}-bad`), []);
    assertEquals(await volumeExists(`stn-${name}-bad-data`), false);
    assertEquals(
      readServerFile(home.path("run", "server.json"))?.container,
      `stn-${name}`,
      "still the good one",
    );

    await docker.getContainer(`stn-${name}`).stop({ t: 5 });
    const stopped = await stn("status");
    assertEquals(stopped.code, 1);
    assertStringIncludes(stopped.stderr, `stn-${name} is not running (exited)`);

    // --bundle: on its first start a station whose workspace has no environments/ gets the bundle's.
    const bare = await Deno.makeTempDir({ prefix: "stn-up-bundle-" });
    await Deno.chmod(bare, 0o755);
    const team = join(bare, "src", "team");
    await Deno.mkdir(join(team, "agents"), { recursive: true });
    await Deno.mkdir(join(team, "workflows"), { recursive: true });
    await Deno.writeTextFile(
      join(team, "agents", "helper.prompt"),
      "---\nmax_steps: 2\n---\n{{userInput}}\n",
    );
    await Deno.writeTextFile(
      join(team, "workflows", "greet.workflow.yaml"),
      "id: greet\nstates:\n  - {id: a, type: inject, data: {msg: hi}}\n",
    );
    const bundleFile = join(bare, "team.tar.gz");
    await Deno.writeFile(bundleFile, (await packEnvironment(join(bare, "src"), "team")).bytes);
    await Deno.remove(join(bare, "src"), { recursive: true });
    const bundled = `${name}-b`;
    const bundleArgs = ["--json", "up", "--name", bundled, "--port", String(freePorts())];
    bundleArgs.push("--workspace", bare, "--bundle", bundleFile);
    const bundledUp = await stn(...bundleArgs);
    assertEquals(bundledUp.code, 0, bundledUp.stderr);
    assertEquals(JSON.parse(bundledUp.stdout).bundle, {
      environment: "team",
      installed: true,
      files: ["agents/helper.prompt", "workflows/greet.workflow.yaml"],
      missing: [],
      untrusted: [],
    });
    const teamShown = JSON.parse((await stn("env", "show", "team", "--json")).stdout);
    assertEquals(teamShown.agents.map((a: { name: string; synced: string }) => [a.name, a.synced]), [[
      "helper",
      "current",
    ]]);
    const greeted = await stn("workflow", "run", "greet", "--wait");
    assertEquals([greeted.code, JSON.parse(greeted.stdout)], [0, { msg: "hi" }], greeted.stderr);
    const bundledAgain = await stn(...bundleArgs);
    assertEquals(JSON.parse(bundledAgain.stdout).action, "unchanged", bundledAgain.stderr);
    assertEquals(JSON.parse(bundledAgain.stdout).bundle, {
      environment: "team",
      installed: false,
      files: [],
      missing: [],
      untrusted: [],
    });
    // A workspace with its own environments/ (read-only in the container) cannot take a bundle.
    const refused = await stn("up", "--name", bundled, "--bundle", bundleFile);
    assertEquals(refused.code, 2);
    assertStringIncludes(refused.stderr, "has environments/, which the station uses read-only");
    assertEquals((await stn("down", "--name", bundled)).code, 0);
    await docker.getVolume(`stn-${bundled}-data`).remove();
    await Deno.remove(bare, { recursive: true });

    const purged = await stn("--json", "down", "--purge", "--yes", "--name", name);
    assertEquals(purged.code, 0, purged.stderr);
    assertEquals(await containersOf(name), []);
    assertEquals(await volumeExists(`stn-${name}-data`), false);
    assertEquals(await docker.getImage(started.image).inspect().then(() => true, () => false), false);
    assertEquals(await Deno.stat(tokenFile).then(() => true, () => false), false);
  } finally {
    for (const n of [name, `${name}-bad`, `${name}-b`]) {
      for (const c of await containersOf(n)) {
        await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
      }
      await docker.getVolume(`stn-${n}-data`).remove().catch(() => {});
    }
    await Deno.remove(workspace, { recursive: true });
    await home.cleanup();
  }
});

Deno.test("up: a missing workspace, an unreachable Docker or a taken port is one clear line, and nothing is started", async () => {
  const home = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "stn-up-ws-" });
  const name = `t${crypto.randomUUID().slice(0, 8)}`;
  const port = freePorts();
  const opts = { env: home.env, cwd: workspace };
  try {
    const missing = await runStn(["up", "--name", name, "--workspace", join(workspace, "nope")], opts);
    assertEquals(missing.code, 2);
    assertMatch(missing.stderr, /^error: workspace .*nope is not a directory\nhint: /);

    const closed = await runStn(["up", "--name", name], opts); // a temp dir is 0700
    assertEquals(closed.code, 2);
    assertStringIncludes(closed.stderr, `hint: let others read it: chmod o+rx ${workspace}`);
    await Deno.chmod(workspace, 0o755);

    const noDocker = await runStn(["up", "--name", name], {
      ...opts,
      env: { ...home.env, DOCKER_HOST: "unix:///nonexistent/docker.sock" },
    });
    assertEquals(noDocker.code, 1);
    assertMatch(
      noDocker.stderr,
      /^error: the Docker Engine at unix:\/\/\/nonexistent\/docker.sock is not reachable.*\nhint: start it/,
    );

    const taken = Deno.listen({ hostname: "127.0.0.1", port: port + 1 });
    try {
      const busy = await runStn(["up", "--name", name, "--port", String(port)], opts);
      assertEquals(busy.code, 1);
      assertStringIncludes(busy.stderr, `error: port ${port + 1} on 127.0.0.1 is already in use`);
    } finally {
      taken.close();
    }
    assertEquals(await containersOf(name), []);
    assertEquals(await volumeExists(`stn-${name}-data`), false);
    assertEquals(await Deno.stat(home.path("up", `${name}.token`)).then(() => true, () => false), false);

    const unasked = await runStn(["down", "--name", name, "--purge"], opts);
    assertEquals(unasked.code, 2);
    assertStringIncludes(unasked.stderr, "pass --yes");
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await home.cleanup();
  }
});
