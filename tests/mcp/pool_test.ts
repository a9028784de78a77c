import { join } from "node:path";
import type { Toolbox } from "../../src/agents/types.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { StationError } from "../../src/errors.ts";
import { McpPool, openMcpToolbox, syncMcpServers } from "../../src/mcp/mod.ts";
import { processAlive, waitFor } from "../helpers/stn.ts";
import { assert, assertEquals, assertNotEquals, assertStringIncludes } from "../helpers/assert.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";

/**
 * The MCP pool with the tests' stdio server (a real child process): runs share one process, it is stopped
 * when idle, restarted after it dies (the call in flight failing clearly), kept per run with `per_run`,
 * replaced when a sync changes its config; cancelling one run's call reaches only that call.
 */

interface Env {
  dir: string;
  db: Database;
  starts: string;
  cancelLog: string;
  writeConfig(extra?: Record<string, unknown>): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

async function syncedEnv(entry: Record<string, unknown> = {}): Promise<Env> {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-pool-" });
  const db = openDatabase(join(dir, "station.db"));
  const starts = join(dir, "starts.log");
  const cancelLog = join(dir, "cancelled.log");
  const writeConfig = async (extra: Record<string, unknown> = {}) => {
    const local = stdioServerEntry({ env: { MCP_TEST_START_LOG: starts, MCP_TEST_CANCEL_LOG: cancelLog } });
    await Deno.writeTextFile(
      join(dir, "servers.json"),
      JSON.stringify({ mcpServers: { local: { ...local, ...entry, ...extra } } }),
    );
  };
  const sync = async () => {
    const report = await syncMcpServers(db, { environment: "default", directory: dir }, {
      trust: true,
      timeoutMs: 15_000,
    });
    assertEquals(report.servers.map((s) => s.status), ["ok"]);
  };
  await writeConfig();
  await sync();
  await Deno.remove(starts);
  return {
    dir,
    db,
    starts,
    cancelLog,
    writeConfig,
    sync,
    close: async () => {
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const live = () => new AbortController().signal;
const startCount = async (env: Env) =>
  (await Deno.readTextFile(env.starts).catch(() => "")).split("\n").filter(Boolean).length;

async function pidOf(box: Toolbox): Promise<number> {
  return Number(await box.tools.find((t) => t.name === "__pid")!.call({}, live()));
}

function call(box: Toolbox, name: string, args: unknown, signal = live()): Promise<string> {
  return box.tools.find((t) => t.name === name)!.call(args, signal);
}

Deno.test("mcp pool: runs share one server process, which stops after the idle timeout and starts again on use", async () => {
  const env = await syncedEnv();
  const pool = new McpPool({ max: 1, idleMs: 300 });
  try {
    const open = () => openMcpToolbox(env.db, "default", ["__pid", "__echo"], { pool });
    const boxes = await Promise.all([open(), open(), open()]);
    const pids = await Promise.all(boxes.map(pidOf));
    assertEquals(new Set(pids).size, 1, "one process for three runs");
    assertEquals(await startCount(env), 1);
    assertEquals(pool.counts(), { "default/local": 1 });
    // Concurrent calls of different runs on the one connection each get their own answer.
    const answers = await Promise.all(boxes.map((b, i) => call(b, "__echo", { run: i })));
    assertEquals(answers.map((a) => JSON.parse(a).run), [0, 1, 2]);

    // A run that ends releases its lease; the server outlives it while another run holds one.
    await boxes[0].close();
    const later = await open();
    assertEquals(await pidOf(later), pids[0]);
    for (const b of [...boxes, later]) await b.close();

    // No lease: the server stops after the idle timeout; the next run starts a new one.
    assert(await waitFor(() => !processAlive(pids[0]), 20_000), "the idle server stopped");
    assertEquals(pool.counts(), {});
    const again = await open();
    assertNotEquals(await pidOf(again), pids[0]);
    assertEquals(await startCount(env), 2);
    await again.close();
  } finally {
    await pool.close();
    await env.close();
  }
});

Deno.test("mcp pool: a server that dies fails the call in flight clearly and is started again for the next call", async () => {
  const env = await syncedEnv();
  const pool = new McpPool({ max: 1, idleMs: 60_000 });
  const box = await openMcpToolbox(env.db, "default", ["__pid", "__slow", "__echo"], { pool });
  try {
    const pid = await pidOf(box);
    const inFlight = call(box, "__slow", { ms: 60_000 }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 200));
    Deno.kill(pid, "SIGKILL");
    const err = await inFlight;
    assert(err instanceof StationError, String(err));
    assertEquals(err.code, "mcp_call_failed");
    assertStringIncludes(err.message, "MCP server local stopped during the call");
    assertStringIncludes(err.hint ?? "", "not repeated");
    // The same run's next call restarts it.
    assertEquals(JSON.parse(await call(box, "__echo", { after: "death" })), { after: "death" });
    const restarted = await pidOf(box);
    assertNotEquals(restarted, pid);
    assertEquals(await startCount(env), 2);
  } finally {
    await box.close();
    await pool.close();
    await env.close();
  }
});

Deno.test("mcp pool: per_run: true keeps a process per run, stopped when the run ends", async () => {
  const env = await syncedEnv({ per_run: true });
  const pool = new McpPool({ max: 1, idleMs: 60_000 });
  try {
    const a = await openMcpToolbox(env.db, "default", ["__pid"], { pool });
    const b = await openMcpToolbox(env.db, "default", ["__pid"], { pool });
    const [pa, pb] = [await pidOf(a), await pidOf(b)];
    assertNotEquals(pa, pb);
    assertEquals(pool.counts(), {});
    await a.close();
    assertEquals(processAlive(pa), false);
    await b.close();
    assertEquals(processAlive(pb), false);
  } finally {
    await pool.close();
    await env.close();
  }
});

Deno.test("mcp pool: a sync that changes the server's config starts a new process; the old one stops with its last run", async () => {
  const env = await syncedEnv();
  const pool = new McpPool({ max: 1, idleMs: 60_000 });
  try {
    const before = await openMcpToolbox(env.db, "default", ["__pid", "__env"], { pool });
    const oldPid = await pidOf(before);
    await env.writeConfig({ env: { MCP_TEST_START_LOG: env.starts, MARK: "v2" } });
    // Changed but not synced: refused, as without a pool.
    const unsynced = await openMcpToolbox(env.db, "default", ["__pid"], { pool }).catch((e) => e);
    assertEquals((unsynced as StationError).code, "mcp_config_changed");
    await env.sync();
    const after = await openMcpToolbox(env.db, "default", ["__pid", "__env"], { pool });
    const newPid = await pidOf(after);
    assertNotEquals(newPid, oldPid);
    assertEquals(await call(after, "__env", { name: "MARK" }), "v2");
    // The run that began before the sync keeps its server until it ends.
    assertEquals(await pidOf(before), oldPid);
    await before.close();
    assert(await waitFor(() => !processAlive(oldPid), 10_000), "the old server stopped");
    assertEquals(processAlive(newPid), true);
    await after.close();
  } finally {
    await pool.close();
    await env.close();
  }
});

Deno.test("mcp pool: cancelling one run's call cancels that request only; the shared server serves the other", async () => {
  const env = await syncedEnv();
  const pool = new McpPool({ max: 1, idleMs: 60_000 });
  const [a, b] = await Promise.all([
    openMcpToolbox(env.db, "default", ["__slow", "__was_cancelled"], { pool }),
    openMcpToolbox(env.db, "default", ["__slow"], { pool }),
  ]);
  try {
    const ac = new AbortController();
    const canceled = call(a, "__slow", { tag: "run-a", ms: 60_000 }, ac.signal).catch((e) => e);
    const other = call(b, "__slow", { tag: "run-b", ms: 1500 });
    await new Promise((r) => setTimeout(r, 300));
    ac.abort(new Error("run a canceled"));
    assertEquals((await canceled).code, "canceled");
    assertEquals(await other, "finished");
    await waitFor(async () => (await Deno.readTextFile(env.cancelLog).catch(() => "")) !== "", 10_000);
    assertEquals(await Deno.readTextFile(env.cancelLog), "cancelled slow run-a\n");
    assertEquals(await call(a, "__was_cancelled", {}), "1");
  } finally {
    await a.close();
    await b.close();
    await pool.close();
    await env.close();
  }
});

Deno.test("mcp pool: with pool_max 2 a second process starts only while the first is busy; approval still gates a lease", async () => {
  const env = await syncedEnv();
  const pool = new McpPool({ max: 2, idleMs: 60_000 });
  const box = await openMcpToolbox(env.db, "default", ["__pid", "__slow"], { pool });
  try {
    const first = await pidOf(box);
    assertEquals(await pidOf(box), first, "idle: the one process answers");
    const busy = call(box, "__slow", { ms: 3000 });
    await new Promise((r) => setTimeout(r, 200));
    const second = await pidOf(box);
    assertNotEquals(second, first);
    assertEquals(await busy, "finished");
    assertEquals(pool.counts(), { "default/local": 2 });

    env.db.prepare("DELETE FROM mcp_approvals").run();
    const refused = await openMcpToolbox(env.db, "default", ["__pid"], { pool }).catch((e) => e);
    assertEquals((refused as StationError).code, "mcp_server_untrusted");
  } finally {
    await box.close();
    await pool.close();
    await env.close();
  }
});
