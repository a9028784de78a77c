import { join } from "node:path";
import type { Toolbox } from "../../src/agents/types.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { StationError } from "../../src/errors.ts";
import { openMcpToolbox, syncMcpServers } from "../../src/mcp/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type HttpMcpServer, startHttpMcpServer } from "../helpers/mcp_http_server.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";

/** An environment with the stdio test server (`local`), a second one (`spare`, prefix z_) and the HTTP one. */
interface Env {
  dir: string;
  db: Database;
  http: HttpMcpServer;
  cancelLog: string;
  spareStarts: string;
  close(): Promise<void>;
}

async function syncedEnv(): Promise<Env> {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-box-" });
  const db = openDatabase(join(dir, "station.db"));
  const http = await startHttpMcpServer({ prefix: "h_" });
  const cancelLog = join(dir, "cancelled.log");
  const spareStarts = join(dir, "spare-started.log");
  await Deno.writeTextFile(join(dir, "variables.yml"), `CANCEL_LOG: ${cancelLog}\n`);
  await Deno.writeTextFile(
    join(dir, "servers.json"),
    JSON.stringify({
      mcpServers: {
        local: stdioServerEntry({ env: { MCP_TEST_CANCEL_LOG: "{{ .CANCEL_LOG }}" } }),
        spare: stdioServerEntry({ prefix: "z_", env: { MCP_TEST_START_LOG: spareStarts } }),
        web: { url: http.url },
      },
    }),
  );
  const report = await syncMcpServers(db, { environment: "default", directory: dir }, {
    trust: true,
    timeoutMs: 15_000,
  });
  assertEquals(report.servers.map((s) => s.status), ["ok", "ok", "ok"]);
  await Deno.remove(spareStarts);
  return {
    dir,
    db,
    http,
    cancelLog,
    spareStarts,
    close: async () => {
      db.close();
      await http.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function tool(box: Toolbox, name: string) {
  const t = box.tools.find((x) => x.name === name);
  assert(t, `no tool ${name} in ${box.tools.map((x) => x.name)}`);
  return t;
}

const live = () => new AbortController().signal;

Deno.test("mcp toolbox: only the tools asked for, from only the servers offering them; calls, errors, big output, content", async () => {
  const env = await syncedEnv();
  const box = await openMcpToolbox(env.db, "default", [
    "__echo",
    "__fail",
    "__big",
    "__h_echo",
    "__mixed",
    "__pid",
  ]);
  try {
    assertEquals(box.tools.map((t) => t.name), ["__echo", "__fail", "__big", "__h_echo", "__mixed", "__pid"]);
    assertEquals(tool(box, "__echo").description, "Returns its arguments");
    assertEquals(tool(box, "__big").inputSchema.type, "object");
    // The spare server offers none of them: it was not started.
    assertEquals(await Deno.stat(env.spareStarts).then(() => true, () => false), false);

    assertEquals(JSON.parse(await tool(box, "__echo").call({ text: "hi", n: [1, 2] }, live())), {
      text: "hi",
      n: [1, 2],
    });
    assertEquals(JSON.parse(await tool(box, "__h_echo").call({ text: "over http" }, live())), {
      text: "over http",
    });

    const err = await tool(box, "__fail").call({ message: "the disk is full" }, live()).catch((e) => e);
    assert(err instanceof StationError, String(err));
    assertEquals([err.code, err.message], ["mcp_tool_error", "fail: the disk is full"]);

    const big = await tool(box, "__big").call({}, live());
    assertEquals(big.length, 102400); // whole: cutting it is the loop's job
    assertEquals(big.slice(-10), "abcdefghij");

    assertEquals(
      await tool(box, "__mixed").call({}, live()),
      'a chart:\n[image: image/png, 68 bytes]\n{"total":3}',
    );

    // close() stops the stdio server's process.
    const pid = Number(await tool(box, "__pid").call({}, live()));
    assert(await Deno.stat(`/proc/${pid}`).then(() => true, () => false), "server running");
    await box.close();
    assertEquals(await Deno.stat(`/proc/${pid}`).then(() => true, () => false), false);
  } finally {
    await box.close();
    await env.close();
  }
});

Deno.test("mcp toolbox: aborting a call cancels it on the server (stdio and HTTP) and rejects promptly", async () => {
  const env = await syncedEnv();
  const box = await openMcpToolbox(env.db, "default", ["__slow", "__was_cancelled", "__h_slow"]);
  try {
    for (const [name, tag] of [["__slow", "stdio-1"], ["__h_slow", "http-1"]]) {
      const ac = new AbortController();
      const call = tool(box, name).call({ tag }, ac.signal);
      setTimeout(() => ac.abort(new Error("run canceled")), 300);
      const started = Date.now();
      const err = await call.catch((e) => e);
      assert(err instanceof StationError, String(err));
      assertEquals(err.code, "canceled");
      assert(Date.now() - started < 5000, "rejected promptly, not after the tool's 60 s");
    }
    // The servers saw the cancellations (the stdio one wrote its log; the HTTP one counts). The
    // notifications travel on their own, so wait for them to land.
    const seen = async () =>
      (await Deno.readTextFile(env.cancelLog).catch(() => "")) !== "" && env.http.cancelled() > 0;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !(await seen());) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(await Deno.readTextFile(env.cancelLog), "cancelled slow stdio-1\n");
    assertEquals(await tool(box, "__was_cancelled").call({}, live()), "1");
    assertEquals(env.http.cancelled(), 1);
    // A signal already aborted never reaches the server.
    const gone = await tool(box, "__slow").call({}, AbortSignal.abort()).catch((e) => e);
    assert(gone instanceof Error);
    assertEquals(await tool(box, "__was_cancelled").call({}, live()), "1");
  } finally {
    await box.close();
    await env.close();
  }
});

Deno.test("mcp toolbox: unknown tools, an unapproved server, a config changed since sync and a variable gone are clear errors", async () => {
  const env = await syncedEnv();
  try {
    const unknown = await openMcpToolbox(env.db, "default", ["__echo", "__ecoh", "__nope"]).catch((e) => e);
    assert(unknown instanceof StationError);
    assertEquals(unknown.code, "mcp_tool_unknown");
    assertStringIncludes(unknown.message, "offers __ecoh, __nope (servers searched: local, spare, web)");
    assertEquals(unknown.hint, "did you mean __echo?");
    assertEquals((await openMcpToolbox(env.db, "default", [])).tools, []);

    // variables.yml lost CANCEL_LOG: rendering at connect time names the file and the variable.
    await Deno.writeTextFile(join(env.dir, "variables.yml"), "OTHER: 1\n");
    Deno.env.delete("CANCEL_LOG");
    const missing = await openMcpToolbox(env.db, "default", ["__echo"]).catch((e) => e);
    assert(missing instanceof StationError);
    assertEquals(missing.code, "mcp_variable_missing");
    assertStringIncludes(missing.message, `${join(env.dir, "servers.json")}:`);
    assertStringIncludes(missing.message, "{{ .CANCEL_LOG }}");
    // ... unless the caller gives the value.
    const box = await openMcpToolbox(env.db, "default", ["__echo"], {
      variables: { CANCEL_LOG: env.cancelLog },
    });
    await box.close();

    // A catalogue synced before approvals existed (an upgraded station), or an approval gone: the run
    // starts nothing and names the command that approves the server.
    env.db.exec("DELETE FROM mcp_approvals WHERE server = 'spare'");
    const untrusted = await openMcpToolbox(env.db, "default", ["__z_echo"]).catch((e) => e);
    assert(untrusted instanceof StationError);
    assertEquals(untrusted.code, "mcp_server_untrusted");
    assertStringIncludes(untrusted.hint!, "stn mcp approve spare --env default");
    assertEquals(await Deno.stat(env.spareStarts).then(() => true, () => false), false);

    // The config file was edited after the sync: the run is told to sync first.
    await Deno.writeTextFile(join(env.dir, "servers.json"), JSON.stringify({ mcpServers: {} }));
    const changed = await openMcpToolbox(env.db, "default", ["__h_echo"]).catch((e) => e);
    assert(changed instanceof StationError);
    assertEquals(changed.code, "mcp_config_changed");
    assertStringIncludes(changed.hint!, "stn sync default");
  } finally {
    await env.close();
  }
});

Deno.test("mcp toolbox: a server that dies mid-run fails its calls with a clear error, and an aborted open is canceled", async () => {
  const env = await syncedEnv();
  try {
    const box = await openMcpToolbox(env.db, "default", ["__pid", "__echo"]);
    const pid = Number(await tool(box, "__pid").call({}, live()));
    Deno.kill(pid, "SIGKILL");
    const err = await tool(box, "__echo").call({ text: "anyone?" }, live()).catch((e) => e);
    assert(err instanceof StationError, String(err));
    assertEquals(err.code, "mcp_call_failed");
    await box.close();

    const canceled = await openMcpToolbox(env.db, "default", ["__z_echo"], { signal: AbortSignal.abort() })
      .catch((e) => e);
    assert(canceled instanceof StationError, String(canceled));
    assertEquals(canceled.code, "canceled");
  } finally {
    await env.close();
  }
});
