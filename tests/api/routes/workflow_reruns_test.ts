import {
  bulkRetryRuns,
  evalInRun,
  forkRun,
  getRun,
  retryRun,
  runEvents,
  startRun,
  waitForRun,
} from "../../../src/client/workflow_runs.ts";
import { saveWorkflow } from "../../../src/client/workflows.ts";
import { StationError } from "../../../src/errors.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";

// The repair routes' answers and errors against a real station: retry, fork, bulk retry and eval.

const gate = (done: string) => ({
  id: "gate",
  states: [
    { id: "hello", type: "inject", data: { items: [{ price: 1 }, { price: 2 }] }, next: "ask" },
    { id: "ask", type: "human_approval", message: "go?", next: "done" },
    { id: "done", type: "transform", expression: done },
  ],
});

async function expectError(p: Promise<unknown>, status: number, code: string): Promise<StationError> {
  const err = await p.then(() => undefined, (e) => e);
  assert(err instanceof StationError, `expected a StationError, got ${err}`);
  assertEquals([err.status, err.code], [status, code], err.message);
  return err;
}

Deno.test("reruns API: retry, fork, bulk retry and eval answer their run or a clear 4xx", async () => {
  const ts = await startTestStation();
  try {
    const { client } = ts;
    await saveWorkflow(client, gate("{ 'sum': $sum(hello.items.price) + 'x' }"));
    const run = await startRun(client, { workflow_id: "gate", input: {} });
    // A waiting run is neither retried nor does a fork from a step it has not reached exist.
    await expectError(retryRun(client, run.id), 409, "run_not_retryable");
    await expectError(forkRun(client, run.id, { from: "done" }), 404, "step_not_in_run");
    await expectError(retryRun(client, "nope"), 404, "run_not_found");
    await expectError(
      client.json("POST", `/api/v1/workflow-runs/${run.id}/retry`, { body: { bogus: 1 } }),
      400,
      "invalid_request",
    );

    // eval: the data a step saw, a given input, a syntax error with its position, a runtime error.
    assertEquals(
      (await evalInRun(client, run.id, { expression: "$sum(hello.items.price)", step: "ask" })).value,
      3,
    );
    assertEquals((await evalInRun(client, run.id, { expression: "a * 2", input: { a: 21 } })).value, 42);
    const syntax = await expectError(
      evalInRun(client, run.id, { expression: "$sum(hello" }),
      422,
      "expression_invalid",
    );
    assertEquals(typeof (syntax.details as { position?: unknown }).position, "number");
    await expectError(evalInRun(client, run.id, { expression: "'a' + 1" }), 422, "expression_failed");
    await expectError(evalInRun(client, run.id, { expression: "1", step: "nope" }), 404, "step_not_in_run");

    await client.json("POST", `/api/v1/workflow-runs/${run.id}/cancel`, { body: {} });
    // A stored version that drops a completed step does not fit; the run's own definition does.
    await saveWorkflow(client, { id: "gate", states: gate("1").states.slice(1) });
    await expectError(retryRun(client, run.id), 422, "definition_incompatible");
    await expectError(retryRun(client, run.id, { version: 9 }), 404, "workflow_version_not_found");
    const retried = await retryRun(client, run.id, { version: 1 });
    assertEquals([retried.id, retried.status, retried.workflow_version], [run.id, "running", 1]);
    const events = [];
    for await (const e of runEvents(client, run.id, { follow: false })) events.push(e.type);
    assert(events.indexOf("run_canceled") < events.indexOf("run_retried"), events.join(" "));
    await expectError(retryRun(client, run.id), 409, "run_not_retryable");

    // Bulk: a bad window is a 400; a dry run lists; the run retried within the window is skipped.
    await expectError(bulkRetryRuns(client, { workflow_id: "gate", since: "soon" }), 400, "invalid_request");
    await expectError(bulkRetryRuns(client, { workflow_id: "nope", since: "1h" }), 404, "workflow_not_found");
    await client.json("POST", `/api/v1/workflow-runs/${run.id}/cancel`, { body: {} });
    const listed = await bulkRetryRuns(client, {
      workflow_id: "gate",
      since: "1h",
      status: "canceled",
      dry_run: true,
    });
    assertEquals(listed.runs.map((r) => [r.run_id, r.outcome]), [[run.id, "skipped"]]);
    assertEquals(listed.retried, 0);

    // Fork from ask with a new definition file's worth of content: hello is reused, ask runs again.
    const fork = await forkRun(client, run.id, {
      from: "ask",
      definition: gate("{ 'sum': $sum(hello.items.price) }"),
    });
    assertEquals([fork.parent_run_id, fork.forked_from, fork.workflow_version], [run.id, "ask", null]);
    assertEquals((await getRun(client, run.id)).forks, [fork.id]);
    const [approval] =
      (await client.json("GET", "/api/v1/workflow-approvals", { query: { run_id: fork.id } }) as {
        approvals: { id: string }[];
      }).approvals;
    await client.json("POST", `/api/v1/workflow-approvals/${approval.id}/approve`, { body: { actor: "t" } });
    assertEquals((await waitForRun(client, fork.id, { timeoutMs: 20_000 }))!.result, { sum: 3 });
    await expectError(
      forkRun(client, run.id, { from: "ask", input: [] as unknown as Record<string, unknown> }),
      400,
      "invalid_request",
    );
  } finally {
    await ts.close();
  }
});
