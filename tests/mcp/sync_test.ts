import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { StationError } from "../../src/errors.ts";
import {
  knownMcpTools,
  listMcpServers,
  listMcpTools,
  openMcpToolbox,
  syncMcpServers,
} from "../../src/mcp/mod.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { startHttpMcpServer } from "../helpers/mcp_http_server.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";

const TOOLS = ["big", "echo", "env", "fail", "mixed", "pid", "slow", "was_cancelled"];
const exposed = (prefix = "") => TOOLS.map((t) => `__${prefix}${t}`);

async function write(dir: string, name: string, value: unknown): Promise<void> {
  await Deno.mkdir(join(dir, name, ".."), { recursive: true });
  await Deno.writeTextFile(
    join(dir, name),
    typeof value === "string" ? value : JSON.stringify(value, null, 2),
  );
}

/** Every byte of the ledger (the database file and its write-ahead log) as text. */
async function ledgerBytes(dbFile: string): Promise<string> {
  let all = "";
  for (const f of [dbFile, `${dbFile}-wal`]) {
    all += await Deno.readFile(f).then((b) => new TextDecoder("latin1").decode(b), () => "");
  }
  return all;
}

Deno.test("mcp sync: tools discovered over stdio and HTTP, a failing server reported alone, secrets kept out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-sync-" });
  const dbFile = join(dir, "station.db");
  const db = openDatabase(dbFile);
  const http = await startHttpMcpServer({ prefix: "h_" });
  const SECRET = "tok-3f9a1c7e-stdio";
  const HTTP_SECRET = "tok-77b2e0d4-http";
  Deno.env.set("STN_TEST_MCP_HTTP_TOKEN", HTTP_SECRET);
  try {
    await write(dir, "variables.yml", `API_TOKEN: ${SECRET}\nHTTP_URL: ${http.url}\n`);
    await write(dir, "local.json", {
      mcpServers: { local: stdioServerEntry({ env: { API_TOKEN: "{{ .API_TOKEN }}" } }) },
    });
    await write(dir, "mcp-configs/remote.json", {
      mcpServers: {
        remote: {
          url: "{{ .HTTP_URL }}",
          headers: { Authorization: "Bearer {{ .STN_TEST_MCP_HTTP_TOKEN }}" },
        },
        // Prints its secret to stderr and exits: the report shows the stderr, masked.
        crashing: {
          command: Deno.execPath(),
          args: ["eval", "console.error('bad start, token=' + Deno.env.get('API_TOKEN')); Deno.exit(3)"],
          env: { API_TOKEN: "{{ .API_TOKEN }}" },
        },
        missing: { command: "x", args: ["{{ .STN_TEST_MCP_UNSET_VAR }}"] },
      },
    });

    const report = await syncMcpServers(db, { environment: "default", directory: dir }, {
      trust: true,
      timeoutMs: 20_000,
    });
    const byName = Object.fromEntries(report.servers.map((s) => [s.name, s]));
    assertEquals(byName.local.status, "ok");
    assertEquals(byName.local.tools, exposed());
    assertEquals(byName.remote.status, "ok");
    assertEquals(byName.remote.tools, [...exposed("h_"), "__h_header"].sort());
    assertEquals(byName.crashing.status, "failed");
    assertEquals(byName.crashing.error?.code, "mcp_connect_failed");
    assertStringIncludes(byName.crashing.error!.message, "bad start, token=********");
    assertEquals(byName.missing.error?.code, "mcp_variable_missing");
    assertStringIncludes(byName.missing.error!.message, "remote.json");
    assertStringIncludes(byName.missing.error!.message, "STN_TEST_MCP_UNSET_VAR");
    assertEquals(report.errors, []);

    // The catalogue: descriptions and schemas as the servers listed them; what agent validation reads.
    const echo = listMcpTools(db, "default").find((t) => t.exposed_name === "__echo")!;
    assertEquals([echo.server, echo.name, echo.description], ["local", "echo", "Returns its arguments"]);
    assertEquals(echo.input_schema.type, "object");
    const known = knownMcpTools(db, "default");
    assertEquals(known.get("__echo"), "local");
    assertEquals(known.get("__h_header"), "remote");
    assertEquals(known.size, TOOLS.length * 2 + 1);
    const crashing = listMcpServers(db, "default").find((s) => s.name === "crashing")!;
    assertEquals([crashing.error?.code, crashing.discovered_at], ["mcp_connect_failed", null]);

    // The secrets reached the servers ...
    const box = await openMcpToolbox(db, "default", ["__env", "__h_header"], { timeoutMs: 10_000 });
    try {
      const call = (name: string, args: unknown) =>
        box.tools.find((t) => t.name === name)!.call(args, new AbortController().signal);
      assertEquals(await call("__env", { name: "API_TOKEN" }), SECRET);
      assertEquals(await call("__h_header", { name: "authorization" }), `Bearer ${HTTP_SECRET}`);
    } finally {
      await box.close();
    }
    // ... and are neither in the report nor in the ledger, which keeps the placeholders.
    const text = JSON.stringify(report) + JSON.stringify(listMcpServers(db, "default"));
    for (const s of [SECRET, HTTP_SECRET]) assert(!text.includes(s), `${s} in the report`);
    db.close();
    const ledger = await ledgerBytes(dbFile);
    assertStringIncludes(ledger, "{{ .API_TOKEN }}");
    for (const s of [SECRET, HTTP_SECRET]) assert(!ledger.includes(s), `${s} in the ledger`);
  } finally {
    Deno.env.delete("STN_TEST_MCP_HTTP_TOKEN");
    try {
      db.close();
    } catch { /* closed above */ }
    await http.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp sync: a tool offered by two servers is an error naming both; removed configs remove their tools", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-sync-" });
  const db = openDatabase(join(dir, "station.db"));
  const http = await startHttpMcpServer({ prefix: "h_" });
  try {
    await write(dir, "a.json", { mcpServers: { one: stdioServerEntry() } });
    await write(dir, "mcp-configs/b.json", { mcpServers: { two: stdioServerEntry() } });
    await write(dir, "mcp-configs/c.json", { mcpServers: { web: { url: http.url } } });
    const first = await syncMcpServers(db, { environment: "dup", directory: dir }, {
      trust: true,
      timeoutMs: 15_000,
    });
    assertEquals(first.servers.map((s) => s.status), ["ok", "ok", "ok"]);
    const conflicts = first.errors.filter((e) => e.code === "mcp_tool_conflict");
    assertEquals(conflicts.length, TOOLS.length);
    assertMatch(
      conflicts[0].message,
      /^tool __big is offered by servers one \(.*a\.json\) and two \(.*b\.json\)$/,
    );
    // Ambiguous names are not offered to agents, and a run asking for one is told why.
    const known = knownMcpTools(db, "dup");
    assertEquals([known.has("__echo"), known.get("__h_echo")], [false, "web"]);
    const err = await openMcpToolbox(db, "dup", ["__echo"]).catch((e) => e);
    assert(err instanceof StationError);
    assertEquals(err.code, "mcp_tool_conflict");
    assertStringIncludes(err.message, "one and two");

    // Server two's file goes, then server web's entry goes from its file: their tools go with them.
    await Deno.remove(join(dir, "mcp-configs/b.json"));
    await write(dir, "mcp-configs/c.json", { mcpServers: {} });
    const second = await syncMcpServers(db, { environment: "dup", directory: dir }, {
      trust: true,
      timeoutMs: 15_000,
    });
    assertEquals([second.removed.sort(), second.errors], [["two", "web"], []]);
    assertEquals(listMcpServers(db, "dup").map((s) => s.name), ["one"]);
    assertEquals(listMcpTools(db, "dup").map((t) => t.exposed_name), exposed());
    assertEquals(knownMcpTools(db, "dup").get("__echo"), "one");

    // A server that fails keeps the tools found before; a malformed file keeps its servers as stored.
    await write(dir, "mcp-configs/c.json", { mcpServers: { web: { url: http.url } } });
    await syncMcpServers(db, { environment: "dup", directory: dir }, { trust: true, timeoutMs: 15_000 });
    await http.close();
    await write(dir, "a.json", '{"mcpServers": {"one": ');
    const third = await syncMcpServers(db, { environment: "dup", directory: dir }, {
      trust: true,
      timeoutMs: 3_000,
    });
    assertEquals(third.removed, []);
    assertEquals(third.errors.map((e) => [e.code, e.line]), [["mcp_config_invalid", 1]]);
    const web = third.servers.find((s) => s.name === "web")!;
    assertEquals([web.status, web.tools.length], ["failed", TOOLS.length + 1]);
    assertEquals(listMcpServers(db, "dup").map((s) => s.name), ["one", "web"]);
    // A malformed variables.yml is the file's own error, with its line once; no server is started.
    await write(dir, "variables.yml", "A: 1\nB: [2]\n");
    const fourth = await syncMcpServers(db, { environment: "dup", directory: dir }, {
      trust: true,
      timeoutMs: 3_000,
    });
    assertEquals(fourth.errors.filter((e) => e.code !== "mcp_config_invalid"), [{
      file: join(dir, "variables.yml"),
      line: 2,
      code: "variables_invalid",
      message: "B: expected a single value, not a list or map",
      hint: "variables.yml is a flat map of NAME: value lines, e.g. `GITHUB_TOKEN: ghp_…`",
    }]);
    assertEquals(fourth.servers.map((s) => [s.name, s.error?.code]), [["web", "variables_invalid"]]);
    // Another environment's catalogue is its own.
    assertEquals(knownMcpTools(db, "other").size, 0);
  } finally {
    db.close();
    await http.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp sync: a server that never answers is time-boxed and reported as mcp_timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-sync-" });
  const db = openDatabase(join(dir, "station.db"));
  try {
    await write(dir, "slow.json", { mcpServers: { hanging: { command: "sleep", args: ["30"] } } });
    const started = Date.now();
    const report = await syncMcpServers(db, { environment: "default", directory: dir }, {
      trust: true,
      timeoutMs: 500,
    });
    assertEquals(report.servers.map((s) => [s.name, s.status, s.error?.code]), [[
      "hanging",
      "failed",
      "mcp_timeout",
    ]]);
    assertStringIncludes(
      report.servers[0].error!.message,
      "did not answer the initialize handshake within 500 ms",
    );
    assert(Date.now() - started < 10_000, "the sync did not wait for the server's 30 s");
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
