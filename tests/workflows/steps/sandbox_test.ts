import { assert, assertEquals, assertMatch, assertStrictEquals } from "../../helpers/assert.ts";
import { Readable } from "node:stream";
import { waitFor } from "../../helpers/stn.ts";
import { startTestStation } from "../../helpers/station.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../../sandbox/backend.ts";
import { attempts, def, waitRun } from "../helpers.ts";

Deno.test("sandbox step: steps of a run share one container, outputs are published, the container goes with the run", async () => {
  const t = await startTestStation({ configYaml: SANDBOX_CONFIG });
  const { engine, sandbox, files } = t.station.ctx;
  try {
    const data = new TextEncoder().encode("a,1\nb,2\n");
    const input = await files.put(
      "files/input.csv",
      Readable.toWeb(Readable.from([data])) as ReadableStream<Uint8Array>,
    );
    const run = await engine.startRun({
      definition: def({
        id: "sbx",
        states: [
          {
            id: "prepare",
            type: "sandbox",
            runtime: "python",
            stage: [{ file_key: input.key, destination: "in.csv" }],
            script: "mkdir -p out && cut -d, -f2 in.csv > out/numbers.txt && echo prepared",
            next: "sum",
          },
          {
            id: "sum",
            type: "sandbox",
            runtime: "python",
            command: ["python3", "-c", "print(sum(int(x) for x in open('out/numbers.txt')))"],
            publish: ["out/numbers.txt"],
          },
        ],
      }),
      input: {},
    });
    const done = await waitRun(engine, run.id, undefined, 30_000);
    assertStrictEquals(done.status, "completed", done.error ?? "");
    const rows = attempts(engine, run.id);
    assertStrictEquals(JSON.parse(rows[0].output!).stdout, "prepared\n");
    const sum = JSON.parse(rows[1].output!);
    assertStrictEquals(sum.stdout, "3\n");
    assertStrictEquals(sum.exit_code, 0);
    assertEquals(sum.files, { "out/numbers.txt": `runs/${run.id}/output/numbers.txt` });
    const published = await files.get(`runs/${run.id}/output/numbers.txt`);
    assertStrictEquals(await new Response(published.stream).text(), "1\n2\n");
    assert(await waitFor(() => sandbox!.list().length === 0, 10_000), "the run's container is removed");
    assertStrictEquals(sandbox!.list(true)[0].close_reason, "run_ended");
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});

Deno.test("sandbox step: a non-zero exit fails the step; canceling the run stops the command", async () => {
  const t = await startTestStation({ configYaml: SANDBOX_CONFIG });
  const { engine, sandbox } = t.station.ctx;
  try {
    const failing = await engine.startRun({
      definition: def({
        id: "fails",
        states: [{ id: "x", type: "sandbox", script: "echo nope >&2; exit 3" }],
      }),
      input: {},
    });
    const failed = await waitRun(engine, failing.id, undefined, 30_000);
    assertStrictEquals(failed.status, "failed");
    assertMatch(failed.error ?? "", /sandbox_exit_nonzero/);
    assertMatch(failed.error ?? "", /nope/);

    const mixed = await engine.startRun({
      definition: def({
        id: "mixed",
        states: [
          { id: "a", type: "sandbox", runtime: "sh", script: "true", next: "b" },
          { id: "b", type: "sandbox", runtime: "python", command: ["python3", "-V"] },
        ],
      }),
      input: {},
    });
    const conflict = await waitRun(engine, mixed.id, undefined, 30_000);
    assertStrictEquals(conflict.status, "failed");
    assertMatch(conflict.error ?? "", /sandbox_image_conflict/);

    const long = await engine.startRun({
      definition: def({ id: "long", states: [{ id: "wait", type: "sandbox", script: "sleep 300" }] }),
      input: {},
    });
    assert(await waitFor(() => sandbox!.list().some((s) => s.run_id === long.id), 15_000));
    const session = sandbox!.list().find((s) => s.run_id === long.id)!;
    assert(
      await waitFor(
        async () =>
          (await sandbox!.exec(session.id, { cmd: "ps -o args | grep -c '^sleep 300'" })).stdout.trim() ===
            "1",
        10_000,
      ),
    );
    const started = Date.now();
    engine.cancel(long.id);
    const canceled = await waitRun(engine, long.id, ["canceled"], 15_000);
    assertStrictEquals(canceled.status, "canceled");
    assert(Date.now() - started < 10_000);
    assert(await waitFor(() => sandbox!.list().length === 0, 10_000), "the run's container is removed");
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});

Deno.test("sandbox step: ${…} templates in command and env are rendered over the run context", async () => {
  const t = await startTestStation({ configYaml: SANDBOX_CONFIG });
  const { engine } = t.station.ctx;
  try {
    const run = await engine.startRun({
      definition: def({
        id: "templated",
        states: [
          { id: "prep", type: "transform", expression: "{'who': name & '!'}", next: "say" },
          {
            id: "say",
            type: "sandbox",
            command: ["sh", "-c", 'echo "$GREETING ${prep.who} x${n}"'],
            env: { GREETING: "${greeting}" },
          },
        ],
      }),
      input: { name: "world", n: 3, greeting: "hello" },
    });
    const done = await waitRun(engine, run.id, undefined, 30_000);
    assertStrictEquals(done.status, "completed", done.error ?? "");
    assertStrictEquals(JSON.parse(attempts(engine, run.id)[1].output!).stdout, "hello world! x3\n");
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});
