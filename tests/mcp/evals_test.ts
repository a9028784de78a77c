import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { connectHttp, startMcpStation, toolJson } from "./helpers.ts";

Deno.test("mcp: an MCP client runs an eval, reads it and its report, compares it, lists and generates datasets; OpenAPI has the routes", async () => {
  const model = startModelServer();
  model.route((r) =>
    JSON.stringify(r.body).includes("evaluation datasets")
      ? { text: '[{"task": "say hi"}]' }
      : JSON.stringify(r.body).includes("impartial evaluator")
      ? { text: '{"score": 0.5, "reasoning": "half right"}' }
      : { text: "hello" }
  );
  const home = await tempHome();
  Deno.mkdirSync(home.path("environments/default/agents"), { recursive: true });
  Deno.mkdirSync(home.path("environments/default/evals"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments/default/agents/Greeter.prompt"), "{{userInput}}\n");
  Deno.writeTextFileSync(
    home.path("environments/default/evals/hi.jsonl"),
    '{"task": "hi", "expected": "hello"}\n',
  );
  const s = await startMcpStation({
    home,
    configYaml:
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  });
  const client = await connectHttp(s.mcpUrl);
  const call = async (name: string, args: Record<string, unknown>) =>
    toolJson(await client.callTool({ name, arguments: args }));
  try {
    const run = await call("run_eval", {
      target: "Greeter",
      dataset: { cases: [{ id: "a", task: "hi", expected: "hello", rubric: "greets" }] },
      wait: true,
    });
    assertEquals([
      run.status,
      run.cases[0].status,
      run.cases[0].scores.map((s: { scorer: string }) => s.scorer),
    ], [
      "completed",
      "failed",
      ["expected", "judge", "latency", "tokens"],
    ]);
    assertEquals(run.cases[0].scores[1].reasoning, "half right");
    const byFile = await call("run_eval", { target: "Greeter", dataset_file: "hi.jsonl", wait: true });
    assertEquals([byFile.status, byFile.aggregates.pass_rate], ["completed", 1]);
    assertEquals((await call("get_eval", { eval_id: run.eval_id })).cases.length, 1);
    const text = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args }) as { content: { text: string }[] };
      return result.content[0].text;
    };
    const md = await text("get_eval_report", { eval_id: run.eval_id });
    assertEquals(md.split("\n").slice(0, 2), ["<!-- stn eval report -->", "# Eval report: Greeter"]);
    assert(md.includes(`\`${run.eval_id}\``) && md.includes("half right"), md);
    const html = await text("get_eval_report", { eval_id: run.eval_id, format: "html" });
    assert(html.startsWith("<!DOCTYPE html>") && html.includes("half right"), html.slice(0, 200));
    const noReport = await client.callTool({ name: "get_eval_report", arguments: { eval_id: "eval_none" } });
    assertEquals([noReport.isError, toolJson(noReport).error.code], [true, "eval_not_found"]);
    const badFormat = await client.callTool({
      name: "get_eval_report",
      arguments: { eval_id: run.eval_id, format: "pdf" },
    });
    assertEquals([badFormat.isError, toolJson(badFormat).error.code], [true, "invalid_request"]);
    assertEquals((await call("list_evals", {})).evals.length, 2);
    const compared = await call("compare_evals", { base: byFile.eval_id, head: run.eval_id });
    assertEquals([compared.regressed, compared.pass_rate.delta], [true, -1]);
    assertEquals((await call("list_eval_datasets", {})).datasets, [
      { name: "hi.jsonl", environment: "default", cases: 1, error: null },
    ]);
    const generated = await call("generate_eval_dataset", { agent: "Greeter", count: 1 });
    assertEquals(generated.cases, [{ id: "common-1", task: "say hi" }]);
    const missing = await client.callTool({ name: "get_eval", arguments: { eval_id: "eval_none" } });
    assertEquals([missing.isError, toolJson(missing).error.code], [true, "eval_not_found"]);
    const both = await client.callTool({
      name: "run_eval",
      arguments: { target: "Greeter", dataset_file: "hi.jsonl", dataset: { cases: [{ task: "x" }] } },
    });
    assertEquals(toolJson(both).error.code, "invalid_request");

    const doc = await (await fetch(`${s.station.url}/api/v1/openapi.json`)).json();
    for (
      const path of [
        "/api/v1/evals",
        "/api/v1/evals/{eval_id}",
        "/api/v1/evals/{eval_id}/report",
        "/api/v1/evals/compare",
        "/api/v1/eval-datasets",
      ]
    ) {
      assertEquals(typeof doc.paths[path], "object", path);
    }
    assertEquals(typeof doc.components.schemas.EvalRun, "object");
  } finally {
    await client.close();
    await s.close();
    await model.close();
    await home.cleanup();
  }
});
