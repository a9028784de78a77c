import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, waitFor } from "../helpers/stn.ts";
import { EXIT_HOME_BUSY } from "../../src/client/embedded.ts";

/** A job that is still running when the next cron minute fires (scaled down to seconds). */
const SLOW = `id: slow-job
states:
  - id: work
    type: timer
    duration: "\${$input.wait}"
  - id: done
    type: inject
    data: { done: true }
    end: true
`;

interface RunsPage {
  runs: { id: string; workflow_id: string; status: string }[];
}

Deno.test("overlapping embedded runs on one STATION_HOME queue, each recorded once; --no-wait-lock skips with exit 75", async (t) => {
  const home = await tempHome();
  const file = home.path("slow-job.workflow.yaml");
  Deno.writeTextFileSync(file, SLOW);
  const listRuns = async () => {
    const r = await runStn(["--json", "workflow", "runs", "--workflow", "slow-job"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as RunsPage).runs;
  };
  try {
    await t.step("three at once: the later ones wait for the one before, all complete", async () => {
      const results = await Promise.all(
        [1, 2, 3].map(() =>
          runStn(["--json", "workflow", "run", file, "--input", '{"wait":"2s"}'], { env: home.env })
        ),
      );
      const ids = results.map((r) => {
        assertEquals(r.code, 0, r.stderr);
        const run = JSON.parse(r.stdout) as { id: string; status: string };
        assertEquals(run.status, "completed");
        return run.id;
      });
      const runs = await listRuns();
      assertEquals(runs.map((r) => r.id).sort(), [...ids].sort(), "every run recorded once");
      assert(runs.every((r) => r.status === "completed"));
    });

    await t.step("with --no-wait-lock the later ones exit 75 at once and start nothing", async () => {
      // Long enough that the first still holds the home when the others have started (deno's start-up
      // takes seconds on a loaded machine); the test waits for its end, not for the clock.
      const first = runStn(["workflow", "run", file, "--input", '{"wait":"15s"}'], { env: home.env });
      // The first holds the home once its nats-server runs (run/nats.pid names it).
      assert(await waitFor(() => exists(home.path("run", "nats.pid")), 30_000), "the first run started");
      const skipped = await Promise.all(
        [1, 2].map(() =>
          runStn(["--no-wait-lock", "workflow", "run", file, "--input", '{"wait":"1s"}'], { env: home.env })
        ),
      );
      for (const r of skipped) {
        assertEquals(r.code, EXIT_HOME_BUSY, r.stderr);
        assertStringIncludes(r.stderr, "error: another stn (pid ");
        assertStringIncludes(r.stderr, "nothing was started");
        assertStringIncludes(r.stderr, "hint: run again later");
      }
      const done = await first;
      assertEquals(done.code, 0, done.stderr);
      assertEquals(
        (await listRuns()).length,
        4,
        "three from before and the first of these; none of the skipped",
      );
    });
  } finally {
    await home.cleanup();
  }
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
