/** /api/v1/sandboxes: sessions, exec, workspace files and transfers; /api/v1/sandbox/run for compute mode. */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import {
  DeletedPath,
  DeleteFileQuery,
  ExecBody,
  ExecQuery,
  ExecResult,
  FileEntryList,
  ListFilesQuery,
  OpenBody,
  OpenResult,
  PublishBody,
  PublishedFile,
  RunBody,
  RunResult,
  Sandbox,
  SandboxIdParam,
  SandboxList,
  SandboxListQuery,
  SandboxPathParam,
  StageBody,
  StagedFile,
  ToolInput,
  ToolList,
  ToolNameParam,
  ToolOutput,
  WriteFileQuery,
  WrittenFile,
} from "../../contract/sandboxes.ts";
import { errorMessage, StationError } from "../../errors.ts";
import type { StationContext } from "../../context.ts";
import { requireSandbox } from "../../sandbox/required.ts";
import {
  callTool,
  SANDBOX_TOOLS,
  sandboxClose,
  sandboxExec,
  sandboxFsList,
  sandboxOpen,
  sandboxPublishFile,
  sandboxRun,
  sandboxStageFile,
  type SandboxTool,
  toolDefinitions,
} from "../../sandbox/tools.ts";
import { errors, json, openapi, router } from "../openapi.ts";

const flag = (v: string | undefined) => v === "1" || v === "true";

/** The workspace path addressed by …/files/<path…> (percent-decoded). */
function filePath(c: Context): string {
  const path = new URL(c.req.url).pathname;
  const raw = path.slice(path.indexOf("/files/") + "/files/".length);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new StationError("invalid_request", `bad percent-encoding in ${JSON.stringify(raw)}`, {
      status: 400,
    });
  }
}

const tags = ["sandboxes"];
const byId = { params: SandboxIdParam };
// Workspace paths contain "/": the documented {path} is the rest of the path, so these routes match /*.
const wildcard = { path: "/sandboxes/:id/files/*" };
const body = <
  S extends typeof RunBody | typeof OpenBody | typeof ExecBody | typeof StageBody | typeof PublishBody,
>(
  schema: S,
) => ({ required: true, content: { "application/json": { schema } } });
const bytes = (description: string) => ({
  description,
  content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
});
const unavailable = ["sandbox_unavailable", "invalid_json", "invalid_request"] as const;
const inSandbox = [...unavailable, "sandbox_not_found", "sandbox_closed", "sandbox_gone"] as const;
const pathErrors = ["path_outside_workspace", "file_not_found", "is_a_directory", "not_a_directory"] as const;

const tools = createRoute({
  method: "get",
  path: "/sandbox/tools",
  tags,
  summary: "The sandbox tools as a model sees them (name, description, input JSON Schema)",
  responses: { 200: json(ToolList, "the tools") },
});
const callToolRoute = createRoute({
  method: "post",
  path: "/sandbox/tools/{name}",
  tags,
  summary: "Call a sandbox tool by name with its input (what a model's or an MCP client's tool call does)",
  request: {
    params: ToolNameParam,
    body: { required: true, content: { "application/json": { schema: ToolInput } } },
  },
  responses: {
    200: json(ToolOutput, "the tool's result (the shape of the route of the same operation)"),
    ...errors(
      ...inSandbox,
      ...pathErrors,
      "tool_not_found",
      "unknown_runtime",
      "image_not_allowed",
      "sandbox_disk_full",
    ),
  },
});
const runCode = createRoute({
  method: "post",
  path: "/sandbox/run",
  tags,
  summary: "Run code once in a fresh container (compute mode)",
  request: { body: body(RunBody) },
  responses: {
    200: json(RunResult, "the exit code and output"),
    ...errors(...unavailable, "unknown_runtime", "image_not_allowed", "image_unavailable"),
  },
});
const open = createRoute({
  method: "post",
  path: "/sandboxes",
  tags,
  summary: "Open a sandbox (or reuse the open one of the same scope)",
  request: { body: { content: { "application/json": { schema: OpenBody } } } },
  responses: {
    201: json(OpenResult, "a container was created"),
    200: json(OpenResult, "an open sandbox was reused"),
    ...errors(
      ...unavailable,
      "unknown_runtime",
      "image_not_allowed",
      "network_not_allowed",
      "run_id_required",
    ),
  },
});
const list = createRoute({
  method: "get",
  path: "/sandboxes",
  tags,
  summary: "List open sandboxes (?all=1: closed ones too)",
  request: { query: SandboxListQuery },
  responses: { 200: json(SandboxList, "the sandboxes"), ...errors("sandbox_unavailable") },
});
const get = createRoute({
  method: "get",
  path: "/sandboxes/{id}",
  tags,
  summary: "A sandbox",
  request: byId,
  responses: { 200: json(Sandbox, "the sandbox"), ...errors("sandbox_unavailable", "sandbox_not_found") },
});
const close = createRoute({
  method: "delete",
  path: "/sandboxes/{id}",
  tags,
  summary: "Close a sandbox: its container and workspace are removed",
  request: byId,
  responses: { 200: json(Sandbox, "the closed sandbox"), ...errors(...inSandbox) },
});
const exec = createRoute({
  method: "post",
  path: "/sandboxes/{id}/exec",
  tags,
  summary: "Run a command in a sandbox; ?stream=1 answers SSE (stdout/stderr events, then result or error)",
  request: { ...byId, query: ExecQuery, body: body(ExecBody) },
  responses: {
    200: {
      description: "the result (JSON), or with ?stream=1 the SSE stream",
      content: {
        "application/json": { schema: ExecResult },
        "text/event-stream": { schema: { type: "string" as const } },
      },
    },
    ...errors(...inSandbox, "invalid_command", "sandbox_not_running", "exec_canceled"),
  },
});
const listFiles = createRoute({
  method: "get",
  path: "/sandboxes/{id}/files",
  tags,
  summary: "List a workspace directory",
  request: { ...byId, query: ListFilesQuery },
  responses: { 200: json(FileEntryList, "the entries"), ...errors(...inSandbox, ...pathErrors) },
});
const byPath = { params: SandboxPathParam };
const writeFile = createRoute({
  method: "put",
  path: "/sandboxes/{id}/files/{path}",
  tags,
  summary: "Write the raw body to a workspace file (streamed when Content-Length is sent)",
  request: { ...byPath, query: WriteFileQuery, body: { required: true, ...bytes("the file's bytes") } },
  responses: {
    200: json(WrittenFile, "written"),
    ...errors(...inSandbox, ...pathErrors, "size_mismatch", "file_too_large", "sandbox_disk_full"),
  },
});
const readFile = createRoute({
  method: "get",
  path: "/sandboxes/{id}/files/{path}",
  tags,
  summary: "Read a workspace file",
  request: byPath,
  responses: { 200: bytes("the file's bytes"), ...errors(...inSandbox, ...pathErrors, "file_too_large") },
});
const deleteFile = createRoute({
  method: "delete",
  path: "/sandboxes/{id}/files/{path}",
  tags,
  summary: "Delete a workspace file (?recursive=1 for a directory)",
  request: { ...byPath, query: DeleteFileQuery },
  responses: { 200: json(DeletedPath, "deleted"), ...errors(...inSandbox, ...pathErrors) },
});
const stage = createRoute({
  method: "post",
  path: "/sandboxes/{id}/stage",
  tags,
  summary: "Copy a file from the file store into the workspace",
  request: { ...byId, body: body(StageBody) },
  responses: {
    200: json(StagedFile, "staged"),
    ...errors(...inSandbox, ...pathErrors, "invalid_key", "sandbox_disk_full"),
  },
});
const publish = createRoute({
  method: "post",
  path: "/sandboxes/{id}/publish",
  tags,
  summary: "Copy a workspace file into the file store",
  request: { ...byId, body: body(PublishBody) },
  responses: {
    201: json(PublishedFile, "published"),
    ...errors(...inSandbox, ...pathErrors, "invalid_key", "storage_quota_exceeded"),
  },
});

/**
 * Sandbox routes (mounted at /api/v1): /sandboxes… for sessions, /sandbox/run for compute mode.
 * Each route calls the same tool handler a model would.
 */
export function sandboxRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const call = async (t: SandboxTool, input: unknown, c: Context) =>
    await callTool(t, input, { sandbox: requireSandbox(ctx), signal: c.req.raw.signal });

  openapi(app, tools, (c) => c.json({ tools: toolDefinitions() }, 200));
  openapi(app, callToolRoute, async (c) => {
    const { name } = c.req.valid("param");
    const t = SANDBOX_TOOLS.find((t) => t.name === name);
    if (!t) {
      throw new StationError("tool_not_found", `no sandbox tool ${name}`, {
        hint: `the tools are ${SANDBOX_TOOLS.map((t) => t.name).join(", ")} (GET /api/v1/sandbox/tools)`,
      });
    }
    return c.json(await call(t, c.req.valid("json"), c) as Record<string, unknown>, 200);
  });
  openapi(
    app,
    runCode,
    async (c) => c.json(await call(sandboxRun, c.req.valid("json"), c) as RunResult, 200),
  );

  openapi(app, open, async (c) => {
    const out = await call(sandboxOpen, c.req.valid("json"), c) as OpenResult;
    return out.created ? c.json(out, 201) : c.json(out, 200);
  });
  openapi(
    app,
    list,
    (c) => c.json({ sandboxes: requireSandbox(ctx).list(flag(c.req.valid("query").all)) }, 200),
  );
  openapi(app, get, (c) => c.json(requireSandbox(ctx).get(c.req.valid("param").id), 200));
  openapi(app, close, async (c) => {
    const { id } = c.req.valid("param");
    await call(sandboxClose, { sandbox_id: id }, c);
    return c.json(requireSandbox(ctx).list(true).find((s) => s.id === id)!, 200);
  });

  openapi(app, exec, async (c) => {
    const input = { ...c.req.valid("json"), sandbox_id: c.req.valid("param").id };
    if (!flag(c.req.valid("query").stream)) {
      return c.json(await call(sandboxExec, input, c) as ExecResult, 200);
    }
    // SSE: `stdout`/`stderr` events as output comes, then one `result` (or `error`) event. Each output
    // event has the chunk as text (`data`) and its exact bytes (`data_b64`).
    return streamSSE(c, async (sse) => {
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      let writes = Promise.resolve();
      try {
        const result = await callTool(sandboxExec, input, {
          sandbox: requireSandbox(ctx),
          signal: c.req.raw.signal,
          onOutput: (stream, chunk) => {
            const data = decoders[stream].decode(chunk, { stream: true });
            const b64 = Buffer.from(chunk).toString("base64");
            writes = writes.then(() =>
              sse.writeSSE({ event: stream, data: JSON.stringify({ data, data_b64: b64 }) })
            );
          },
        });
        await writes;
        await sse.writeSSE({ event: "result", data: JSON.stringify(result) });
      } catch (err) {
        await writes;
        const e = err instanceof StationError ? err : new StationError("internal_error", errorMessage(err));
        await sse.writeSSE({ event: "error", data: JSON.stringify(e.toBody()) });
      }
    });
  });

  openapi(app, listFiles, async (c) => {
    const q = c.req.valid("query");
    const input = {
      sandbox_id: c.req.valid("param").id,
      path: q.path || undefined,
      recursive: flag(q.recursive),
    };
    return c.json(await call(sandboxFsList, input, c) as FileEntryList, 200);
  });
  openapi(app, writeFile, async (c) => {
    const sandbox = requireSandbox(ctx);
    const id = c.req.param("id")!;
    const path = filePath(c);
    const mode = c.req.valid("query").mode;
    if (mode !== undefined && !/^0?[0-7]{3}$/.test(mode)) {
      throw new StationError("invalid_request", `invalid mode ${JSON.stringify(mode)}`, {
        status: 400,
        hint: "octal permissions like 644 or 0755",
      });
    }
    const fileMode = mode ? parseInt(mode, 8) : undefined;
    const length = c.req.header("content-length");
    const body = c.req.raw.body;
    if (length !== undefined && body) {
      // Announced size: streamed straight into the container.
      await sandbox.writeFile(id, path, {
        data: Readable.fromWeb(body as NodeReadableStream<Uint8Array>),
        size: Number(length),
        mode: fileMode,
      });
    } else {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      await sandbox.writeFile(id, path, { data: bytes, size: bytes.length, mode: fileMode });
    }
    return c.json({ ok: true as const, path }, 200);
  }, { ...wildcard, body: "raw" });
  openapi(app, readFile, async (c) => {
    const file = await requireSandbox(ctx).readFile(c.req.param("id")!, filePath(c));
    const headers = { "content-type": "application/octet-stream", "content-length": String(file.size) };
    // Hono answers HEAD with this handler but drops the body unread: close the reader ourselves.
    if (c.req.method === "HEAD") {
      file.stream.destroy();
      return new Response(null, { headers });
    }
    // A file that shrinks while it streams fails the stream, which cuts the response off short of
    // its Content-Length: the client sees an error, never a complete-looking short 200.
    return new Response(Readable.toWeb(file.stream) as ReadableStream<Uint8Array>, { headers });
  }, wildcard);
  openapi(app, deleteFile, async (c) => {
    const path = filePath(c);
    await requireSandbox(ctx).deleteFile(c.req.param("id")!, path, flag(c.req.valid("query").recursive));
    return c.json({ ok: true as const, deleted: path }, 200);
  }, wildcard);

  openapi(app, stage, async (c) => {
    const input = { ...c.req.valid("json"), sandbox_id: c.req.valid("param").id };
    return c.json(await call(sandboxStageFile, input, c) as StagedFile, 200);
  });
  openapi(app, publish, async (c) => {
    const input = { ...c.req.valid("json"), sandbox_id: c.req.valid("param").id };
    return c.json(await call(sandboxPublishFile, input, c) as PublishedFile, 201);
  });
  return app;
}
