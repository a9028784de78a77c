import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertNotEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

/**
 * MCP pooling through the real `stn`: the example environment's filesystem server from npm (started by npx)
 * under `stn serve`, the file auditor run again and again through the CLI. The server's processes are
 * counted in /proc by the folder they serve (unique to this test): the runs share one set, killing it
 * makes the next run start a new one, a sync that changes its config replaces it, and `per_run: true`
 * starts and stops one per run.
 */

const EXAMPLE = fileURLToPath(new URL("../../examples/environments/default", import.meta.url));
const FS_JSON = JSON.parse(Deno.readTextFileSync(`${EXAMPLE}/fs.json`));

/** The pids of processes whose command line names `needle` (the filesystem server's root folder). */
function serverPids(needle: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.includes(needle) && cmd.includes("server-filesystem")) pids.push(Number(e.name));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids.sort((a, b) => a - b);
}

Deno.test("e2e: agent runs share the npm filesystem MCP server; death, a config change and per_run: true", async () => {
  const model = startModelServer();
  const home = await tempHome();
  const root = home.path("audited");
  Deno.mkdirSync(root);
  Deno.writeTextFileSync(`${root}/notes.txt`, "nothing secret\n");
  home.writeConfig(
    `ai:\n  provider: openai\n  model: openai/test-model\n  base_url: ${model.url}\n  api_key: sk-test\n` +
      `sandbox:\n  enabled: false\n`,
  );
  const envDir = home.path("environments", "default");
  Deno.mkdirSync(`${envDir}/agents`, { recursive: true });
  Deno.copyFileSync(`${EXAMPLE}/agents/file-auditor.prompt`, `${envDir}/agents/file-auditor.prompt`);
  Deno.writeTextFileSync(`${envDir}/variables.yml`, `ROOT: ${root}\n`);
  const writeFsJson = (extra: Record<string, unknown>) =>
    Deno.writeTextFileSync(
      `${envDir}/fs.json`,
      JSON.stringify({ ...FS_JSON, mcpServers: { fs: { ...FS_JSON.mcpServers.fs, ...extra } } }),
    );
  writeFsJson({});
  const answer = { summary: "Fine.", severity: "low", findings: [] };
  model.route((r) =>
    r.body.messages.some((m: { role: string }) => m.role === "tool")
      ? { text: JSON.stringify(answer) }
      : { calls: [{ name: "__list_allowed_directories", args: {} }] }
  );

  const serve = await startServe({ env: home.env, home: home.home, timeoutMs: 60_000 });
  const env = { ...home.env, STATION_URL: serve.url };
  const stn = async (...args: string[]) => {
    const r = await runStn(args, { env });
    // The server's own log says why when it stopped answering.
    assertEquals(
      r.code,
      0,
      `stn ${args.join(" ")}: ${r.stderr}\nstn serve's log:\n${serve.stderr().slice(-4000)}`,
    );
    return r.stdout;
  };
  const audit = async () =>
    assertEquals(JSON.parse(await stn("agent", "run", "file-auditor", "Audit")), answer);
  try {
    await stn("sync", "--trust");
    assertEquals(serverPids(root), [], "sync's discovery stopped its server");

    await audit();
    const pooled = serverPids(root);
    assert(pooled.length > 0, "the server runs on after the run");
    for (let i = 0; i < 2; i++) await audit();
    assertEquals(serverPids(root), pooled, "later runs use the same processes");
    // Three runs at once: still the one server.
    await Promise.all([audit(), audit(), audit()]);
    assertEquals(serverPids(root), pooled);

    // Killed: the next run starts it again.
    for (const pid of pooled) Deno.kill(pid, "SIGKILL");
    assert(await waitFor(() => serverPids(root).length === 0, 10_000), "the killed server is gone");
    await audit();
    const restarted = serverPids(root);
    assert(restarted.length > 0);
    assertNotEquals(restarted, pooled);

    // A config change synced: the next run gets a new process, the old one stops.
    writeFsJson({ env: { MARK: "v2" } });
    await stn("sync", "--trust");
    await audit();
    const changed = serverPids(root);
    assert(
      changed.length > 0 && changed.every((p) => !restarted.includes(p)),
      "new processes after the sync",
    );
    assert(await waitFor(() => restarted.every((p) => !serverPids(root).includes(p)), 10_000), "old stopped");

    // per_run: true — each run starts its own server and stops it at its end.
    writeFsJson({ env: { MARK: "v2" }, per_run: true });
    await stn("sync");
    await audit();
    assert(await waitFor(() => serverPids(root).length === 0, 10_000), "per_run: nothing runs after the run");
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
  assertEquals(serverPids(root), [], "stopping the station stopped the servers");
});
