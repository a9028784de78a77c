import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE_AGENTS = "examples/environments/default/agents";

Deno.test("stn agent validate: files or the environment's folder, offline; errors exit 1, warnings 0, --json", async () => {
  const home = await tempHome();
  try {
    const examples = ["assistant", "data-analyst", "file-auditor"].map((n) =>
      `${EXAMPLE_AGENTS}/${n}.prompt`
    );
    const ok = await runStn(["agent", "validate", ...examples], { env: home.env, cwd: ROOT });
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    for (const f of examples) assertStringIncludes(ok.stdout, `${f}: ok\n`);

    // No files: the environment's agents folder (--env picks another); none there is a usage error.
    const agents = home.path("environments", "ops", "agents");
    await Deno.mkdir(agents, { recursive: true });
    await Deno.writeTextFile(join(agents, "pager.prompt"), "---\nmodel: gpt-4o\napp: sre\n---\nhi\n");
    const folder = await runStn(["agent", "validate", "--env", "ops"], { env: home.env });
    assertEquals(folder.code, 0, folder.stderr);
    assertStringIncludes(
      folder.stdout,
      `${join(agents, "pager.prompt")}:2:1: warning model_without_provider:`,
    );
    assertStringIncludes(folder.stdout, `${join(agents, "pager.prompt")}: ok (2 warnings)`);
    const empty = await runStn(["agent", "validate"], { env: home.env });
    assertEquals(empty.code, 2);
    assertStringIncludes(empty.stderr, "error: no .prompt files in ");
    assertStringIncludes(empty.stderr, "hint: pass the files to check, or --env NAME");

    const broken = home.path("broken.prompt");
    await Deno.writeTextFile(broken, "---\nmodel: openai/x\ntimeout: soon\n---\n{{#if x}}\n");
    // References to other agents are checked once a file is otherwise valid.
    const orphan = home.path("orphan.prompt");
    await Deno.writeTextFile(orphan, "---\nagents: [brokn]\n---\nhi\n");
    const bad = await runStn(["agent", "validate", broken, orphan], { env: home.env });
    assertEquals(bad.code, 1);
    assertStringIncludes(bad.stdout, `${broken}:3:10: error invalid_duration: invalid duration "soon"`);
    assertStringIncludes(bad.stdout, "  hint: write durations like");
    assertStringIncludes(bad.stdout, `${broken}:6:1: error invalid_template:`);
    assertStringIncludes(
      bad.stdout,
      `${orphan}:2:10: error unknown_agent: no agent \`brokn\` in this environment`,
    );
    assertStringIncludes(bad.stdout, "  hint: did you mean `broken`?");
    assertStringIncludes(bad.stderr, "error: 2 of 2 agent files are invalid");
    assert(!bad.stderr.includes("    at "), "no stack trace");

    const json = await runStn(["--json", "agent", "validate", broken], { env: home.env });
    assertEquals(json.code, 1);
    const body = JSON.parse(json.stdout);
    assertEquals(body.error.code, "agent_invalid");
    assertEquals(body.error.details.valid, false);
    assertEquals(body.error.details.files[0].errors.map((e: { code: string }) => e.code), [
      "invalid_duration",
      "invalid_template",
    ]);

    const missing = await runStn(["agent", "validate", home.path("nope.prompt")], { env: home.env });
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, "no such file");
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn sync, agent list and agent show through the real stn (embedded runtime)", async () => {
  const home = await tempHome();
  try {
    const agents = home.path("environments", "default", "agents");
    await Deno.mkdir(agents, { recursive: true });
    await Deno.writeTextFile(
      join(agents, "greeter.prompt"),
      '---\nmetadata: {description: Greets people, tags: [demo]}\nmax_steps: 2\n---\n{{role "user"}}\n{{userInput}}\n',
    );
    await Deno.writeTextFile(join(agents, "bad.prompt"), "---\nmax_steps: [1]\n---\nhi\n");
    const sync = await runStn(["sync"], { env: home.env });
    assertEquals(sync.code, 1, sync.stderr);
    assertStringIncludes(sync.stdout, "agents created: greeter");
    assertStringIncludes(sync.stdout, "agents: 1 created, 0 updated, 0 unchanged, 0 deleted, 1 invalid");
    assertStringIncludes(sync.stderr, `invalid: ${join(agents, "bad.prompt")}:2:1: error invalid_value:`);
    assertStringIncludes(sync.stderr, "hint: `stn agent validate --env default` shows each issue");

    const list = await runStn(["agent", "list"], { env: home.env });
    assertEquals(list.code, 0, list.stderr);
    assertEquals(list.stdout.split("\n").slice(0, 3).map((l) => l.split(/\s{2,}/)), [
      ["NAME", "STATUS", "MODEL", "STEPS", "TOOLS", "DESCRIPTION"],
      ["greeter", "ok", "(default)", "2", "0", "Greets people"],
      ["bad", "invalid", "-", "-", "-", "-"],
    ]);
    assertStringIncludes(
      list.stdout,
      "bad: invalid: bad.prompt:2:1: invalid_value: `max_steps` must be a number, not a list",
    );
    const listJson = JSON.parse((await runStn(["--json", "agent", "list"], { env: home.env })).stdout);
    assertEquals(listJson.agents.map((a: { name: string }) => a.name), ["greeter"]);
    assertEquals(listJson.invalid.map((a: { name: string }) => a.name), ["bad"]);

    const show = await runStn(["agent", "show", "greeter"], { env: home.env });
    assertEquals(show.code, 0, show.stderr);
    assertStringIncludes(show.stdout, "name:        greeter\n");
    assertStringIncludes(show.stdout, "model:       (ai.model from config)\n");
    assertStringIncludes(show.stdout, "timeout:     15m\n");
    const prompt = await runStn(["agent", "show", "greeter", "--prompt"], { env: home.env });
    assertEquals(prompt.stdout, await Deno.readTextFile(join(agents, "greeter.prompt")));

    const missing = await runStn(["--json", "agent", "show", "greter"], { env: home.env });
    assertEquals(missing.code, 1);
    assertStringIncludes(
      missing.stderr,
      "error: no agent `greter` in environment `default` (no file agents/greter.prompt)",
    );
    assertStringIncludes(missing.stderr, "hint: did you mean `greeter`?");
    assertEquals(JSON.parse(missing.stdout).error.code, "agent_not_found");
  } finally {
    await home.cleanup();
  }
});
