import { Run } from "../../src/client/answers/runs.ts";
import { parseAnswer } from "../../src/client/http.ts";
import { sseMessages } from "../../src/client/sse.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";

/** A body that arrives in the given pieces, as a network would cut it. */
function body(...pieces: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of pieces) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

Deno.test("SSE: messages parse the same with CRLF, LF or CR line ends, whatever the chunking", async () => {
  const expected = [
    { id: "1", event: "step_started", data: '{"seq":1}' },
    { id: "2", event: "run_completed", data: "line one\nline two" },
  ];
  const text = 'id: 1\nevent: step_started\ndata: {"seq":1}\n\n: keep-alive\n\n' +
    "id: 2\nevent: run_completed\ndata: line one\ndata: line two\n\n";
  for (const eol of ["\n", "\r\n", "\r"]) {
    const framed = text.replaceAll("\n", eol);
    // Cut between the CR and the LF of a CRLF, and mid-field.
    const cuts = [framed.slice(0, 7), framed.slice(7, 24), framed.slice(24, 25), framed.slice(25)];
    const seen = await Array.fromAsync(await sseMessages(body(...cuts)));
    assertEquals(seen.map(({ id, event, data }) => ({ id, event, data })), expected, JSON.stringify(eol));
  }
});

Deno.test("client: an answer that does not match its contract is an invalid_response StationError naming the field", () => {
  const err = assertThrows(
    () => parseAnswer(Run, { id: "r1", status: "exploded" }, "GET /api/v1/workflow-runs/r1"),
    StationError,
  ) as StationError;
  assertEquals(err.code, "invalid_response");
  assert(err.message.startsWith("GET /api/v1/workflow-runs/r1: the answer does not match"), err.message);
  assert(err.message.includes("/status"), err.message);
  assert(err.hint);
});

Deno.test("client: an answer is checked as its contract's zod schema checks it, defaults filled in the same", async () => {
  const { Run: RunSchema } = await import("../../src/contract/runs.ts");
  const run = {
    id: "r1",
    run_id: "r1",
    workflow_id: "w",
    workflow_version: 1,
    status: "completed",
    input: { n: 1 },
    result: { n: 2 },
    error: null,
    created_at: "2026-11-26T00:00:00.000Z",
    updated_at: "2026-11-26T00:00:01.000Z",
    started_at: "2026-11-26T00:00:00.000Z",
    completed_at: null,
    trace_id: null,
    cost_usd: 0.25,
    parent_run_id: null,
    forked_from: null,
  };
  const mutations: Record<string, unknown>[] = [
    {},
    { status: "exploded" },
    { workflow_version: "1" },
    { workflow_version: null },
    { input: undefined },
    { id: 3 },
    { extra: true },
    { error: { code: "step_failed", message: "boom" } },
    { error: "boom" },
    { waiting_for: { key: "k", position: 1, reason: "rate_limit" } },
    { waiting_for: { key: "k", position: 1, reason: "later" } },
    { forks: ["r2"] },
    { forks: [2] },
    { cost_usd: undefined },
  ];
  for (const m of mutations) {
    const value = Object.fromEntries(Object.entries({ ...run, ...m }).filter(([, v]) => v !== undefined));
    const zod = RunSchema.safeParse(structuredClone(value));
    const checked = structuredClone(value);
    let ok = true;
    try {
      parseAnswer(Run, checked, "GET /r1");
    } catch {
      ok = false;
    }
    assertEquals(ok, zod.success, JSON.stringify(m));
    if (zod.success) assertEquals(checked, zod.data as unknown, JSON.stringify(m));
  }
});
