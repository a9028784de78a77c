import { removeStationContainers, SANDBOX_CONFIG } from "../sandbox/backend.ts";
import { assertEquals } from "../helpers/assert.ts";
import { connectHttp, startMcpStation, toolJson } from "./helpers.ts";
import { call } from "./scenario.ts";

Deno.test("mcp: the sandbox tools are the model tools, called through the API", async () => {
  const s = await startMcpStation({ configYaml: SANDBOX_CONFIG });
  const client = await connectHttp(s.mcpUrl);
  try {
    const once = await call(client, "sandbox_run", { code: "echo hi from $0; exit 3", runtime: "sh" });
    assertEquals([once.exit_code, once.stdout.trim().startsWith("hi from")], [3, true]);

    const { sandbox_id } = await call(client, "sandbox_open", { runtime: "sh" });
    await call(client, "sandbox_fs_write", { sandbox_id, path: "notes/a.txt", contents: "kept\n" });
    const exec = await call(client, "sandbox_exec", { sandbox_id, cmd: "cat notes/a.txt" });
    assertEquals(exec.stdout, "kept\n");
    assertEquals(
      (await call(client, "sandbox_fs_read", { sandbox_id, path: "notes/a.txt" })).contents,
      "kept\n",
    );
    const published = await call(client, "sandbox_publish_file", { sandbox_id, source: "notes/a.txt" });
    assertEquals((await call(client, "download_file", { key: published.file_key })).content, "kept\n");
    await call(client, "sandbox_close", { sandbox_id });

    // The tool's own checks answer, as they do a model: bad input, a closed sandbox.
    const bad = await client.callTool({ name: "sandbox_exec", arguments: { sandbox_id: "nope", cmd: "ls" } });
    assertEquals([bad.isError, toolJson(bad).error.code], [true, "invalid_request"]);
    const closed = await client.callTool({ name: "sandbox_exec", arguments: { sandbox_id, cmd: "ls" } });
    assertEquals(toolJson(closed).error.code, "sandbox_closed");
    // The route behind them refuses an unknown tool by name.
    const res = await fetch(`${s.station.url}/api/v1/sandbox/tools/sandbox_teleport`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assertEquals([res.status, (await res.json()).error.code], [404, "tool_not_found"]);
  } finally {
    await client.close();
    await removeStationContainers(s.home.path("stn.db")).catch(() => {});
    await s.close();
  }
});
