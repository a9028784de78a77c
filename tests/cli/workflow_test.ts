import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLES = join(ROOT, "examples", "workflows");

Deno.test("stn workflow validate: every example is valid (exit 0); a broken file prints file:line:col and exits 1", async () => {
  const home = await tempHome();
  try {
    const files = [...Deno.readDirSync(EXAMPLES)].map((e) => e.name).filter((n) =>
      /\.workflow\.(ya?ml|json)$/.test(n)
    );
    assert(files.length >= 8, `only ${files.length} examples`);
    const yaml = files.filter((f) => f.endsWith(".yaml")).map((f) => `examples/workflows/${f}`);
    const ok = await runStn([
      "workflow",
      "validate",
      ...yaml,
      "examples/workflows/data-pipeline.workflow.json",
    ], {
      env: home.env,
      cwd: ROOT,
    });
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    for (const f of yaml) assertStringIncludes(ok.stdout, `${f}: ok`);

    const broken = home.path("broken.workflow.yaml");
    await Deno.writeTextFile(
      broken,
      `id: broken
states:
  - id: check
    type: switch
    conditions:
      - if: 'severity == "high"'
        next: page
  - id: page
    type: inject
    data: {}
    nxt: check
`,
    );
    const bad = await runStn(["workflow", "validate", broken], { env: home.env });
    assertEquals(bad.code, 1);
    const lines = bad.stdout.split("\n");
    const expr = lines.findIndex((l) => l.startsWith(`${broken}:6:`));
    assert(expr >= 0, bad.stdout);
    assertMatch(lines[expr], /^.+:6:\d+: error invalid_expression: /);
    assertStringIncludes(lines[expr + 1], "hint: JSONata compares with `=`, not `==`");
    assertMatch(bad.stdout, /broken\.workflow\.yaml:11:5: error unknown_field: unknown field `nxt`/);
    assertStringIncludes(bad.stdout, "did you mean `next`?");
    assertStringIncludes(bad.stderr, "error: 1 of 1 files are invalid");
    assert(!bad.stderr.includes("    at "), "no stack trace");

    const json = await runStn(["--json", "workflow", "validate", broken], { env: home.env });
    assertEquals(json.code, 1);
    const parsed = JSON.parse(json.stdout);
    // Issue 11: a failure under --json is {"error": …}; the validation report is its details.
    assertEquals(parsed.error.code, "workflow_invalid");
    assertEquals(parsed.error.details.files[0].errors.map((e: { code: string }) => e.code), [
      "invalid_expression",
      "unknown_field",
    ]);

    const missing = await runStn(["workflow", "validate", home.path("nope.yaml")], { env: home.env });
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stdout, "file_unreadable");
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn sync, workflow list/show/export/delete through an embedded runtime", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_WORKFLOWS_SYNC_ON_START: "false" };
  try {
    const dir = home.path("environments", "prod", "workflows");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.copyFile(
      join(EXAMPLES, "batch-report.workflow.yaml"),
      join(dir, "batch-report.workflow.yaml"),
    );
    await Deno.writeTextFile(
      join(dir, "bad.workflow.yaml"),
      "id: bad\nstates:\n  - {id: a, type: inject, data: {}, next: zz}\n",
    );

    // A bare `stn sync` syncs workflows.environment; its embedded runtime's own start-up sync is off, so
    // the report shows what this sync created rather than "unchanged".
    const sync = await runStn(["sync"], { env: { ...home.env, STN_WORKFLOWS_ENVIRONMENT: "prod" } });
    assertEquals(sync.code, 1, sync.stderr); // one invalid file
    assertStringIncludes(sync.stdout, "created: batch-report (v1)");
    assertMatch(sync.stderr, /bad\.workflow\.yaml:3:\d+: error unknown_target: `zz` is not a state/);

    const list = await runStn(["workflow", "list"], { env });
    assertEquals(list.code, 0, list.stderr);
    assertMatch(list.stdout, /batch-report\s+1\s+active\s+file:prod\s+Batch report/);

    const show = await runStn(["workflow", "show", "batch-report"], { env });
    assertEquals(show.code, 0, show.stderr);
    assertStringIncludes(show.stdout, "each-repo:foreach");

    const out = home.path("exported.workflow.yaml");
    const exp = await runStn(["workflow", "export", "batch-report", "-o", out], { env });
    assertEquals(exp.code, 0, exp.stderr);
    const again = await runStn(["workflow", "validate", out], { env });
    assertEquals(again.code, 0, again.stdout);

    const badVersion = await runStn(["workflow", "show", "batch-report", "--version", "7"], { env });
    assertEquals(badVersion.code, 1);
    assertStringIncludes(badVersion.stderr, "error: workflow `batch-report` has no version 7");

    const example = join(EXAMPLES, "safe-migration.workflow.yaml");
    const applied = await runStn(["workflow", "apply", example], { env });
    assertEquals(applied.code, 0, applied.stderr);
    assertStringIncludes(applied.stdout, "safe-migration: created (version 1)");
    const reapplied = await runStn(["workflow", "apply", example], { env });
    assertStringIncludes(reapplied.stdout, "safe-migration: unchanged (version 1)");
    const badApply = await runStn(["workflow", "apply", join(dir, "bad.workflow.yaml")], { env });
    assertEquals(badApply.code, 1);
    assertMatch(badApply.stderr, /bad\.workflow\.yaml:3:\d+: error unknown_target/);
    assertStringIncludes(badApply.stderr, "error: 1 file(s) are invalid; nothing was stored");

    const del = await runStn(["workflow", "delete", "batch-report"], { env });
    assertEquals(del.code, 0, del.stderr);
    const disabled = await runStn(["--json", "workflow", "list", "--status", "disabled"], { env });
    // Issue 11: lists are keyed by their resource, as the API answers them.
    assertEquals(JSON.parse(disabled.stdout).workflows.map((w: { id: string }) => w.id), ["batch-report"]);
    const purge = await runStn(["workflow", "delete", "batch-report", "--force"], { env });
    assertEquals(purge.code, 0, purge.stderr);
    const gone = await runStn(["workflow", "show", "batch-report"], { env });
    assertEquals(gone.code, 1);
    assertStringIncludes(gone.stderr, "hint: `stn workflow list`");
  } finally {
    await home.cleanup();
  }
});
