import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals } from "../helpers/assert.ts";
import { toolJson, until } from "./helpers.ts";

/** A workflow that waits for a human, then greets. */
export const APPROVAL_WORKFLOW = `id: mcp-greet
inputSchema:
  type: object
  properties: { who: { type: string } }
  required: [who]
states:
  - id: hello
    type: inject
    data: { greeting: "hello \${who}" }
    next: ask
  - id: ask
    type: human_approval
    message: "greet \${who}?"
    next: done
  - id: done
    type: transform
    expression: "{'greeting': hello.greeting, 'by': ask.decided_by}"
`;

/** Calls a tool and answers its JSON, failing the test on a tool error. */
// deno-lint-ignore no-explicit-any -- a tool's JSON answer, which tests read field by field
export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  assert(!result.isError, `${name} failed: ${result.content?.[0]?.text}`);
  return toolJson(result);
}

/**
 * What every management transport must do (HTTP and stdio): list the tools, run a workflow to completion
 * through an approval, and upload and read files — all through MCP tool calls.
 */
export async function exerciseManagement(client: Client, tag: string): Promise<void> {
  const names = (await client.listTools()).tools.map((t: { name: string }) => t.name);
  for (
    const n of ["apply_workflow", "start_workflow_run", "approve_workflow_step", "upload_file", "sandbox_run"]
  ) {
    assert(names.includes(n), `tools/list lacks ${n}: ${names}`);
  }

  const saved = await call(client, "apply_workflow", { yaml: APPROVAL_WORKFLOW });
  assertEquals(saved.workflow.id, "mcp-greet");
  const run = await call(client, "start_workflow_run", { workflowId: "mcp-greet", input: { who: tag } });
  assertEquals(run.workflow_id, "mcp-greet");
  const { approvals } = await until(
    () => call(client, "list_workflow_approvals", { run_id: run.id, status: "pending" }),
    (a) => a.approvals.length === 1,
    "the pending approval",
  );
  const decided = await call(client, "approve_workflow_step", { id: approvals[0].id, actor: `ann-${tag}` });
  assertEquals(decided.status, "approved");
  const done = await until(
    () => call(client, "get_workflow_run", { runId: run.id }),
    (r) => r.status === "completed",
    "the run's end",
  );
  assertEquals(done.result, { greeting: `hello ${tag}`, by: `ann-${tag}` });
  const steps = await call(client, "get_workflow_run_steps", { runId: run.id });
  assertEquals(steps.steps.map((s: { step_id: string }) => s.step_id), ["hello", "ask", "done"]);

  const key = `files/mcp-${tag}.txt`;
  const up = await call(client, "upload_file", { key, content: `notes of ${tag}\n`, ttl: "1h" });
  assertEquals([up.file_key, up.size_bytes], [key, `notes of ${tag}\n`.length]);
  const down = await call(client, "download_file", { key });
  assertEquals(down.content, `notes of ${tag}\n`);
  const bytes = new Uint8Array([0, 159, 146, 150, 255]);
  const bin = await call(client, "upload_file", { content_b64: btoa(String.fromCharCode(...bytes)) });
  const back = await call(client, "download_file", { key: bin.file_key });
  assertEquals(back.content_b64, btoa(String.fromCharCode(...bytes)));
  assertEquals((await call(client, "get_file_info", { key })).size_bytes, up.size_bytes);
}
