import { cp } from "node:fs/promises";
import { StationClient } from "../../src/client/http.ts";
import { getRun, listApprovals } from "../../src/client/workflow_runs.ts";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../sandbox/backend.ts";

/**
 * examples/environments/default end to end: copied into a fresh STATION_HOME, `ai.base_url` at the
 * scripted model server, synced (the filesystem MCP server from npm, started by npx, discovered), each
 * agent run once through the real `stn` CLI, and the workflow run through its approval to the end.
 * The agents' tools are real: the npm filesystem server reads a real folder, the sandbox is Docker.
 */

const EXAMPLE = fileURLToPath(new URL("../../examples/environments/default", import.meta.url));

const systemOf = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");
const toolResults = (r: ModelRequest) =>
  r.body.messages.filter((m: { role: string }) => m.role === "tool").map((m: { content: string }) =>
    m.content
  );

Deno.test("e2e: the example environment synced and run end to end (three agents, the workflow through approval)", async () => {
  const model = startModelServer();
  const home = await tempHome();
  const audited = home.path("audited");
  Deno.mkdirSync(audited);
  Deno.writeTextFileSync(`${audited}/service.env`, "API_KEY=hunter2\n");
  home.writeConfig(
    `ai:\n  provider: openai\n  model: openai/test-model\n  base_url: ${model.url}\n  api_key: sk-test\n` +
      SANDBOX_CONFIG,
  );
  const envDir = home.path("environments", "default");
  await cp(EXAMPLE, envDir, { recursive: true });
  // The folder the filesystem server may read: the test's, not the example's /tmp.
  Deno.writeTextFileSync(`${envDir}/variables.yml`, `ROOT: ${audited}\n`);

  const findings = {
    summary: "A key sits in plain text.",
    severity: "high",
    findings: [{ path: "service.env", issue: "plaintext API key" }],
  };
  model.route((r) => {
    const system = systemOf(r);
    const results = toolResults(r);
    if (system.includes("You audit a folder")) {
      return results.length === 0
        ? { calls: [{ name: "__read_text_file", args: { path: `${audited}/service.env` } }] }
        : { text: JSON.stringify(findings) };
    }
    if (system.includes("You answer questions about numbers")) {
      return results.length === 0
        ? { calls: [{ name: "sandbox_exec", args: { cmd: ["python3", "-c", "print(2 + 3)"] } }] }
        : { text: JSON.stringify({ answer: "5", method: "python printed 2 + 3" }) };
    }
    return { text: "All clear: one key to rotate." };
  });

  const serve = await startServe({ env: home.env, home: home.home, timeoutMs: 60_000 });
  const env = { ...home.env, STATION_URL: serve.url };
  const transcript: string[] = [];
  const stn = async (...args: string[]) => {
    const r = await runStn(args, { env });
    transcript.push(`$ stn ${args.map((a) => (/[\s"{]/.test(a) ? `'${a}'` : a)).join(" ")}`, r.stdout.trim());
    assertEquals(r.code, 0, `stn ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  try {
    // `stn serve` synced the environment at start; `stn sync --trust` (as the README tour runs it)
    // approves the example's MCP server and reports it all in place, the npm filesystem server's tools
    // discovered (npx starts it; cached after the first fetch).
    const synced = await stn("sync", "--trust");
    assertStringIncludes(synced, "mcp server fs (stdio): 14 tool(s)");
    assertStringIncludes(synced, "agents: 0 created, 0 updated, 6 unchanged, 0 deleted, 0 invalid");
    assertStringIncludes(synced, "audit-and-report");
    const agents = await stn("agent", "list");
    for (const name of ["assistant", "data-analyst", "file-auditor"]) assertStringIncludes(agents, name);

    const answer = await stn("agent", "run", "assistant", "Is the station healthy?");
    assertEquals(answer.trim(), "All clear: one key to rotate.");

    const audit = JSON.parse(
      await stn("agent", "run", "file-auditor", "Audit the folder", "--var", "focus=secrets"),
    );
    assertEquals(audit, findings);
    // The real filesystem server read the real file: its content went back to the model.
    const auditor = model.requests.filter((r) => systemOf(r).includes("You audit a folder"));
    assertStringIncludes(toolResults(auditor[1])[0], "API_KEY=hunter2");
    assertStringIncludes(systemOf(auditor[0]), "Look for: secrets.");
    const offered = auditor[0].body.tools.map((t: { function: { name: string } }) => t.function.name).sort();
    assertEquals(offered, [
      "__directory_tree",
      "__get_file_info",
      "__list_allowed_directories",
      "__list_directory",
      "__read_text_file",
      "__search_files",
    ]);

    const analysis = JSON.parse(await stn("agent", "run", "data-analyst", "What is 2 + 3?"));
    assertEquals(analysis.answer, "5");
    const analyst = model.requests.filter((r) => systemOf(r).includes("You answer questions about numbers"));
    assertEquals(JSON.parse(toolResults(analyst[1])[0]).stdout.trim(), "5", "python ran in the sandbox");

    // The workflow: audit (high) → switch → approval → quantify (sandbox) → summarize.
    const runId = (await stn("workflow", "run", "audit-and-report", "--input", '{"focus": "secrets"}'))
      .trim();
    // Polled over the API (a CLI process per poll is slow on a loaded machine); decided through the CLI.
    const client = new StationClient(serve.url);
    let approvalId = "";
    let status = "running";
    await waitFor(async () => {
      approvalId = (await listApprovals(client, { run_id: runId }))[0]?.id ?? "";
      status = (await getRun(client, runId)).status;
      return approvalId !== "" || !["running", "waiting"].includes(status);
    }, 60_000);
    if (!approvalId) {
      const inspect = await runStn(["workflow", "inspect", runId], { env });
      throw new Error(`the run did not wait for approval (${status}):\n${inspect.stdout}${inspect.stderr}`);
    }
    await stn("workflow", "approvals", "list", "--run", runId);
    await stn("workflow", "approvals", "approve", approvalId, "--comment", "go ahead");
    assert(
      await waitFor(
        async () => !["running", "waiting"].includes((await getRun(client, runId)).status),
        90_000,
      ),
      "the run ends",
    );
    const inspect = await stn("workflow", "inspect", runId);
    assertStringIncludes(inspect, "completed");
    for (const step of ["audit", "approve", "quantify", "summarize"]) assertStringIncludes(inspect, step);
    const summarize = model.requests.filter((r) => systemOf(r).includes("concise assistant")).at(-1)!;
    assertStringIncludes(JSON.stringify(summarize.body.messages), "Severity: high. Follow-up: 5");
    console.log(transcript.join("\n"));
  } finally {
    await serve.stop();
    await model.close();
    await removeStationContainers(home.path("stn.db")).catch(() => {});
    await home.cleanup();
  }
});
