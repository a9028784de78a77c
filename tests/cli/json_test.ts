import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../sandbox/backend.ts";
import { buildProgram } from "../../src/cli/main.ts";
import { stationHome } from "../helpers/station_home.ts";
import { sampleEvalRun } from "../helpers/eval_runs.ts";
import type { Command } from "../../src/cli/command.ts";

/** Every leaf command of the real command tree, as its path ("workflow approvals approve"). */
function leafCommands(cmd: Command, prefix = ""): string[] {
  return cmd.commands.flatMap((c) => {
    const path = prefix ? `${prefix} ${c.name()}` : c.name();
    return c.commands.length ? leafCommands(c, path) : [path];
  });
}

/** One row of the table: a command path, its further arguments, and whether it should succeed. */
interface Row {
  cmd: string;
  args?: () => string[];
  ok: boolean;
  /** The exit code expected on failure (1 unless said). */
  code?: number;
  /** `workflow logs --json` prints one object per line. */
  ndjson?: boolean;
  /** Receives the parsed output of a success, to remember ids for later rows. */
  // deno-lint-ignore no-explicit-any -- a command's JSON output, which rows read field by field
  keep?: (out: any) => void;
  /** Waits for what the row needs (a run's approval exists once its step has started). */
  before?: () => Promise<void>;
}

/** What --json must print: one JSON object; on failure exactly {"error": {code, message, …}}. */
// deno-lint-ignore no-explicit-any -- as `keep`'s argument
function checkJson(row: Row, args: string[], r: { code: number; stdout: string; stderr: string }): any {
  const what = `stn ${args.join(" ")} (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  const docs = row.ndjson
    ? r.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l))
    : [JSON.parse(r.stdout)];
  for (const doc of docs) assert(doc && typeof doc === "object" && !Array.isArray(doc), `an object: ${what}`);
  if (row.ok) {
    assertEquals(r.code, 0, what);
    for (const doc of docs) assert(!isError(doc), `no error object on success: ${what}`);
  } else {
    assertEquals(r.code, row.code ?? 1, what);
    const last = docs[docs.length - 1];
    assert(isError(last), `{"error": …} on failure: ${what}`);
    assertEquals(typeof last.error.message, "string", what);
    assert(r.stderr.includes(`error: ${last.error.message}`), `the human line stays on stderr: ${what}`);
  }
  return docs[0];
}

function isError(doc: { error?: { code?: unknown } }): boolean {
  return Object.keys(doc).length === 1 && typeof doc.error?.code === "string";
}

/** A recorded `stn faker` session (its file as `stn faker` writes it), for the session commands' rows. */
const FAKER_SESSION = "faker-20260101-000000-abcdef";

function fakerSession(dir: string): string {
  Deno.mkdirSync(dir, { recursive: true });
  const at = "2026-01-01T00:00:00.000Z";
  const lines = [
    {
      stn_faker_session: 1,
      id: FAKER_SESSION,
      mode: "passthrough",
      server: { command: "true", args: [], env_keys: [] },
      name: "stn-faker",
      started_at: at,
      tools: [{ name: "echo", description: "", input_schema: { type: "object" } }],
    },
    {
      call: {
        seq: 1,
        tool: "echo",
        args: {},
        at,
        duration_ms: 1,
        source: "real",
        answer: { content: [{ type: "text", text: "hi" }] },
      },
    },
    { ended_at: at },
  ];
  Deno.writeTextFileSync(
    `${dir}/${FAKER_SESSION}.jsonl`,
    lines.map((l) => JSON.stringify(l) + "\n").join(""),
  );
  return "--limit=5";
}

const GATE = "states:\n  - id: ask\n    type: human_approval\n    message: go?\n    next: done\n" +
  "  - id: done\n    type: transform\n    expression: \"{'by': ask.decided_by}\"\n";

Deno.test('--json: every command prints one JSON object, {"error": …} on failure with the same exit code', async () => {
  const home = await tempHome();
  const model = startModelServer();
  model.route((r) =>
    JSON.stringify(r.body).includes("evaluation datasets") ? { text: '[{"task": "hi"}]' } : { text: "hello" }
  );
  home.writeConfig(`${SANDBOX_CONFIG}\nai:\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  Deno.mkdirSync(home.path("environments/default/agents"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments/default/agents/Greeter.prompt"), "{{userInput}}\n");
  const serve = await startServe({ home: home.home, env: home.env });
  const env = { ...home.env, STATION_URL: serve.url };
  const p = (name: string) => home.path(name);
  Deno.writeTextFileSync(p("gate.workflow.yaml"), GATE);
  Deno.writeTextFileSync(p("bad.workflow.yaml"), "id: bad\nstates:\n  - id: a\n    type: nope\n");
  Deno.writeTextFileSync(p("data.txt"), "hello\n");
  Deno.writeTextFileSync(
    p("station.workflow.yaml"),
    "id: st\nstates:\n  - name: a\n    type: set\n    data: {x: 1}\n",
  );
  Deno.writeTextFileSync(p("no-nats.yaml"), "nats:\n  server_bin: /nonexistent/nats-server\n");
  Deno.mkdirSync(p("station-home"));
  stationHome(p("station-home"));
  Deno.mkdirSync(p("environments/default/workflows"), { recursive: true });
  Deno.mkdirSync(p("environments/broken/workflows"), { recursive: true });
  Deno.writeTextFileSync(p("environments/broken/workflows/bad.workflow.yaml"), "states: 3\n");
  Deno.mkdirSync(p("environments/default/agents"), { recursive: true });
  Deno.writeTextFileSync(p("environments/default/agents/helper.prompt"), "---\nmax_steps: 2\n---\nhi\n");
  Deno.writeTextFileSync(p("bad.prompt"), "---\nmax_steps: two\n---\nhi\n");
  Deno.writeTextFileSync(
    p("ok.test.yaml"),
    "cases:\n  - name: greets\n    agent: Greeter\n    task: hi\n    expect: { output: '$ = \"hello\"' }\n",
  );
  Deno.writeTextFileSync(p("bad.test.yaml"), "cases:\n  - name: no target\n");
  Deno.writeTextFileSync(p("qa.jsonl"), '{"task": "hi", "expected": "hello"}\n');
  Deno.writeTextFileSync(p("bad.jsonl"), '{"task": "hi"}\n{"expected": 1}\n');
  let agentRun = "", evalId = "";
  let run = "", run2 = "", run3 = "", approval = "", approval2 = "", key = "", key2 = "", sbx = "";
  const pendingApproval = (runId: () => string) => async () => {
    const url = `${serve.url}/api/v1/workflow-approvals?status=pending&run_id=${runId()}`;
    assert(await waitFor(async () => (await (await fetch(url)).json()).approvals.length > 0), "approval");
  };

  const rows: Row[] = [
    { cmd: "status", ok: true },
    { cmd: "status", args: () => ["--station", "127.0.0.1:1"], ok: false },
    { cmd: "completions", args: () => ["bash"], ok: true },
    { cmd: "completions", args: () => ["tcsh"], ok: false, code: 2 },
    { cmd: "serve", args: () => ["--port", "not-a-port"], ok: false, code: 2 },
    { cmd: "up", args: () => ["--workspace", p("nope")], ok: false, code: 2 },
    { cmd: "down", args: () => ["--name", "json-none"], ok: true },
    { cmd: "down", args: () => ["--name", "json-none", "--purge"], ok: false, code: 2 },
    { cmd: "logs", args: () => ["--name", "json-none"], ok: false },
    { cmd: "image build", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "worker", args: () => ["--concurrency", "0"], ok: false, code: 2 },
    { cmd: "workers", ok: true },
    { cmd: "workers", args: () => ["--station", "127.0.0.1:1"], ok: false },
    { cmd: "doctor", ok: true },
    { cmd: "version", ok: true },
    { cmd: "version", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "doctor", args: () => ["--config", p("no-nats.yaml")], ok: false },
    { cmd: "config show", ok: true },
    { cmd: "config show", args: () => ["--config", p("nope.yaml")], ok: false, code: 2 },
    { cmd: "config migrate", ok: true },
    { cmd: "config migrate", args: () => ["--config", p("nope.yaml")], ok: false, code: 2 },
    { cmd: "import station", args: () => ["--home", p("station-home"), "--dry-run"], ok: true },
    { cmd: "import station", args: () => ["--home", p("environments")], ok: false, code: 2 },
    { cmd: "sync", ok: true },
    { cmd: "sync", args: () => ["broken"], ok: false },
    { cmd: "agent validate", args: () => [p("environments/default/agents/helper.prompt")], ok: true },
    { cmd: "agent validate", args: () => [p("bad.prompt")], ok: false },
    { cmd: "agent list", ok: true },
    { cmd: "agent list", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "agent show", args: () => ["helper"], ok: true },
    { cmd: "agent show", args: () => ["nope"], ok: false },
    { cmd: "workflow validate", args: () => [p("gate.workflow.yaml")], ok: true },
    { cmd: "workflow validate", args: () => [p("bad.workflow.yaml")], ok: false },
    { cmd: "workflow migrate", args: () => [p("station.workflow.yaml")], ok: true },
    { cmd: "workflow migrate", args: () => [p("missing.workflow.yaml")], ok: false },
    { cmd: "workflow apply", args: () => [p("gate.workflow.yaml")], ok: true },
    { cmd: "workflow apply", args: () => [p("missing.workflow.yaml")], ok: false },
    { cmd: "workflow list", ok: true },
    { cmd: "workflow list", args: () => ["--status", "bogus"], ok: false, code: 2 },
    { cmd: "workflow show", args: () => ["gate"], ok: true },
    { cmd: "workflow show", args: () => ["nope"], ok: false },
    { cmd: "workflow export", args: () => ["gate"], ok: true },
    { cmd: "workflow export", args: () => ["nope"], ok: false },
    { cmd: "workflow delete", args: () => ["gate"], ok: true },
    { cmd: "workflow delete", args: () => ["nope"], ok: false },
    { cmd: "workflow enable", args: () => ["gate"], ok: true },
    { cmd: "workflow enable", args: () => ["nope"], ok: false },
    { cmd: "workflow run", args: () => ["gate"], ok: true, keep: (o) => (run = o.id) },
    { cmd: "workflow run", args: () => ["nope"], ok: false },
    { cmd: "workflow signal", args: () => [run, "go", "--data", '{"a": 1}'], ok: true },
    { cmd: "workflow signal", args: () => ["nope", "go"], ok: false },
    { cmd: "events send", args: () => ["deploy.done", "--data", '{"x": 1}', "--id", "e1"], ok: true },
    { cmd: "events send", args: () => ["bad name!"], ok: false },
    { cmd: "events list", ok: true },
    { cmd: "events list", args: () => ["--limit", "0"], ok: false, code: 2 },
    { cmd: "workflow runs", ok: true },
    { cmd: "run", args: () => ["gate"], ok: true },
    { cmd: "run", args: () => ["nope"], ok: false },
    { cmd: "__complete", args: () => ["workflows"], ok: true },
    { cmd: "__complete", args: () => ["bogus"], ok: false, code: 2 },
    { cmd: "workflow runs", args: () => ["--limit", "0"], ok: false, code: 2 },
    { cmd: "workflow inspect", args: () => [run], ok: true },
    { cmd: "workflow inspect", args: () => ["nope"], ok: false },
    { cmd: "workflow logs", args: () => [run], ok: true, ndjson: true },
    { cmd: "workflow logs", args: () => ["nope"], ok: false, ndjson: true },
    {
      cmd: "workflow approvals list",
      args: () => ["--run", run],
      ok: true,
      before: pendingApproval(() => run),
      keep: (o) => (approval = o.approvals[0].id),
    },
    { cmd: "workflow approvals list", args: () => ["--status", "bogus"], ok: false },
    // Station's habits: approve -c and reject --reason are the decision's comment.
    {
      cmd: "workflow approvals approve",
      args: () => [approval, "-c", "lgtm"],
      ok: true,
      keep: (o) => assertEquals(o.comment, "lgtm"),
    },
    { cmd: "workflow approvals approve", args: () => [approval], ok: false },
    { cmd: "workflow run", args: () => ["gate"], ok: true, keep: (o) => (run2 = o.id) },
    {
      cmd: "workflow approvals list",
      args: () => ["--run", run2],
      ok: true,
      before: pendingApproval(() => run2),
      keep: (o) => (approval2 = o.approvals[0].id),
    },
    {
      cmd: "workflow approvals reject",
      args: () => [approval2, "--reason", "not now"],
      ok: true,
      keep: (o) => assertEquals(o.comment, "not now"),
    },
    { cmd: "workflow approvals reject", args: () => [approval2], ok: false },
    { cmd: "workflow run", args: () => ["gate"], ok: true, keep: (o) => (run3 = o.id) },
    { cmd: "workflow pause", args: () => [run3], ok: true },
    { cmd: "workflow pause", args: () => ["nope"], ok: false },
    { cmd: "workflow resume", args: () => [run3], ok: true },
    { cmd: "workflow resume", args: () => ["nope"], ok: false },
    { cmd: "workflow cancel", args: () => [run3], ok: true },
    { cmd: "workflow cancel", args: () => ["nope"], ok: false },
    { cmd: "workflow retry", args: () => [run3], ok: true },
    { cmd: "workflow retry", args: () => ["nope"], ok: false },
    { cmd: "workflow fork", args: () => [run, "--from", "done"], ok: true },
    { cmd: "workflow fork", args: () => [run, "--from", "nope"], ok: false },
    { cmd: "workflow eval", args: () => ["ask.decided_by", "--run", run, "--step", "done"], ok: true },
    { cmd: "workflow eval", args: () => ["ask.decided_by +", "--run", run], ok: false },
    { cmd: "files upload", args: () => [p("data.txt")], ok: true, keep: (o) => (key = o.file_key) },
    { cmd: "files upload", args: () => [p("missing.txt")], ok: false },
    { cmd: "files upload", args: () => [p("data.txt")], ok: true, keep: (o) => (key2 = o.file_key) },
    { cmd: "files list", ok: true },
    { cmd: "files list", args: () => ["--limit", "many"], ok: false, code: 2 },
    { cmd: "files info", args: () => [key], ok: true },
    { cmd: "files info", args: () => ["files/nope"], ok: false },
    { cmd: "files download", args: () => [key, "-o", p("copy.txt")], ok: true },
    { cmd: "files download", args: () => [key, "-o", "-"], ok: false, code: 2 },
    { cmd: "files delete", args: () => [key, "--force"], ok: true },
    { cmd: "files delete", args: () => [key, "--force"], ok: false },
    { cmd: "files prune", args: () => ["--dry-run"], ok: true },
    { cmd: "files prune", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "sandbox open", ok: true, keep: (o) => (sbx = o.sandbox_id) },
    { cmd: "sandbox open", args: () => ["--image", "not/allowed:latest"], ok: false },
    { cmd: "sandbox write", args: () => [sbx, "f.txt", "--from", p("data.txt")], ok: true },
    { cmd: "sandbox write", args: () => [sbx, "f.txt", "--from", p("missing.txt")], ok: false },
    { cmd: "sandbox read", args: () => [sbx, "f.txt", "-o", p("read.txt")], ok: true },
    { cmd: "sandbox read", args: () => [sbx, "f.txt"], ok: false, code: 2 },
    { cmd: "sandbox ls", args: () => [sbx], ok: true },
    { cmd: "sandbox ls", args: () => ["sbx_nope"], ok: false },
    { cmd: "sandbox exec", args: () => [sbx, "-c", "cat f.txt"], ok: true },
    { cmd: "sandbox exec", args: () => [sbx], ok: false, code: 2 },
    { cmd: "sandbox stage", args: () => [sbx, key2, "staged.txt"], ok: true },
    { cmd: "sandbox stage", args: () => [sbx, "files/nope", "staged.txt"], ok: false },
    { cmd: "sandbox publish", args: () => [sbx, "f.txt"], ok: true },
    { cmd: "sandbox publish", args: () => [sbx, "nope.txt"], ok: false },
    { cmd: "sandbox rm", args: () => [sbx, "f.txt"], ok: true },
    { cmd: "sandbox rm", args: () => [sbx, "f.txt"], ok: false },
    { cmd: "sandbox list", ok: true },
    { cmd: "sandbox list", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "sandbox close", args: () => [sbx], ok: true },
    { cmd: "sandbox close", args: () => ["sbx_nope"], ok: false },
    { cmd: "sandbox run", args: () => ["-c", "echo hi"], ok: true },
    { cmd: "sandbox run", ok: false, code: 2 },
    { cmd: "init", args: () => ["--yes"], ok: true },
    { cmd: "init", args: () => ["--provider", "openai-compatible"], ok: false, code: 2 },
    { cmd: "env list", ok: true },
    { cmd: "env list", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "env show", args: () => ["default"], ok: true },
    { cmd: "env show", args: () => ["nope"], ok: false },
    { cmd: "env create", args: () => ["team"], ok: true },
    { cmd: "env create", args: () => ["team"], ok: false },
    { cmd: "env copy", args: () => ["team", "team2"], ok: true },
    { cmd: "env copy", args: () => ["nope", "x"], ok: false },
    { cmd: "env delete", args: () => ["team2", "--yes"], ok: true },
    { cmd: "env delete", args: () => ["team"], ok: false, code: 2 },
    { cmd: "env trust", args: () => ["default"], ok: true },
    { cmd: "env trust", args: () => ["nope"], ok: false },
    { cmd: "mcp approve", args: () => ["filesystem", "--env", "default"], ok: true },
    { cmd: "mcp approve", args: () => ["nope", "--env", "default"], ok: false },
    { cmd: "env vars set", args: () => ["default", "API_TOKEN", "t0k3n"], ok: true },
    { cmd: "env vars set", args: () => ["default", "bad-name", "x"], ok: false },
    { cmd: "env vars list", args: () => ["default"], ok: true },
    { cmd: "env vars list", args: () => ["nope"], ok: false },
    { cmd: "env vars get", args: () => ["default", "API_TOKEN"], ok: true },
    { cmd: "env vars get", args: () => ["default", "NOPE"], ok: false },
    { cmd: "env vars unset", args: () => ["default", "API_TOKEN"], ok: true },
    { cmd: "env vars unset", args: () => ["default", "API_TOKEN"], ok: false },
    { cmd: "bundle create", args: () => ["default", "-o", p("default.tar.gz")], ok: true },
    { cmd: "bundle create", args: () => ["nope", "-o", p("nope.tar.gz")], ok: false },
    { cmd: "bundle inspect", args: () => [p("default.tar.gz")], ok: true },
    { cmd: "bundle inspect", args: () => [p("data.txt")], ok: false },
    { cmd: "bundle install", args: () => [p("default.tar.gz"), "imported", "--defer-variables"], ok: true },
    { cmd: "bundle install", args: () => [p("default.tar.gz"), "imported"], ok: false },
    { cmd: "agent run", args: () => ["Greeter", "hi"], ok: true, keep: (o) => (agentRun = o.run_id) },
    { cmd: "agent run", args: () => ["Nobody", "hi"], ok: false },
    { cmd: "agent run", args: () => ["Greeter", "hi", "--queue", "GPU nodes"], ok: false },
    { cmd: "agent runs", ok: true },
    { cmd: "agent runs", args: () => ["--status", "queued"], ok: true },
    { cmd: "agent runs", args: () => ["--limit", "0"], ok: false, code: 2 },
    { cmd: "agent inspect", args: () => [agentRun], ok: true },
    { cmd: "agent inspect", args: () => ["arun_nope"], ok: false },
    { cmd: "env trust", args: () => ["default"], ok: true },
    { cmd: "env trust", args: () => ["nope"], ok: false },
    { cmd: "mcp config", args: () => ["--client", "cursor"], ok: true },
    { cmd: "mcp config", args: () => ["--client", "emacs"], ok: false, code: 2 },
    { cmd: "mcp stdio", args: () => ["--bogus"], ok: false, code: 2 },
    { cmd: "mock", args: () => ["aws-cost-explorer"], ok: false, code: 2 },
    { cmd: "faker templates", ok: true },
    { cmd: "faker templates", args: () => ["--config", p("nope.yaml")], ok: false, code: 2 },
    { cmd: "faker sessions list", args: () => [fakerSession(p("faker/sessions"))], ok: true },
    { cmd: "faker sessions list", args: () => ["--limit", "0"], ok: false, code: 2 },
    { cmd: "faker sessions view", args: () => [FAKER_SESSION], ok: true },
    { cmd: "faker sessions view", args: () => ["faker-20260101-000000-000000"], ok: false },
    { cmd: "faker sessions export", args: () => [FAKER_SESSION], ok: true },
    { cmd: "faker sessions export", args: () => [FAKER_SESSION, "-o", p("data.txt")], ok: false },
    { cmd: "mcp approve", args: () => ["nope"], ok: false },
    {
      cmd: "mcp approve",
      // Written here, after every sync row: an approved server is started by the next sync.
      args: () => {
        Deno.mkdirSync(p("environments/default/mcp-configs"), { recursive: true });
        Deno.writeTextFileSync(
          p("environments/default/mcp-configs/echo.json"),
          JSON.stringify({ mcpServers: { echo: { command: "true" } } }),
        );
        return ["echo"];
      },
      ok: true,
    },
    { cmd: "test", args: () => [p("ok.test.yaml")], ok: true },
    { cmd: "test", args: () => [p("bad.test.yaml")], ok: false, code: 2 },
    {
      cmd: "eval run",
      args: () => ["Greeter", "--dataset", p("qa.jsonl")],
      ok: true,
      keep: (o) => (evalId = o.eval_id),
    },
    { cmd: "eval run", args: () => ["Greeter", "--dataset", p("bad.jsonl")], ok: false, code: 2 },
    { cmd: "eval list", ok: true },
    { cmd: "eval list", args: () => ["--limit", "0"], ok: false, code: 2 },
    { cmd: "eval show", args: () => [evalId], ok: true },
    { cmd: "eval show", args: () => ["eval_nope"], ok: false },
    { cmd: "eval report", args: () => [evalId, "-o", p("report.html")], ok: true },
    { cmd: "eval report", args: () => ["eval_nope", "-o", p("nope.html")], ok: false },
    {
      cmd: "eval report",
      args: () => {
        Deno.writeTextFileSync(p("eval.json"), JSON.stringify(sampleEvalRun(3)));
        return [p("eval.json"), "-o", p("report.md")];
      },
      ok: true,
    },
    { cmd: "eval report", args: () => [p("eval.json"), "-o", p("report.txt")], ok: false, code: 2 },
    { cmd: "eval compare", args: () => [evalId, evalId], ok: true },
    { cmd: "eval compare", args: () => ["eval_nope", evalId], ok: false },
    { cmd: "eval datasets", ok: true },
    { cmd: "eval datasets", args: () => ["--env", "../x"], ok: false },
    { cmd: "eval generate", args: () => ["Greeter", "--count", "1", "-o", p("gen.jsonl")], ok: true },
    {
      cmd: "eval generate",
      args: () => ["Greeter", "--count", "1", "-o", p("gen.jsonl")],
      ok: false,
      code: 2,
    },
  ];

  try {
    // The table covers every command with a success and a failure (`serve` and `worker` succeed by running
    // until stopped, and `mcp stdio` by speaking MCP on stdout, so only their failures print a result; the
    // successes of `up`, `logs` and `image build` need the station image and are checked with --json in
    // tests/e2e/up_test.ts).
    const failureOnly = ["serve", "worker", "up", "logs", "image build", "mcp stdio", "mock"];
    for (const leaf of leafCommands(await buildProgram())) {
      assert(rows.some((r) => r.cmd === leaf && !r.ok), `a failure row for ${leaf}`);
      if (!failureOnly.includes(leaf)) {
        assert(rows.some((r) => r.cmd === leaf && r.ok), `a success row for ${leaf}`);
      }
    }
    for (const row of rows) {
      await row.before?.();
      const args = ["--json", ...row.cmd.split(" "), ...(row.args?.() ?? [])];
      const out = checkJson(row, args, await runStn(args, { env, cwd: home.home }));
      row.keep?.(out);
    }
  } finally {
    await serve.stop();
    await model.close();
    await removeStationContainers(home.path("stn.db")).catch(() => {});
    await home.cleanup();
  }
});
