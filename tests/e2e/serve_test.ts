import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { processAlive, runStn, startServe, waitFor } from "../helpers/stn.ts";
import { ManagedNatsServer } from "../../src/nats/server.ts";
import type { Health } from "../../src/contract/health.ts";

const TOKEN = "test-token-0123456789abcdef";

function natsPidOf(home: string): number {
  return JSON.parse(Deno.readTextFileSync(`${home}/run/nats.pid`)).pid;
}

Deno.test("serve: healthy, announced in server.json, and SIGTERM leaves nothing behind", async () => {
  const home = await tempHome();
  try {
    const serve = await startServe({ env: home.env, home: home.home });
    const res = await fetch(`${serve.url}/health`);
    const health = await res.json() as Health;
    assertEquals(res.status, 200);
    assertEquals([health.status, health.db.status, health.nats.status, health.nats.managed], [
      "ok",
      "ok",
      "ok",
      true,
    ]);

    const info = JSON.parse(Deno.readTextFileSync(home.path("run", "server.json")));
    assertEquals(info.pid, serve.child.pid);
    assertEquals(info.url, serve.url);
    assert(!Number.isNaN(Date.parse(info.started_at)));

    const version = await (await fetch(`${serve.url}/api/v1/version`)).json();
    assertEquals(typeof version.version, "string");
    const missing = await fetch(`${serve.url}/api/v1/nope`);
    assertEquals(missing.status, 404);
    assertEquals((await missing.json()).error.code, "not_found");

    const natsPid = natsPidOf(home.home);
    assert(processAlive(natsPid), "the managed nats-server runs while serve runs");
    const status = await serve.stop("SIGTERM");
    assertEquals(status.code, 0, serve.stderr());
    assert(!processAlive(natsPid), "the nats-server child must be gone after SIGTERM");
    assertEquals(await exists(home.path("run", "server.json")), false);
    assertEquals(await exists(home.path("run", "nats.pid")), false);
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: SIGINT (Ctrl-C) stops cleanly too", async () => {
  const home = await tempHome();
  try {
    const serve = await startServe({ env: home.env, home: home.home });
    const natsPid = natsPidOf(home.home);
    assertEquals((await serve.stop("SIGINT")).code, 0, serve.stderr());
    assert(!processAlive(natsPid));
    assertEquals(await exists(home.path("run", "server.json")), false);
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: kill -9 of the managed nats-server makes serve exit non-zero and say so", async () => {
  const home = await tempHome();
  try {
    const serve = await startServe({ env: home.env, home: home.home });
    Deno.kill(natsPidOf(home.home), "SIGKILL");
    const status = await serve.stop("SIGCONT"); // harmless signal: we only wait for its own exit
    assertEquals(status.code, 1);
    assertStringIncludes(serve.stderr(), "nats-server");
    assertStringIncludes(serve.stderr(), "was killed by SIGKILL");
    assertEquals(await exists(home.path("run", "server.json")), false);
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: a nats-server orphaned by a killed stn is stopped at the next start", async () => {
  const home = await tempHome();
  try {
    const first = await startServe({ env: home.env, home: home.home });
    const orphan = natsPidOf(home.home);
    await first.stop("SIGKILL");
    assert(processAlive(orphan), "SIGKILL cannot clean up: the child outlives it");
    const second = await startServe({ env: home.env, home: home.home });
    assert(!processAlive(orphan), "the orphan is stopped before a new server uses the store");
    assertEquals((await fetch(`${second.url}/health`)).status, 200);
    await second.stop();
  } finally {
    await home.cleanup();
  }
});

// A test that kills its station leaves the managed nats-server running until the next stn on that home;
// the home's cleanup stops it, so no test leaves one behind (scripts/test fails on any that survives).
Deno.test("serve: a killed station's nats-server does not outlive its test home's cleanup", async () => {
  const home = await tempHome();
  let orphan = 0;
  try {
    const serve = await startServe({ env: home.env, home: home.home });
    orphan = natsPidOf(home.home);
    await serve.stop("SIGKILL");
    assert(processAlive(orphan), "SIGKILL cannot clean up: the child outlives it");
  } finally {
    await home.cleanup();
  }
  assert(!processAlive(orphan), "the cleanup stopped it");
});

Deno.test("serve: bad config values exit 2 with the key path", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("server:\n  port: abc\n");
    const r = await runStn(["serve"], { env: home.env });
    assertEquals(r.code, 2);
    assertStringIncludes(r.stderr, 'config.yaml: server.port: expected a number, got "abc"');
    assert(!r.stderr.includes("    at "), "no stack trace");

    Deno.removeSync(home.path("config.yaml"));
    const flag = await runStn(["serve", "--port", "x"], { env: home.env });
    assertEquals(flag.code, 2);
    assertStringIncludes(flag.stderr, "--port: server.port: expected a number");

    const unknown = await runStn(["serve", "--bogus"], { env: home.env });
    assertEquals(unknown.code, 2);
    assertStringIncludes(unknown.stderr, "unknown option '--bogus'");
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: a missing nats-server binary is a clear error", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["serve", "--port", "0"], {
      env: { ...home.env, STN_NATS_SERVER_BIN: "/nonexistent/nats-server" },
    });
    assertEquals(r.code, 1);
    assertStringIncludes(r.stderr, "'/nonexistent/nats-server' was not found");
    assertStringIncludes(r.stderr, "apt-get install nats-server");
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: a non-loopback bind without a token is refused", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["serve", "--host", "0.0.0.0", "--port", "0"], { env: home.env });
    assertEquals(r.code, 2);
    assertStringIncludes(r.stderr, "without an API token");
    assertStringIncludes(r.stderr, "STATION_API_TOKEN");
    assertEquals(await exists(home.path("run", "server.json")), false);
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: with a token on a non-loopback bind, 401 without it and 200 with it", async () => {
  const home = await tempHome();
  try {
    const env = { ...home.env, STATION_API_TOKEN: TOKEN };
    const serve = await startServe({ env, home: home.home, args: ["--host", "0.0.0.0", "--port", "0"] });
    try {
      assertEquals((await (await fetch(`${serve.url}/health`)).json()).status, "ok", "/health stays open");
      const none = await fetch(`${serve.url}/api/v1/version`);
      assertEquals(none.status, 401);
      assertEquals((await none.json()).error.code, "unauthorized");
      const wrong = await fetch(`${serve.url}/api/v1/version`, { headers: { authorization: "Bearer nope" } });
      assertEquals(wrong.status, 401);
      await wrong.body?.cancel();
      const right = await fetch(`${serve.url}/api/v1/version`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assertEquals(right.status, 200);
      await right.body?.cancel();
      assert(!serve.stderr().includes(TOKEN), "the token is never logged");
    } finally {
      await serve.stop();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("serve: with --nats-url it uses that server, and health turns 503 when it goes away", async () => {
  const home = await tempHome();
  const external = await ManagedNatsServer.start({
    bin: "nats-server",
    storeDir: home.path("external-nats"),
    pidFile: home.path("external-nats.pid"),
  });
  try {
    // That server, like any stn starts, wants its generated credentials.
    const { user, password } = external.credentials;
    const serve = await startServe({
      env: { ...home.env, STN_NATS_USER: user, STN_NATS_PASSWORD: password },
      home: home.home,
      args: ["--port", "0", "--nats-url", external.url],
    });
    try {
      const ok = await (await fetch(`${serve.url}/health`)).json() as Health;
      assertEquals([ok.nats.managed, ok.nats.url, ok.nats.status], [false, external.url, "ok"]);
      assertEquals(await exists(home.path("run", "nats.pid")), false, "no managed server was started");
      await external.stop();
      let last = 0;
      assert(
        await waitFor(async () =>
          (last = await fetch(`${serve.url}/health`).then(async (r) => {
            await r.body?.cancel();
            return r.status;
          })) === 503
        ),
        `health should turn 503, got ${last}`,
      );
      const down = await (await fetch(`${serve.url}/health`)).json() as Health;
      assertEquals([down.status, down.nats.status], ["degraded", "down"]);
    } finally {
      assertEquals((await serve.stop()).code, 0);
    }
  } finally {
    await external.stop();
    await home.cleanup();
  }
});

Deno.test("status: reports the target from each discovery mode and its health", async () => {
  const home = await tempHome();
  try {
    // Nothing running: embedded mode starts a runtime for the command and stops it.
    const embedded = await runStn(["status", "--json"], { env: home.env });
    assertEquals(embedded.code, 0, embedded.stderr);
    const e = JSON.parse(embedded.stdout);
    assertEquals([e.target.source, e.health.status, e.health.nats.managed], ["embedded", "ok", true]);
    assertEquals(
      await exists(home.path("run", "nats.pid")),
      false,
      "the embedded runtime stopped its nats-server",
    );

    const serve = await startServe({ env: home.env, home: home.home });
    try {
      const viaFile = JSON.parse((await runStn(["status", "--json"], { env: home.env })).stdout);
      assertEquals([viaFile.target.source, viaFile.target.url], ["server.json", serve.url]);

      const viaEnv = JSON.parse(
        (await runStn(["status", "--json"], { env: { ...home.env, STATION_URL: serve.url } })).stdout,
      );
      assertEquals([viaEnv.target.source, viaEnv.target.url], ["env", serve.url]);

      const viaFlag = await runStn(["--station", serve.url, "status"], {
        env: { ...home.env, STATION_URL: "http://127.0.0.1:9" },
      });
      assertEquals(viaFlag.code, 0, viaFlag.stderr);
      assertMatch(viaFlag.stdout, /^server: +http:\/\/127\.0\.0\.1:\d+ \(from --station\)$/m);
      assertMatch(viaFlag.stdout, /^nats: +ok \(managed nats:\/\//m);
    } finally {
      await serve.stop();
    }

    // A server.json left behind by a dead server is ignored.
    Deno.writeTextFileSync(
      home.path("run", "server.json"),
      JSON.stringify({ url: "http://127.0.0.1:9", pid: 999999, started_at: "", version: "" }),
    );
    const stale = JSON.parse((await runStn(["status", "--json"], { env: home.env })).stdout);
    assertEquals(stale.target.source, "embedded");

    const unreachable = await runStn(["--station", "http://127.0.0.1:9", "status"], { env: home.env });
    assertEquals(unreachable.code, 1);
    assertStringIncludes(unreachable.stderr, "error: cannot reach stn at http://127.0.0.1:9");
  } finally {
    await home.cleanup();
  }
});

Deno.test("cli: --version, --help and unknown commands", async () => {
  const home = await tempHome();
  try {
    const v = await runStn(["--version"], { env: home.env });
    assertEquals(v.code, 0);
    assertMatch(v.stdout, /^\d+\.\d+\.\d+\n$/);
    const h = await runStn(["--help"], { env: home.env });
    assertEquals(h.code, 0);
    assertStringIncludes(h.stdout, "Exit codes");
    const bad = await runStn(["frobnicate"], { env: home.env });
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "unknown command 'frobnicate'");
  } finally {
    await home.cleanup();
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
