import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import { StationError } from "../../errors.ts";
import type { StationContext } from "../../runtime/context.ts";
import type { SandboxService } from "../../sandbox/service.ts";
import {
  callTool,
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
import { readJson } from "../validate.ts";
import { z } from "zod";

const flag = (v: string | undefined) => v === "1" || v === "true";

function service(ctx: StationContext): SandboxService {
  if (ctx.sandbox) return ctx.sandbox;
  throw new StationError("sandbox_unavailable", "sandboxes are not available on this station", {
    status: 503,
    hint: ctx.config.values.sandbox.enabled
      ? "the Docker Engine was not reachable when stn started: start dockerd (docker info), then restart stn"
      : "set sandbox.enabled: true in config.yaml",
  });
}

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

const Body = z.record(z.string(), z.unknown());

/**
 * Sandbox routes (mounted at /api/v1): /sandboxes… for sessions, /sandbox/run for compute mode.
 * Each route calls the same tool handler a model would.
 */
export function sandboxRoutes(ctx: StationContext): Hono {
  const app = new Hono();
  const call = async (t: SandboxTool<any>, input: unknown, c: Context) =>
    await callTool(t, input, { sandbox: service(ctx), signal: c.req.raw.signal });

  app.get("/sandbox/tools", (c) => c.json({ tools: toolDefinitions() }));
  app.post("/sandbox/run", async (c) => c.json(await call(sandboxRun, await readJson(c, Body), c)));

  app.post("/sandboxes", async (c) => {
    const out = await call(sandboxOpen, await readJson(c, Body), c) as { created: boolean };
    return c.json(out, out.created ? 201 : 200);
  });
  app.get("/sandboxes", (c) => c.json({ sandboxes: service(ctx).list(flag(c.req.query("all"))) }));
  app.get("/sandboxes/:id", (c) => c.json(service(ctx).get(c.req.param("id"))));
  app.delete("/sandboxes/:id", async (c) => {
    await call(sandboxClose, { sandbox_id: c.req.param("id") }, c);
    return c.json(service(ctx).list(true).find((s) => s.id === c.req.param("id")));
  });

  app.post("/sandboxes/:id/exec", async (c) => {
    const input = { ...await readJson(c, Body), sandbox_id: c.req.param("id") };
    if (!flag(c.req.query("stream"))) return c.json(await call(sandboxExec, input, c));
    // SSE: `stdout`/`stderr` events as output comes, then one `result` (or `error`) event. Each output
    // event has the chunk as text (`data`) and its exact bytes (`data_b64`).
    return streamSSE(c, async (sse) => {
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      let writes = Promise.resolve();
      try {
        const result = await callTool(sandboxExec, input, {
          sandbox: service(ctx),
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
        const e = err instanceof StationError
          ? err
          : new StationError("internal_error", (err as Error).message);
        await sse.writeSSE({ event: "error", data: JSON.stringify(e.toBody()) });
      }
    });
  });

  app.get("/sandboxes/:id/files", async (c) => {
    const input = {
      sandbox_id: c.req.param("id"),
      path: c.req.query("path") || undefined,
      recursive: flag(c.req.query("recursive")),
    };
    return c.json(await call(sandboxFsList, input, c));
  });
  app.put("/sandboxes/:id/files/*", async (c) => {
    const sandbox = service(ctx);
    const id = c.req.param("id");
    const path = filePath(c);
    const mode = c.req.query("mode");
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
      await sandbox.writeFile(id, path, Readable.fromWeb(body as never), Number(length), fileMode);
    } else {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      await sandbox.writeFile(id, path, bytes, bytes.length, fileMode);
    }
    return c.json({ ok: true, path });
  });
  app.get("/sandboxes/:id/files/*", async (c) => {
    const file = await service(ctx).readFile(c.req.param("id"), filePath(c));
    const headers = { "content-type": "application/octet-stream", "content-length": String(file.size) };
    // Hono answers HEAD with this handler but drops the body unread: close the reader ourselves.
    if (c.req.method === "HEAD") {
      file.stream.destroy();
      return new Response(null, { headers });
    }
    // A file that shrinks while it streams fails the stream, which cuts the response off short of
    // its Content-Length: the client sees an error, never a complete-looking short 200.
    return new Response(Readable.toWeb(file.stream) as ReadableStream<Uint8Array>, { headers });
  });
  app.delete("/sandboxes/:id/files/*", async (c) => {
    const path = filePath(c);
    await service(ctx).deleteFile(c.req.param("id"), path, flag(c.req.query("recursive")));
    return c.json({ ok: true, deleted: path });
  });

  app.post("/sandboxes/:id/stage", async (c) => {
    const input = { ...await readJson(c, Body), sandbox_id: c.req.param("id") };
    return c.json(await call(sandboxStageFile, input, c));
  });
  app.post("/sandboxes/:id/publish", async (c) => {
    const input = { ...await readJson(c, Body), sandbox_id: c.req.param("id") };
    return c.json(await call(sandboxPublishFile, input, c), 201);
  });
  return app;
}
