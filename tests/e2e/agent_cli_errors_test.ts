import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn } from "../helpers/stn.ts";

Deno.test("e2e: stn agent run without the provider's key fails before any run exists, with the variable to set", async () => {
  const home = await tempHome();
  home.writeConfig("ai:\n  model: anthropic/claude-sonnet-4-5\nsandbox:\n  enabled: false\n");
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(`${dir}/Greeter.prompt`, '---\nmax_steps: 2\n---\n{{role "user"}}\n{{userInput}}\n');
  // No key anywhere: the test's own environment may hold one, so it is blanked for the child.
  const env = { ...home.env, ANTHROPIC_API_KEY: "" };
  try {
    const run = await runStn(["agent", "run", "Greeter", "hello"], { env });
    assertEquals(run.code, 2, run.stderr); // a configuration problem (docs/cli.md exit codes)
    assertStringIncludes(run.stderr, "model anthropic/claude-sonnet-4-5: no API key for anthropic");
    assertStringIncludes(run.stderr, "ANTHROPIC_API_KEY");
    assertEquals(run.stderr.includes("    at "), false, "no stack trace");
    assertEquals(run.stdout, "");
    const runs = await runStn(["agent", "runs", "--json"], { env });
    assertEquals(JSON.parse(runs.stdout).runs, [], "no run was recorded");
  } finally {
    await home.cleanup();
  }
});

Deno.test("e2e: a failed stn agent run prints nothing on stdout (the rejected answer goes to stderr), exit 1", async () => {
  const model = startModelServer();
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    `${dir}/Rater.prompt`,
    "---\nmodel: openai/test-model\noutput:\n  format: json\n  schema:\n    severity: string\n---\n{{userInput}}\n",
  );
  try {
    // Not JSON, then not JSON again after the repair turn: the run fails with output_invalid.
    model.script({ text: "It is bad." }, { text: "Really bad." });
    const run = await runStn(["agent", "run", "Rater", "rate it"], { env: home.env });
    assertEquals(run.code, 1, run.stderr);
    assertEquals(run.stdout, "", "x=$(stn agent run …) captures no rejected answer");
    assertStringIncludes(run.stderr, "Really bad.");
    assertStringIncludes(run.stderr, "does not match the output schema");

    model.script({ text: "Still prose." }, { text: "More prose." });
    const json = await runStn(["--json", "agent", "run", "Rater", "rate it"], { env: home.env });
    assertEquals(json.code, 1, json.stderr);
    const body = JSON.parse(json.stdout);
    assertEquals([body.error.code, body.error.details.response], ["agent_run_failed", "More prose."]);
  } finally {
    await home.cleanup();
    await model.close();
  }
});
