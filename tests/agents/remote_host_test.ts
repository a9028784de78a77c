import {
  AGENT_RELEASE_SUBJECT,
  AGENT_TAKE_SUBJECT,
  AGENT_WRITE_SUBJECT,
  type RunClaim,
} from "../../src/agents/remote_protocol.ts";
import { AgentHost } from "../../src/agents/remote_host.ts";
import { AgentRuns } from "../../src/agents/runs.ts";
import type { AgentDefinition } from "../../src/agents/types.ts";
import { RunClaims } from "../../src/agents/run_claims.ts";
import { connectNats, type NatsConnection } from "../../src/nats/connection.ts";
import { agentDef, type AgentHarness, agentHarness, PLAIN_PROMPT } from "../helpers/agents.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { singleNats } from "../helpers/cluster.ts";

// The station's side of agent runs on a task queue (docs/workers.md#agent-runs-on-a-queue), spoken to over a
// real NATS server the way a worker does: taking a run, fencing writes by its claim, applying each once.

// deno-lint-ignore no-explicit-any -- the station's JSON answers, read field by field
async function ask(nc: NatsConnection, subject: string, body: unknown): Promise<any> {
  return (await nc.request(subject, JSON.stringify(body), { timeout: 5000 })).json();
}

/** An agent harness of these agents, its AgentHost answering on a real NATS server, for fn; then all stopped. */
async function withHost(
  defs: AgentDefinition[],
  fn: (h: AgentHarness, nc: NatsConnection) => Promise<void>,
): Promise<void> {
  const h = await agentHarness("http://127.0.0.1:9/v1", defs);
  const nats = await singleNats();
  const nc = await connectNats({ url: nats.url }, "agent-host-test");
  const host = new AgentHost({
    nc,
    agents: h.service,
    claims: new RunClaims(h.db, h.service.ledger),
    leaseMs: 60_000,
    holds: () => false,
    mcpPlan: () => Promise.resolve(null),
  });
  host.start();
  try {
    await fn(h, nc);
  } finally {
    host.stop();
    await nc.close();
    await nats.stop();
    await h.close();
  }
}

Deno.test("agent host: a queued run is taken under a claim; a re-sent write is applied once; a lapsed claim's writes are refused", async () => {
  await withHost([agentDef("Greeter", PLAIN_PROMPT)], async (h, nc) => {
    const { run } = await h.service.start({
      agent: "Greeter",
      environment: "default",
      task: "hi",
      queue: "gpu",
    });
    assertEquals([run.status, run.queue, run.owner], ["running", "gpu", null]);
    assertEquals(await ask(nc, AGENT_TAKE_SUBJECT, { worker: "w1", name: "one", queues: ["cpu"] }), {
      none: true,
    });
    const taken = await ask(nc, AGENT_TAKE_SUBJECT, { worker: "w1", name: "one", queues: ["cpu", "gpu"] });
    const claim: RunClaim = taken.claim;
    assertEquals(claim, { worker: "w1", run_id: run.id, claim: 1 });
    assertEquals(taken.plan.timeout_ms, 60_000);
    // Held (its lease runs): nobody else takes it.
    assertEquals(await ask(nc, AGENT_TAKE_SUBJECT, { worker: "w2", name: "two", queues: ["gpu"] }), {
      none: true,
    });

    // The same write sent twice (its first answer lost): one event.
    const write = (writeId: string, c: RunClaim = claim) =>
      ask(nc, AGENT_WRITE_SUBJECT, {
        claim: c,
        write_id: writeId,
        run_id: run.id,
        op: "event",
        args: [run.id, "turn_started", { turn: 1 }],
      });
    assertEquals(await write("write-1"), { ok: true });
    assertEquals(await write("write-1"), { ok: true });
    const started = () =>
      h.service.ledger.eventsAfter(run.id, 0).filter((e) => e.type === "turn_started").length;
    assertEquals(started(), 1);
    assertEquals(await write("write-2"), { ok: true });
    assertEquals(started(), 2);

    // Handed back, then taken by another worker: the first worker's writes are refused.
    assertEquals(await ask(nc, AGENT_RELEASE_SUBJECT, { claims: [claim] }), { released: 1 });
    const again = await ask(nc, AGENT_TAKE_SUBJECT, { worker: "w2", name: "two", queues: ["gpu"] });
    assertEquals(again.claim, { worker: "w2", run_id: run.id, claim: 2 });
    assertEquals((await write("write-3")).error.code, "claim_lost");
    assertEquals(started(), 2);

    // Canceled: the worker's writes are refused, its finish answers the canceled run.
    h.service.cancel(run.id, "stop");
    assertEquals((await write("write-4", again.claim)).error.code, "agent_run_finished");
    const finish = await ask(nc, AGENT_WRITE_SUBJECT, {
      claim: again.claim,
      write_id: "write-5",
      run_id: run.id,
      op: "finish",
      args: [run.id, { status: "completed", finish_reason: "stop", response: "late" }],
    });
    assertEquals([finish.ok, finish.run.status, finish.run.response], [true, "canceled", ""]);
    const events = h.service.ledger.eventsAfter(run.id, 0).map((e) => e.type);
    assertEquals(events.filter((t) => t === "run_claimed").length, 2);
    assert(events.includes("run_released") && events.includes("run_canceled"), events.join(","));
  });
});

Deno.test("agent host: an agent with concurrency keys and a queue is admitted first, then queued for a worker", async () => {
  const def = agentDef("Greeter", PLAIN_PROMPT, { queue: "gpu", concurrency: [{ limit: 1 }] });
  await withHost([def], async (h, nc) => {
    const runs = new AgentRuns(h.service.ledger);
    const take = () => ask(nc, AGENT_TAKE_SUBJECT, { worker: "w1", name: "one", queues: ["gpu"] });
    const first = await h.service.start({ agent: "Greeter", environment: "default", task: "one" });
    const second = await h.service.start({ agent: "Greeter", environment: "default", task: "two" });
    assertEquals(runs.view(first.run).status, "queued");
    assertEquals(runs.view(second.run).status, "waiting_for_concurrency");
    assertEquals(runs.view(second.run).waiting_for, { key: "agent:default/Greeter", position: 1 });

    // Only the admitted run can be taken; the waiting one holds no slot a worker could use.
    const taken = await take();
    assertEquals(taken.claim.run_id, first.run.id);
    assertEquals(await take(), { none: true });

    // The worker's finish ends the first run and admits the second, which is now queued for a worker.
    const finished = await ask(nc, AGENT_WRITE_SUBJECT, {
      claim: taken.claim,
      write_id: "finish-1",
      run_id: first.run.id,
      op: "finish",
      args: [first.run.id, { status: "completed", finish_reason: "stop", response: "hi" }],
    });
    assertEquals(finished.run.status, "completed");
    const admitted = runs.view(h.service.ledger.get(second.run.id)!);
    assertEquals([admitted.status, admitted.waiting_for?.queue], ["queued", "gpu"]);
    assertEquals((await take()).claim.run_id, second.run.id);
    assertEquals((await first.done).status, "completed");
  });
});
