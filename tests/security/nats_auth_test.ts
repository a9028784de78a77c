import net from "node:net";
import { join } from "node:path";
import { connect, nkeys } from "@nats-io/transport-node";
import { StationError } from "../../src/errors.ts";
import { authConfigPath, readAuthConfig } from "../../src/nats/server.ts";
import { natsTarget } from "../../src/nats/connection.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { runStn } from "../helpers/stn.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";

/** A nats-server of our own with the given config text (its auth), on a free loopback port. */
async function authNats(dir: string, config: string): Promise<{ url: string; stop(): Promise<void> }> {
  const conf = join(dir, `auth-${crypto.randomUUID().slice(0, 8)}.conf`);
  await Deno.writeTextFile(conf, config);
  const child = new Deno.Command("nats-server", {
    args: ["-c", conf, "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", join(dir, "js-" + conf.slice(-13, -5))],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let port: string | undefined;
  while (!port || !log.includes("Server is ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`nats-server exited: ${log}`);
    log += value;
    port = /Listening for client connections on [^\s]+:(\d+)/.exec(log)?.[1];
  }
  const draining = (async () => {
    while (!(await reader.read()).done) { /* keep the pipe empty */ }
  })();
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await draining;
    },
  };
}

/**
 * What a server answers a client that presents `connect` (NATS protocol, spoken over a plain socket: nats.js
 * leaves a late connection reset after a refused login unhandled, which would fail the test process).
 */
function loginAnswer(url: string, connectFields: Record<string, string> = {}): Promise<string> {
  const { hostname, port } = new URL(url.replace("nats:", "http:"));
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let seen = "";
    let sent = false;
    socket.on("data", (d) => {
      seen += d.toString();
      if (!sent && seen.includes("\r\n")) {
        sent = true;
        socket.write(`CONNECT ${JSON.stringify({ verbose: false, ...connectFields })}\r\nPING\r\n`);
      }
      if (/PONG|-ERR/.test(seen)) socket.end();
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(seen));
  });
}

/** Connecting with nothing but the address (or a guessed password) is refused. */
async function assertRefuses(url: string, connectFields: Record<string, string> = {}): Promise<void> {
  const answer = await loginAnswer(url, connectFields);
  assert(/-ERR 'Authorization Violation'/.test(answer), `expected an authorization error, got ${answer}`);
}

Deno.test("nats auth: the managed nats-server wants generated credentials from a 0600 file, not argv", async () => {
  const ts = await startTestStation();
  try {
    const url = ts.station.ctx.nats.url;
    await assertRefuses(url);
    await assertRefuses(url, { user: "stn", pass: "guess" });

    const conf = authConfigPath(ts.home.path("run", "nats.pid"));
    assertEquals(Deno.statSync(conf).mode! & 0o777, 0o600);
    const { password } = readAuthConfig(conf);
    assert(/^[0-9a-f]{64}$/.test(password), "the config file holds a generated password");
    const pid = JSON.parse(Deno.readTextFileSync(ts.home.path("run", "nats.pid"))).pid;
    const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`);
    assert(!argv.includes(password), "the password is not on nats-server's command line");
    // A raw nats.js client gets in with exactly these, and can then reach everything stn stores.
    const nc = await connect({ servers: url, user: "stn", pass: password, timeout: 3_000 });
    assertEquals((await loginAnswer(url, { user: "stn", pass: password })).includes("PONG"), true);
    await nc.close();
  } finally {
    await ts.close();
  }
});

Deno.test("nats auth: /health shows where NATS listens only to callers holding the API token", async () => {
  const token = "a-long-enough-test-token";
  const ts = await startTestStation({ configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${token}\n` });
  try {
    const anonymous = await (await fetch(`${ts.station.url}/health`)).json();
    assertEquals([anonymous.status, anonymous.nats.status, anonymous.nats.managed], ["ok", "ok", true]);
    assertEquals(anonymous.nats.url, undefined);
    const wrong =
      await (await fetch(`${ts.station.url}/health`, { headers: { authorization: "Bearer nope" } }))
        .json();
    assertEquals(wrong.nats.url, undefined);
    const holder = await (await fetch(`${ts.station.url}/health`, {
      headers: { authorization: `Bearer ${token}` },
    })).json();
    assertEquals(holder.nats.url, ts.station.ctx.nats.url);
  } finally {
    await ts.close();
  }
});

Deno.test("nats auth: nats.url and nats.* keys carry user/password, token and nkey credentials", async (t) => {
  const home = await tempHome();
  const seed = nkeys.createUser();
  const userServer = await authNats(home.home, 'authorization { user: "ann", password: "s3cr:t@pw" }\n');
  const tokenServer = await authNats(home.home, 'authorization { token: "tok-123" }\n');
  const nkeyServer = await authNats(
    home.home,
    `authorization { users: [{ nkey: "${seed.getPublicKey()}" }] }\n`,
  );
  const seedFile = join(home.home, "user.nk");
  await Deno.writeTextFile(seedFile, new TextDecoder().decode(seed.getSeed()) + "\n", { mode: 0o600 });
  const hostPort = (url: string) => url.slice("nats://".length);
  const healthy = async (nats: Record<string, string>, shownUrl: string) => {
    const yaml = "nats:\n" + Object.entries(nats).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`).join("");
    const ts = await startTestStation({ configYaml: yaml });
    try {
      const health = await (await fetch(`${ts.station.url}/health`)).json();
      assertEquals([health.status, health.nats.managed, health.nats.url], ["ok", false, shownUrl]);
      const put = await fetch(`${ts.station.url}/api/v1/files/files/through-auth.txt`, {
        method: "PUT",
        body: "ok",
      });
      assertEquals(put.status, 201);
      await put.body?.cancel();
    } finally {
      await ts.close();
    }
  };
  try {
    await assertRefuses(userServer.url);
    await assertRefuses(tokenServer.url);
    await assertRefuses(nkeyServer.url);

    await t.step("user:password in the URL (percent-encoded), never shown", async () => {
      await healthy(
        { url: `nats://ann:${encodeURIComponent("s3cr:t@pw")}@${hostPort(userServer.url)}` },
        userServer.url,
      );
    });
    await t.step("nats.user and nats.password", async () => {
      await healthy({ url: userServer.url, user: "ann", password: "s3cr:t@pw" }, userServer.url);
    });
    await t.step("a token in the URL, and nats.token", async () => {
      await healthy({ url: `nats://tok-123@${hostPort(tokenServer.url)}` }, tokenServer.url);
      await healthy({ url: tokenServer.url, token: "tok-123" }, tokenServer.url);
    });
    await t.step("nats.nkey_file", async () => {
      await healthy({ url: nkeyServer.url, nkey_file: seedFile }, nkeyServer.url);
    });
    await t.step("`stn serve` with wrong or missing credentials exits 1 with nats_unauthorized", async () => {
      for (const password of [undefined, "wrong-pw"]) {
        const env: Record<string, string> = { ...home.env, STN_NATS_URL: userServer.url };
        if (password) Object.assign(env, { STN_NATS_USER: "ann", STN_NATS_PASSWORD: password });
        const r = await runStn(["serve", "--port", "0"], { env });
        assertEquals(r.code, 1, r.stderr);
        assertStringIncludes(r.stderr, "refused our credentials");
        assertStringIncludes(r.stderr, "hint:");
        assert(!/Uncaught|wrong-pw/.test(r.stderr), r.stderr);
      }
    });
  } finally {
    await userServer.stop();
    await tokenServer.stop();
    await nkeyServer.stop();
    await home.cleanup();
  }
});

/** Runs openssl; the test's CA and server certificate come from it. */
async function openssl(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
}

Deno.test("nats auth: TLS to an external server is verified against nats.tls_ca_file", async () => {
  const home = await tempHome();
  const dir = home.path("tls");
  await Deno.mkdir(dir);
  await openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "1",
    "-subj",
    "/CN=stn-test-ca",
  );
  await openssl(
    dir,
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  );
  // Deno's TLS client checks the name "localhost" for 127.0.0.1, so the certificate names both.
  await Deno.writeTextFile(join(dir, "san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await openssl(
    dir,
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "1",
    "-extfile",
    "san.cnf",
  );
  const server = await authNats(
    home.home,
    `tls { cert_file: "${join(dir, "server.pem")}", key_file: "${join(dir, "server.key")}" }\n` +
      'authorization { user: "ann", password: "pw" }\n',
  );
  const tlsUrl = server.url.replace("nats://", "tls://");
  try {
    const ts = await startTestStation({
      configYaml: `nats:\n  url: "tls://ann:pw@${tlsUrl.slice("tls://".length)}"\n  tls_ca_file: ${
        join(dir, "ca.pem")
      }\n`,
    });
    try {
      const health = await (await fetch(`${ts.station.url}/health`)).json();
      assertEquals([health.status, health.nats.url], ["ok", tlsUrl]);
    } finally {
      await ts.close();
    }
    // Without the CA its certificate cannot be verified, and stn says which key fixes that.
    const err = await assertRejects(
      () =>
        startTestStation({
          configYaml: `nats:\n  url: "tls://ann:pw@${tlsUrl.slice("tls://".length)}"\n`,
          home,
        }),
      StationError,
    );
    assertEquals((err as StationError).code, "nats_tls_failed");
    assertStringIncludes((err as StationError).hint ?? "", "nats.tls_ca_file");
  } finally {
    await server.stop();
    await home.cleanup();
  }
});

Deno.test("nats auth: natsTarget takes credentials out of the URL and turns tls:// and CA files into TLS", () => {
  const base = { server_bin: "nats-server" };
  assertEquals(natsTarget({ ...base, url: "nats://u:p%40ss@a:4222, nats://u:p%40ss@b:4222" }), {
    url: "nats://a:4222,nats://b:4222",
    user: "u",
    password: "p@ss",
    token: undefined,
    credsFile: undefined,
    nkeyFile: undefined,
    tls: undefined,
  });
  const tls = natsTarget({
    ...base,
    url: "tls://t0k@h:4443",
    tls_ca_file: "/ca.pem",
    creds_file: "/u.creds",
  });
  assertEquals([tls.url, tls.token, tls.credsFile, tls.tls?.caFile], [
    "tls://h:4443",
    "t0k",
    "/u.creds",
    "/ca.pem",
  ]);
});
