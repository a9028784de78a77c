import { createHmac } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, type ServeProcess, startServe, waitFor } from "../helpers/stn.ts";

/**
 * Issue 27 item 9: a retried start never starts a second run, and a captured webhook delivery
 * replayed under a new delivery id does nothing. Against a real `stn serve`, its SQLite ledger read
 * directly to count what was created.
 */

const HOOK_SECRET = "hook-secret-hook-secret";
const WORKFLOW = `id: hello
triggers:
  - event: deploy
states:
  - id: done
    type: inject
    data: { ok: true }
`;
const AGENT = `---
model: openai/test-model
max_steps: 2
---
{{role "system"}}
You greet.
{{role "user"}}
{{userInput}}
`;
const DAY_MS = 24 * 3_600_000;

async function homeWith(modelUrl: string): Promise<TempHome> {
  const home = await tempHome();
  home.writeConfig(`ai:
  provider: openai
  base_url: ${modelUrl}
  api_key: sk-test
sandbox:
  enabled: false
events:
  hooks:
    gh:
      secret: ${HOOK_SECRET}
      event: deploy
`);
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/workflows`, { recursive: true });
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.writeTextFileSync(`${env}/workflows/hello.workflow.yaml`, WORKFLOW);
  Deno.writeTextFileSync(`${env}/agents/Greeter.prompt`, AGENT);
  return home;
}

/** A query on the station's ledger file (opened per call: the server keeps writing it). */
function ledger<T>(home: TempHome, sql: string, ...params: (string | number)[]): T {
  const db = new DatabaseSync(home.path("stn.db"));
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.prepare(sql).get(...params) as T;
  } finally {
    db.close();
  }
}

const count = (home: TempHome, table: string) =>
  ledger<{ n: number }>(home, `SELECT COUNT(*) AS n FROM ${table}`).n;

function start(url: string, path: string, body: unknown, key?: string): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });
}

/**
 * A TCP proxy in front of `upstream` that loses the answer of the first run start: it forwards the
 * request, waits until the server answers, then closes the client's connection without a byte — the
 * "timed out / connection reset after the server acted" case a retrying client must survive.
 */
function lossyProxy(upstream: string): { url: string; dropped: () => number; close(): void } {
  const target = new URL(upstream);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let dropped = 0;
  const serve = async (client: Deno.Conn) => {
    const server = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
    const first = new Uint8Array(65536);
    const n = await client.read(first);
    if (n === null) return client.close(), server.close();
    const head = new TextDecoder().decode(first.subarray(0, n));
    await server.write(first.subarray(0, n));
    if (dropped === 0 && head.startsWith("POST /api/v1/workflow-runs ")) {
      dropped++;
      const forwarding = client.readable.pipeTo(server.writable).catch(() => {});
      await server.read(new Uint8Array(1)); // the server has answered: the run exists
      try {
        client.close();
      } catch { /* closed */ }
      await forwarding;
      try {
        server.close();
      } catch { /* closed */ }
      return;
    }
    await Promise.all([
      client.readable.pipeTo(server.writable).catch(() => {}),
      server.readable.pipeTo(client.writable).catch(() => {}),
    ]);
  };
  (async () => {
    for await (const conn of listener) serve(conn).catch(() => {});
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    dropped: () => dropped,
    close: () => listener.close(),
  };
}

Deno.test("idempotency: one run per Idempotency-Key (API, concurrent, expiry, CLI, retries) and no replayed webhook", async (t) => {
  const model = startModelServer();
  model.route(() => ({ text: "hello" }));
  const home = await homeWith(model.url);
  let serve: ServeProcess = await startServe({ env: home.env, home: home.home });
  try {
    await t.step("the same key twice starts one workflow run; the replay says so", async () => {
      const before = count(home, "workflow_runs");
      const first = await start(
        serve.url,
        "/api/v1/workflow-runs",
        { workflowId: "hello", input: { n: 1 } },
        "k-1",
      );
      assertEquals(first.status, 201);
      assertEquals(first.headers.get("idempotent-replayed"), null);
      const run = await first.json();
      const again = await start(
        serve.url,
        "/api/v1/workflow-runs",
        { workflowId: "hello", input: { n: 1 } },
        "k-1",
      );
      assertEquals(again.status, 201);
      assertEquals(again.headers.get("idempotent-replayed"), "true");
      assertEquals((await again.json()).id, run.id);
      // The stored workflow's own start route is the same request: the same run.
      const stored = await start(serve.url, "/api/v1/workflows/hello/runs", { input: { n: 1 } }, "k-1");
      assertEquals([stored.status, (await stored.json()).id], [201, run.id]);
      assertEquals(count(home, "workflow_runs"), before + 1);
      // Without a key every start is a new run, as before.
      await (await start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" })).body?.cancel();
      await (await start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" })).body?.cancel();
      assertEquals(count(home, "workflow_runs"), before + 3);
    });

    await t.step(
      "the OpenAPI document shows the header on every start route and the replay mark",
      async () => {
        const doc = await (await fetch(`${serve.url}/api/v1/openapi.json`)).json();
        for (
          const path of ["/api/v1/workflow-runs", "/api/v1/workflows/{id}/runs", "/api/v1/agents/{name}/runs"]
        ) {
          const op = doc.paths[path].post;
          const header = op.parameters.find((p: { in: string; name: string }) => p.in === "header");
          assertEquals([path, header?.name], [path, "idempotency-key"]);
          assert(op.responses["201"].headers["Idempotent-Replayed"], path);
          assert(JSON.stringify(op.responses["409"]).includes("idempotency_key_reused"), path);
        }
      },
    );

    await t.step("the same key with another body is 409 idempotency_key_reused with a hint", async () => {
      const before = count(home, "workflow_runs");
      const res = await start(
        serve.url,
        "/api/v1/workflow-runs",
        { workflowId: "hello", input: { n: 2 } },
        "k-1",
      );
      assertEquals(res.status, 409);
      const { error } = await res.json();
      assertEquals(error.code, "idempotency_key_reused");
      assertMatch(error.hint, /same body/);
      assertEquals(count(home, "workflow_runs"), before);
      const bad = await start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" }, "k\u00e9y");
      assertEquals([bad.status, (await bad.json()).error.code], [400, "invalid_request"]);
    });

    await t.step("after 24 h the key starts a new run", async () => {
      const first = ledger<{ run_id: string }>(home, "SELECT run_id FROM idempotency_keys WHERE key = 'k-1'");
      const db = new DatabaseSync(home.path("stn.db"));
      db.exec("PRAGMA busy_timeout = 5000");
      db.prepare("UPDATE idempotency_keys SET created_ms = created_ms - ? WHERE key = 'k-1'").run(
        DAY_MS + 1000,
      );
      db.close();
      const res = await start(
        serve.url,
        "/api/v1/workflow-runs",
        { workflowId: "hello", input: { n: 2 } },
        "k-1",
      );
      assertEquals([res.status, res.headers.get("idempotent-replayed")], [201, null]);
      const run = await res.json();
      assert(run.id !== first.run_id);
      assertEquals(
        ledger<{ run_id: string }>(home, "SELECT run_id FROM idempotency_keys WHERE key = 'k-1'").run_id,
        run.id,
      );
    });

    await t.step("10 concurrent starts with one key give exactly one run", async () => {
      const before = count(home, "workflow_runs");
      const answers = await Promise.all(
        Array.from(
          { length: 10 },
          () => start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" }, "k-burst"),
        ),
      );
      const ids = new Set<string>();
      let replays = 0;
      for (const res of answers) {
        assertEquals(res.status, 201);
        if (res.headers.get("idempotent-replayed") === "true") replays++;
        ids.add((await res.json()).id);
      }
      assertEquals([ids.size, replays], [1, 9]);
      assertEquals(count(home, "workflow_runs"), before + 1);
    });

    await t.step("agent runs: the same key twice is one run, another body 409", async () => {
      const before = count(home, "agent_runs");
      const first = await start(
        serve.url,
        "/api/v1/agents/Greeter/runs?wait=1",
        { task: "greet Ada" },
        "a-1",
      );
      assertEquals(first.status, 201);
      const run = await first.json();
      const again = await start(
        serve.url,
        "/api/v1/agents/Greeter/runs?wait=1",
        { task: "greet Ada" },
        "a-1",
      );
      assertEquals([again.status, again.headers.get("idempotent-replayed")], [201, "true"]);
      const replay = await again.json();
      assertEquals([replay.run_id, replay.status, replay.response], [run.run_id, "completed", "hello"]);
      const other = await start(serve.url, "/api/v1/agents/Greeter/runs", { task: "greet Bob" }, "a-1");
      assertEquals([other.status, (await other.json()).error.code], [409, "idempotency_key_reused"]);
      // A workflow run's key is not an agent run's: reusing it is refused too.
      const cross = await start(serve.url, "/api/v1/agents/Greeter/runs", { task: "greet Ada" }, "k-burst");
      assertEquals([cross.status, (await cross.json()).error.code], [409, "idempotency_key_reused"]);
      assertEquals(count(home, "agent_runs"), before + 1);
      assertEquals(model.requests.length, 1);
    });

    await t.step("stn workflow run / agent run --idempotency-key against the server", async () => {
      const env = { ...home.env, STATION_URL: serve.url };
      const before = count(home, "workflow_runs");
      const a = await runStn(["workflow", "run", "hello", "--idempotency-key", "cron-2026-11-26"], { env });
      const b = await runStn(["workflow", "run", "hello", "--idempotency-key", "cron-2026-11-26"], { env });
      assertEquals([a.code, b.code], [0, 0], a.stderr + b.stderr);
      assertMatch(a.stdout.trim(), /^[0-9A-Z]{26}$/);
      assertEquals(b.stdout.trim(), a.stdout.trim());
      assertEquals(count(home, "workflow_runs"), before + 1);
      const bad = await runStn(["workflow", "run", "hello", "--idempotency-key", "two words"], { env });
      assertEquals(bad.code, 2);
      assertMatch(bad.stderr, /--idempotency-key/);

      const agents = count(home, "agent_runs");
      const x = await runStn(["agent", "run", "Greeter", "hi", "--idempotency-key", "ci-42"], { env });
      const y = await runStn(["agent", "run", "Greeter", "hi", "--idempotency-key", "ci-42"], { env });
      assertEquals(
        [x.code, y.code, x.stdout.trim(), y.stdout.trim()],
        [0, 0, "hello", "hello"],
        x.stderr + y.stderr,
      );
      assertEquals(count(home, "agent_runs"), agents + 1);
    });

    await t.step("a start whose answer is lost is retried by the CLI with its own key: one run", async () => {
      const proxy = lossyProxy(serve.url);
      try {
        const before = count(home, "workflow_runs");
        const res = await runStn(["workflow", "run", "hello", "--station", proxy.url], { env: home.env });
        assertEquals(proxy.dropped(), 1, "the proxy lost the first answer");
        assertEquals(res.code, 0, res.stderr);
        assertEquals(count(home, "workflow_runs"), before + 1);
        const key = ledger<{ run_id: string }>(
          home,
          "SELECT run_id FROM idempotency_keys ORDER BY created_ms DESC LIMIT 1",
        );
        assertEquals(key.run_id, res.stdout.trim());
      } finally {
        proxy.close();
      }
    });

    await t.step(
      "webhooks: a delivery replayed with a new delivery id is a duplicate, also after a restart",
      async () => {
        const body = JSON.stringify({ ref: "main", after: "abc123" });
        const signature = `sha256=${createHmac("sha256", HOOK_SECRET).update(body).digest("hex")}`;
        const deliver = (delivery: string, b = body, sig = signature) =>
          fetch(`${serve.url}/api/v1/hooks/gh`, {
            method: "POST",
            headers: { "x-hub-signature-256": sig, "x-github-delivery": delivery },
            body: b,
          });
        const runs = count(home, "workflow_runs");
        const events = count(home, "events");
        const first = await deliver("d-1");
        assertEquals(first.status, 201);
        const event = (await first.json()).event;
        assertEquals(count(home, "workflow_runs"), runs + 1, "the hook's event triggered hello once");
        for (const delivery of ["d-2", "d-1"]) {
          const replay = await deliver(delivery);
          assertEquals(replay.status, 200);
          const answer = await replay.json();
          assertEquals([answer.duplicate, answer.event.id], [true, event.id]);
        }
        // The same delivery id with another (validly signed) body is the same delivery too.
        const other = JSON.stringify({ ref: "main", after: "def456" });
        const otherSig = `sha256=${createHmac("sha256", HOOK_SECRET).update(other).digest("hex")}`;
        assertEquals((await (await deliver("d-1", other, otherSig)).json()).duplicate, true);
        assertEquals([count(home, "events"), count(home, "workflow_runs")], [events + 1, runs + 1]);

        await serve.stop();
        serve = await startServe({ env: home.env, home: home.home });
        const afterRestart = await deliver("d-3");
        assertEquals([afterRestart.status, (await afterRestart.json()).duplicate], [200, true]);
        const fresh = await deliver("d-4", other, otherSig);
        assertEquals(fresh.status, 201);
        await fresh.body?.cancel();
        assertEquals([count(home, "events"), count(home, "workflow_runs")], [events + 2, runs + 2]);
      },
    );
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("idempotency: embedded mode (no server) honours --idempotency-key", async () => {
  const home = await tempHome();
  home.writeConfig("sandbox:\n  enabled: false\n");
  const file = home.path("hello.workflow.yaml");
  Deno.writeTextFileSync(file, WORKFLOW);
  try {
    const args = ["workflow", "run", file, "--idempotency-key", "nightly-1", "--json"];
    const a = await runStn(args, { env: home.env });
    const b = await runStn(args, { env: home.env });
    assertEquals([a.code, b.code], [0, 0], a.stderr + b.stderr);
    assertEquals(JSON.parse(b.stdout).id, JSON.parse(a.stdout).id);
    assertEquals(count(home, "workflow_runs"), 1);
  } finally {
    await home.cleanup();
  }
});

Deno.test("idempotency: kill -9 while 100 keyed starts are being answered, all retried after the restart: one run per key", async () => {
  const home = await tempHome();
  home.writeConfig("sandbox:\n  enabled: false\n");
  Deno.mkdirSync(home.path("environments", "default", "workflows"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments", "default", "workflows", "hello.workflow.yaml"), WORKFLOW);
  let serve = await startServe({ env: home.env, home: home.home });
  try {
    const keys = Array.from({ length: 100 }, (_, i) => `crash-${i}`);
    let answered = 0;
    const firstTries = keys.map((key) =>
      start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" }, key).then(
        (res) => (answered++, res.body?.cancel()),
        () => {}, // cut off by the kill
      )
    );
    assert(await waitFor(() => answered >= 1, 30_000));
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    await Promise.all(firstTries);
    // Whatever the kill cut off (created runs whose answers were lost, starts not yet written): every run
    // has its key and every key its run.
    const runs = count(home, "workflow_runs");
    const paired = ledger<{ n: number }>(
      home,
      "SELECT COUNT(*) AS n FROM idempotency_keys k JOIN workflow_runs r ON r.id = k.run_id",
    ).n;
    assertEquals([count(home, "idempotency_keys"), paired], [runs, runs]);

    serve = await startServe({ env: home.env, home: home.home });
    const ids = new Set<string>();
    for (const key of keys) {
      const res = await start(serve.url, "/api/v1/workflow-runs", { workflowId: "hello" }, key);
      assertEquals(res.status, 201);
      ids.add((await res.json()).id);
    }
    assertEquals([ids.size, count(home, "workflow_runs"), count(home, "idempotency_keys")], [100, 100, 100]);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
