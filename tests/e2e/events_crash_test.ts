import { StationClient } from "../../src/client/http.ts";
import { sendEvent } from "../../src/client/events.ts";
import { getRun, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

const orders = {
  id: "orders",
  states: [
    { id: "paid", type: "await", event: "order.paid", match: "order.id in event.data.orders", next: "ship" },
    { id: "ship", type: "transform", expression: "{'shipped': order.id, 'by': paid.id}" },
  ],
};

Deno.test("crash: kill -9 while 20 runs wait; events sent while down and after restart complete each wait once", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_ENGINE_LEASE: "2s", STN_ENGINE_ACK_WAIT: "3s" };
  let serve = await startServe({ env, home: home.home });
  try {
    let client = new StationClient(serve.url);
    const runs: string[] = [];
    for (let i = 0; i < 20; i++) {
      runs.push((await startRun(client, { definition: orders, input: { order: { id: i } } })).id);
    }
    assert(await waitFor(async () => (await getRun(client, runs[19])).status === "waiting", 20_000));
    for (const id of runs) assert(await waitFor(async () => (await getRun(client, id)).status === "waiting"));
    // Answered, then killed before the resumed runs could go on.
    const before = await sendEvent(client, {
      name: "order.paid",
      data: { orders: [0, 1, 2, 3, 4] },
      id: "up-1",
    });
    assertEquals(before.event.resumed.length, 5);
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");

    // Down: the HTTP API refuses loudly; the CLI runs the event through an embedded runtime on the same data.
    await assertRejects(() => sendEvent(client, { name: "order.paid", data: { orders: [5] } }));
    const send = (data: unknown, id: string) =>
      runStn(["events", "send", "order.paid", "--data", JSON.stringify(data), "--id", id, "--json"], { env });
    const down = await send({ orders: [5, 6, 7, 8, 9] }, "down-1");
    assertEquals(down.code, 0, down.stderr);
    assertEquals(JSON.parse(down.stdout).event.resumed.length, 5);
    const repeat = await send({ orders: [5, 6, 7, 8, 9] }, "down-1");
    assertEquals([repeat.code, JSON.parse(repeat.stdout).duplicate], [0, true], repeat.stderr);

    serve = await startServe({ env, home: home.home });
    client = new StationClient(serve.url);
    const after = await sendEvent(client, {
      name: "order.paid",
      data: { orders: [...Array(20).keys()] },
      id: "up-2",
    });
    assertEquals(after.event.resumed.length, 10, "only the ten still waiting");
    assertEquals(
      (await sendEvent(client, { name: "order.paid", data: { orders: [0] }, id: "up-1" })).duplicate,
      true,
    );

    const done = await waitFor(async () => {
      for (const id of runs) if ((await getRun(client, id)).status !== "completed") return false;
      return true;
    }, 30_000);
    assert(done, "every waiting run completed after the restart");
    for (const [i, id] of runs.entries()) {
      const run = await getRun(client, id);
      const by = i < 5 ? "up-1" : i < 10 ? "down-1" : "up-2";
      assertEquals(run.result, { shipped: i, by }, id);
      const steps = await runSteps(client, id);
      const completed = steps.filter((s) => s.status === "completed").map((s) => s.path);
      assertEquals(completed, ["paid", "ship"], `${id}: each step completed once`);
    }
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
