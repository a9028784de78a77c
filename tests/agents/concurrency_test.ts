import type { AgentRunRow } from "../../src/agents/ledger.ts";
import type { AgentDefinition } from "../../src/agents/types.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { agentDef, type AgentHarness, agentHarness, PLAIN_PROMPT } from "../helpers/agents.ts";
import { type ModelRequest, type ModelServer, startModelServer } from "../helpers/model_server.ts";

/** Agent runs' concurrency keys (docs/agents.md#concurrency) on a real ledger and a scripted model. */

const PER_CUSTOMER = agentDef("Support", PLAIN_PROMPT, {
  model: "openai/test-model",
  concurrency: [{ key: "${input.customer}", limit: 1 }, { limit: 20 }],
});

/** The task a model request carries (the run's last user message). */
const taskOf = (req: ModelRequest): string => req.body.messages.at(-1).content;

/** A model whose answers wait until the test releases them, per task. */
function gatedModel(model: ModelServer) {
  const gates = new Map<string, () => void>();
  const held = new Map<string, Promise<void>>();
  const gate = (task: string) => {
    if (!held.has(task)) held.set(task, new Promise<void>((r) => gates.set(task, r)));
    return held.get(task)!;
  };
  model.route((req) => ({ text: `done ${taskOf(req)}`, hold: gate(taskOf(req)) }));
  return {
    release: (task: string) => {
      gate(task);
      gates.get(task)!();
    },
  };
}

const start = (
  h: AgentHarness,
  task: string,
  variables: Record<string, unknown>,
  priority?: number,
  signal?: AbortSignal,
) => h.service.start({ agent: "Support", environment: "default", task, variables, priority, signal });

/** Waits (on the ledger, no clock) until `runId` has status `status`. */
async function untilStatus(h: AgentHarness, runId: string, status: AgentRunRow["status"]): Promise<void> {
  for (let i = 0; i < 500 && h.service.ledger.get(runId)?.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assertEquals(h.service.ledger.get(runId)?.status, status);
}

const keyRows = (h: AgentHarness) =>
  h.db.prepare("SELECT key, held, waiting FROM concurrency_keys ORDER BY key").all()
    .map((r) => ({ ...r }));

async function withHarness(
  defs: AgentDefinition[],
  fn: (h: AgentHarness, model: ModelServer) => Promise<void>,
) {
  const model = startModelServer();
  const h = await agentHarness(model.url, defs);
  try {
    await fn(h, model);
  } finally {
    await h.close();
    await model.close();
  }
}

Deno.test("agent concurrency: limit 1 per key never overlaps (ledger timestamps), every run completes", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    model.route((req) => ({ text: `done ${taskOf(req)}` }));
    const customers = ["acme", "globex", "initech"];
    const started = await Promise.all(
      Array.from({ length: 24 }, (_, i) => start(h, `t${i}`, { customer: customers[i % 3] })),
    );
    assert(started.some((s) => s.run.status === "waiting_for_concurrency"), "some runs had to wait");
    const ended = await Promise.all(started.map((s) => s.done));
    assertEquals(ended.map((r) => r.status), ended.map(() => "completed"));
    for (const c of customers) {
      const runs = ended.filter((r) => JSON.parse(r.variables).customer === c)
        .sort((a, b) => a.started_at.localeCompare(b.started_at));
      for (let i = 1; i < runs.length; i++) {
        assert(
          runs[i].started_at >= runs[i - 1].ended_at!,
          `${c}: ${runs[i].id} started ${runs[i].started_at} before ${runs[i - 1].id} ended ${
            runs[i - 1].ended_at
          }`,
        );
      }
    }
    // A run that waited says so, and when it was admitted.
    const waited = started.find((s) => s.run.status === "waiting_for_concurrency")!.run.id;
    const types = h.service.ledger.eventsAfter(waited, 0).map((e) => e.type);
    assertEquals(types.slice(0, 3), ["run_started", "run_waiting_for_concurrency", "run_admitted"]);
    assertEquals(keyRows(h), [], "every key was given back");
  });
});

Deno.test("agent concurrency: runs of different keys run at once; a second run of one key waits with its place", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    const gate = gatedModel(model);
    const a1 = await start(h, "a1", { customer: "acme" });
    const b1 = await start(h, "b1", { customer: "globex" });
    // Both model calls arrive while neither has answered: the two keys run in parallel.
    await model.waitForRequests(2);
    const a2 = await start(h, "a2", { customer: "acme" });
    assertEquals(a2.run.status, "waiting_for_concurrency");
    assertEquals(h.service.ledger.keys.reads.position(a2.run.id), {
      key: "agent:default/Support/acme",
      position: 1,
    });
    assertEquals(model.requests.map(taskOf).sort(), ["a1", "b1"]);
    gate.release("a1");
    assertEquals((await a1.done).status, "completed");
    await untilStatus(h, a2.run.id, "running");
    gate.release("a2");
    gate.release("b1");
    assertEquals([(await a2.done).status, (await b1.done).status], ["completed", "completed"]);
  });
});

Deno.test("agent concurrency: waiting runs are admitted by priority, then arrival", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    const gate = gatedModel(model);
    const first = await start(h, "first", { customer: "acme" });
    await model.waitForRequests(1);
    const waiting = [
      await start(h, "low", { customer: "acme" }, 2),
      await start(h, "high", { customer: "acme" }, 8),
      await start(h, "default-a", { customer: "acme" }),
      await start(h, "default-b", { customer: "acme" }),
    ];
    assertEquals(waiting.map((s) => s.run.status), waiting.map(() => "waiting_for_concurrency"));
    for (const t of ["first", "low", "high", "default-a", "default-b"]) gate.release(t);
    for (const s of [first, ...waiting]) assertEquals((await s.done).status, "completed");
    assertEquals(model.requests.map(taskOf), ["first", "high", "default-a", "default-b", "low"]);
  });
});

Deno.test("agent concurrency: a canceled waiting run frees no slot; the runs behind it keep their order", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    const gate = gatedModel(model);
    const holder = await start(h, "holder", { customer: "acme" });
    await model.waitForRequests(1);
    const second = await start(h, "second", { customer: "acme" });
    const third = await start(h, "third", { customer: "acme" });
    const canceled = h.service.cancel(second.run.id);
    assertEquals(canceled.status, "canceled");
    assertEquals((await second.done).status, "canceled", "its caller hears it ended");
    // The holder still holds the key: the third run waits, now first in line.
    assertEquals(h.service.ledger.get(third.run.id)?.status, "waiting_for_concurrency");
    assertEquals(h.service.ledger.keys.reads.position(third.run.id)?.position, 1);
    assertEquals(
      keyRows(h).find((k) => k.key === "agent:default/Support/acme"),
      { key: "agent:default/Support/acme", held: 1, waiting: 1 },
    );
    assertEquals(model.requests.length, 1, "nothing else reached the model");
    gate.release("holder");
    gate.release("third");
    assertEquals([(await holder.done).status, (await third.done).status], ["completed", "completed"]);
    assertEquals(model.requests.map(taskOf), ["holder", "third"]);
    assertEquals(keyRows(h), []);
  });
});

Deno.test("agent concurrency: a restart keeps waiting runs waiting and runs them when the slot frees", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    const gate = gatedModel(model);
    const holder = await start(h, "holder", { customer: "acme" });
    await model.waitForRequests(1);
    const waiter = await start(h, "waiter", { customer: "acme" });
    // The station stops: the holder stays running in the ledger (to resume), the waiter stays waiting.
    await h.service.stop();
    assertEquals((await waiter.done).status, "waiting_for_concurrency");
    assertEquals(h.service.ledger.get(holder.run.id)?.status, "running");
    const next = h.restart();
    gate.release("holder");
    gate.release("waiter");
    next.resumeOrphans();
    assertEquals(next.ledger.get(waiter.run.id)?.status, "waiting_for_concurrency", "the key is still held");
    const ended = await next.wait(waiter.run.id);
    assertEquals(ended.status, "completed");
    const held = next.ledger.get(holder.run.id)!;
    assertEquals(held.status, "completed");
    assert(ended.started_at >= held.ended_at!, "the waiter ran after the holder ended");
    // The holder's call cut by the stop is made again on resume; the waiter's model call comes after it, once.
    assertEquals(model.requests.map(taskOf).slice(-2), ["holder", "waiter"]);
    assertEquals(model.requests.map(taskOf).filter((t) => t === "waiter").length, 1);
    assertEquals(keyRows(h), []);
  });
});

Deno.test("agent concurrency: the caller's abort cancels its waiting run, a step timeout fails it, a shutdown keeps it", async () => {
  await withHarness([PER_CUSTOMER], async (h, model) => {
    const gate = gatedModel(model);
    const holder = await start(h, "holder", { customer: "acme" });
    await model.waitForRequests(1);
    const abort = new AbortController();
    const waiter = await h.service.start({
      agent: "Support",
      environment: "default",
      task: "waiter",
      variables: { customer: "acme" },
      signal: abort.signal,
    });
    assertEquals(waiter.run.status, "waiting_for_concurrency");
    abort.abort();
    const ended = await waiter.done;
    assertEquals([ended.status, JSON.parse(ended.error!).code], ["canceled", "canceled"]);
    assertEquals(keyRows(h).find((k) => k.key === "agent:default/Support/acme")?.waiting, 0);
    // A step's timeout ends its waiting run as timed out; the station stopping leaves it waiting.
    const timedOut = new AbortController();
    const late = await start(h, "late", { customer: "acme" }, undefined, timedOut.signal);
    timedOut.abort(new StationError("step_timeout", "step ask passed its timeout"));
    const lateEnd = await late.done;
    assertEquals([lateEnd.status, lateEnd.finish_reason, JSON.parse(lateEnd.error!).code], [
      "failed",
      "timeout",
      "agent_timeout",
    ]);
    const stopping = new AbortController();
    const kept = await start(h, "kept", { customer: "acme" }, undefined, stopping.signal);
    stopping.abort(new StationError("shutdown", "station stopping"));
    assertEquals((await kept.done).status, "waiting_for_concurrency");
    h.service.cancel(kept.run.id);
    gate.release("holder");
    assertEquals((await holder.done).status, "completed");
    assertEquals(model.requests.map(taskOf), ["holder"], "the canceled run never called the model");
    assertEquals(keyRows(h), []);
  });
});
