import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG, testBackend } from "../sandbox/backend.ts";

const EXAMPLE = fileURLToPath(new URL("../../examples/workflows/triage.workflow.yaml", import.meta.url));

Deno.test("stn workflow run: embedded run of the example, exit codes, input forms", async (t) => {
  const home = await tempHome();
  try {
    await t.step("the README's main job: the example runs on the embedded defaults", async () => {
      const r = await runStn(
        [
          "workflow",
          "run",
          EXAMPLE,
          "--input",
          '{"alerts":[{"name":"cpu","severity":9},{"name":"disk","severity":2}]}',
        ],
        { env: home.env },
      );
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(r.stdout), {
        service: "checkout",
        verdict: "page",
        reason: "checkout: worst score 90",
        scored: 2,
      });
    });

    await t.step("--input - reads stdin; --input @file reads a file", async () => {
      const r = await runStn(["workflow", "run", EXAMPLE, "--input", "-"], {
        env: home.env,
        stdin: '{"service":"api","alerts":[{"name":"x","severity":5}]}',
      });
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(r.stdout).verdict, "ticket");
      const file = home.path("input.json");
      Deno.writeTextFileSync(file, '{"alerts":[]}');
      const f = await runStn(["workflow", "run", EXAMPLE, "--input", `@${file}`, "--json"], {
        env: home.env,
      });
      assertEquals(f.code, 0, f.stderr);
      assertEquals(JSON.parse(f.stdout).result.verdict, "none");
      const followed = await runStn(["workflow", "run", EXAMPLE, "--input", '{"alerts":[]}', "--follow"], {
        env: home.env,
      });
      assertEquals(followed.code, 0, followed.stderr);
      assertStringIncludes(followed.stderr, "step_completed");
      assertStringIncludes(followed.stderr, "run_completed");
      assertEquals(JSON.parse(followed.stdout).verdict, "none");
    });

    await t.step(
      "bad input: usage errors exit 2, schema violations exit 1, never a stack trace",
      async () => {
        const bad = await runStn(["workflow", "run", EXAMPLE, "--input", "{nope"], { env: home.env });
        assertEquals(bad.code, 2);
        assertStringIncludes(bad.stderr, "error: --input is not valid JSON");
        const schema = await runStn(["workflow", "run", EXAMPLE, "--input", '{"alerts":[{"name":"x"}]}'], {
          env: home.env,
        });
        assertEquals(schema.code, 1);
        assertStringIncludes(schema.stderr, "required property 'severity'");
        assert(!schema.stderr.includes("    at "), schema.stderr);
        const file = home.path("broken.workflow.yaml");
        Deno.writeTextFileSync(file, "states:\n  - id: a\n    type: transfrom\n");
        const invalid = await runStn(["workflow", "run", file], { env: home.env });
        assertEquals(invalid.code, 2);
        assertStringIncludes(invalid.stderr, "broken.workflow.yaml:");
      },
    );

    await t.step("a failed run exits 3 and says why", async () => {
      const file = home.path("fails.workflow.yaml");
      Deno.writeTextFileSync(
        file,
        "states:\n  - id: pick\n    type: switch\n    conditions:\n      - if: 'false'\n        next: pick\n",
      );
      const r = await runStn(["workflow", "run", file], { env: home.env });
      assertEquals(r.code, 3, r.stderr);
      assertStringIncludes(r.stderr, "failed");
    });
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn workflow against stn serve: --wait timeout exits 5, cancel exits 4, inspect, logs, approvals", async () => {
  const home = await tempHome();
  const serve = await startServe({ env: home.env, home: home.home });
  const env = { ...home.env, STATION_URL: serve.url };
  try {
    const file = home.path("gate.workflow.yaml");
    Deno.writeTextFileSync(
      file,
      "states:\n  - id: ask\n    type: human_approval\n    message: go?\n    next: done\n" +
        "  - id: done\n    type: transform\n    expression: \"{'by': ask.decided_by}\"\n",
    );
    const timedOut = await runStn(["workflow", "run", file, "--wait", "--timeout", "500ms"], { env });
    assertEquals(timedOut.code, 5, timedOut.stderr);

    const started = await runStn(["workflow", "run", file], { env });
    assertEquals(started.code, 0, started.stderr);
    const runId = started.stdout.trim();
    const list = await runStn(["workflow", "approvals", "list", "--run", runId, "--json"], { env });
    // Issue 11: lists are keyed by their resource, as the API answers them.
    const [approval] = JSON.parse(list.stdout).approvals;
    assertEquals(approval.message, "go?");
    const approve = await runStn(["workflow", "approvals", "approve", approval.id, "--actor", "erin"], {
      env,
    });
    assertEquals(approve.code, 0, approve.stderr);
    const again = await runStn(["workflow", "approvals", "reject", approval.id], { env });
    assertEquals(again.code, 1);
    assertStringIncludes(again.stderr, "already approved");
    // Issue 11: one meaning per short flag; -f is --force everywhere, follow is -F.
    const logs = await runStn(["workflow", "logs", runId, "-F"], { env });
    assertEquals(logs.code, 0);
    assertStringIncludes(logs.stdout, "approval_decided");
    assert(logs.stdout.trim().endsWith("run_completed") || logs.stdout.includes("run_completed"));
    const inspect = await runStn(["workflow", "inspect", runId], { env });
    assertStringIncludes(inspect.stdout, "completed");
    assertStringIncludes(inspect.stdout, "human_approval");

    const waiting = await runStn(["workflow", "runs", "--status", "waiting", "--json"], { env });
    const victim = JSON.parse(waiting.stdout).runs[0].id;
    const follower = runStn(["workflow", "logs", victim, "--follow"], { env });
    const cancel = await runStn(["workflow", "cancel", victim], { env });
    assertEquals(cancel.stdout.trim(), `${victim} canceled`);
    assertStringIncludes((await follower).stdout, "run_canceled");

    const waiter = runStn(["workflow", "run", file, "--wait"], { env });
    let waitingId: string | undefined;
    assert(
      await waitFor(async () => {
        const r = await runStn(["workflow", "runs", "--status", "waiting", "--json"], { env });
        waitingId = JSON.parse(r.stdout).runs[0]?.id;
        return waitingId !== undefined;
      }, 20_000),
    );
    await runStn(["workflow", "cancel", waitingId!], { env });
    const canceled = await waiter;
    assertEquals(canceled.code, 4, canceled.stderr);

    // Running the file stored nothing (a one-off run); --save stores it, and then it runs by id.
    const notStored = await runStn(["workflow", "run", "gate"], { env });
    assertEquals(notStored.code, 1);
    assertStringIncludes(notStored.stderr, "no workflow `gate`");
    assertEquals((await runStn(["workflow", "run", file, "--save"], { env })).code, 0);
    const byId = await runStn(["workflow", "run", "gate", "--json"], { env });
    assertEquals(byId.code, 0, byId.stderr);
    assertEquals(JSON.parse(byId.stdout).workflow_id, "gate");
    const unknown = await runStn(["workflow", "run", "nope"], { env });
    assertEquals(unknown.code, 1);
    assertStringIncludes(unknown.stderr, "error:");
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});

Deno.test("stn workflow run (embedded) closes its run's sandbox session before it exits", async () => {
  const home = await tempHome();
  home.writeConfig(SANDBOX_CONFIG);
  const file = home.path("sbx.workflow.yaml");
  Deno.writeTextFileSync(
    file,
    "id: sbx\nstates:\n  - id: hello\n    type: sandbox\n    command: [echo, hi]\n",
  );
  try {
    const r = await runStn(["workflow", "run", file, "--json"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).result.stdout, "hi\n");
    // Read straight after the command: nothing else has run that could sweep the session since.
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(home.path("stn.db"));
    const sessions = db.prepare("SELECT scope, status, close_reason FROM sandbox_sessions").all();
    const station = db.prepare("SELECT value FROM station_meta WHERE key = 'station_id'").get() as {
      value: string;
    };
    db.close();
    assertEquals(sessions.map((s) => ({ ...s })), [{
      scope: "workflow",
      status: "closed",
      close_reason: "run_ended",
    }]);
    assertEquals(await testBackend().listManaged({ "dev.stn.station": station.value }), []);
  } finally {
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
  }
});

Deno.test("stn workflow run starts a manual run: workflow.trigger says so", async () => {
  const home = await tempHome();
  const file = home.path("who.workflow.yaml");
  Deno.writeTextFileSync(
    file,
    "id: who\nstates:\n  - id: who\n    type: transform\n    expression: workflow.trigger\n",
  );
  try {
    const r = await runStn(["workflow", "run", file], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout), { type: "manual" });
  } finally {
    await home.cleanup();
  }
});
