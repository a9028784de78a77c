import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
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
