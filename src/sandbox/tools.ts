/** The sandbox tools models get (run, exec, files): names, descriptions, input schemas and handlers. */

import { Buffer } from "node:buffer";
import { z } from "zod";
import { parseDuration } from "../lib/duration.ts";
import { parseWith } from "../lib/parse.ts";
import { StationError } from "../errors.ts";
import type { OutputStream } from "./backend.ts";
import type { SandboxService } from "./service.ts";

/** What a tool handler gets besides its input. */
export interface ToolContext {
  sandbox: SandboxService;
  /** Aborting cancels the call (a running command is killed). */
  signal?: AbortSignal;
  /** Receives command output as it comes. */
  onOutput?: (stream: OutputStream, chunk: Uint8Array) => void;
}

/** A tool ready to hand to a model: name, description, input schema and handler. */
export interface SandboxTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  // A method, so its input is checked bivariantly: a list of tools holds each tool's own input type.
  handler(input: z.infer<S>, ctx: ToolContext): Promise<unknown>;
}

const sandboxId = z.string().regex(
  /^sbx_[0-9A-HJKMNP-TV-Z]{26}$/,
  "a sandbox id (sbx_<ULID>) from sandbox_open",
)
  .describe("the sandbox, from sandbox_open");
const env = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"), z.string())
  .describe("environment variables for the command");
const timeoutSeconds = z.int().min(1).max(86_400).describe("kill the command after this many seconds");
const path = z.string().min(1).describe("a path inside /workspace (relative to it, or absolute under it)");
const publishTtl = z.string().refine((v) => parseDuration(v) !== null, 'a duration like "30m", "24h" or "7d"')
  .optional().describe(
    "how long the published file lives, e.g. 24h; 0 keeps it (default: with the sandbox under sessions/<id>/, " +
      "storage.run_output_ttl under runs/<run>/output/, else storage.default_ttl)",
  );

function tool<S extends z.ZodType>(t: SandboxTool<S>): SandboxTool<S> {
  return t;
}

const ms = (seconds?: number) => seconds === undefined ? undefined : seconds * 1000;

export const sandboxRun = tool({
  name: "sandbox_run",
  description:
    "Run a piece of code once in a fresh, isolated container (no network) and return its exit code, " +
    "stdout and stderr. Nothing persists between calls; use sandbox_open for a workspace that does.",
  input: z.strictObject({
    code: z.string().min(1).describe("the program: python, javascript or a bash script"),
    runtime: z.string().optional().describe("python, node or bash (default: the station's default runtime)"),
    image: z.string().optional().describe("an allowed image instead of the runtime's default"),
    files: z.record(z.string(), z.string()).optional().describe("extra files (path → text) written first"),
    args: z.array(z.string()).optional().describe("arguments passed to the program"),
    env: env.optional(),
    timeout_seconds: timeoutSeconds.optional(),
  }),
  handler: (input, ctx) =>
    ctx.sandbox.run({
      ...input,
      timeout_ms: ms(input.timeout_seconds),
      signal: ctx.signal,
      onOutput: ctx.onOutput,
    }),
});

export const sandboxOpen = tool({
  name: "sandbox_open",
  description:
    "Open a persistent sandbox: a container with an empty /workspace that keeps files between calls. " +
    "Returns sandbox_id for the other sandbox_* tools.",
  input: z.strictObject({
    runtime: z.string().optional().describe("python, node or bash (picks the image)"),
    image: z.string().optional().describe("an allowed image instead of the runtime's default"),
    network: z.boolean().optional().describe("ask for network access (only if the station allows it)"),
    scope: z.enum(["workflow", "agent"]).optional().describe(
      "workflow: one container shared by a whole run (needs run_id); agent (default): this caller's own",
    ),
    run_id: z.string().min(1).optional().describe("the workflow run a workflow-scoped sandbox belongs to"),
  }),
  handler: async (input, ctx) => {
    const { session, created } = await ctx.sandbox.open(input);
    return { sandbox_id: session.id, image: session.image, workdir: session.workdir, created, session };
  },
});

export const sandboxExec = tool({
  name: "sandbox_exec",
  description:
    "Run a command in a sandbox: an argv list (run as is) or a shell string (run with /bin/sh -c). " +
    "Returns exit_code, stdout, stderr, duration_ms, and truncated when output went over the cap.",
  input: z.strictObject({
    sandbox_id: sandboxId,
    cmd: z.union([z.array(z.string()).min(1), z.string().min(1)]).describe("argv list or shell string"),
    cwd: path.optional(),
    env: env.optional(),
    timeout_seconds: timeoutSeconds.optional(),
  }),
  handler: (input, ctx) =>
    ctx.sandbox.exec(input.sandbox_id, {
      cmd: input.cmd,
      cwd: input.cwd,
      env: input.env,
      timeout_ms: ms(input.timeout_seconds),
      signal: ctx.signal,
      onOutput: ctx.onOutput,
    }),
});

export const sandboxFsWrite = tool({
  name: "sandbox_fs_write",
  description:
    "Write a file in the sandbox workspace (parent directories are created). Give text as contents " +
    "or bytes as contents_b64.",
  input: z.strictObject({
    sandbox_id: sandboxId,
    path,
    contents: z.string().optional().describe("the file's text (UTF-8)"),
    contents_b64: z.string().optional().describe("the file's bytes, base64"),
    mode: z.string().regex(/^0?[0-7]{3}$/, "octal permissions like 644 or 0755").optional().describe(
      "permissions (default 644)",
    ),
  }),
  handler: async (input, ctx) => {
    if ((input.contents === undefined) === (input.contents_b64 === undefined)) {
      throw new StationError("invalid_request", "give exactly one of contents and contents_b64", {
        status: 400,
        exitCode: 2,
      });
    }
    const bytes = input.contents !== undefined
      ? new TextEncoder().encode(input.contents)
      : Buffer.from(input.contents_b64!, "base64");
    const mode = input.mode ? parseInt(input.mode, 8) : undefined;
    await ctx.sandbox.writeFile(input.sandbox_id, input.path, { data: bytes, size: bytes.length, mode });
    return { ok: true, path: input.path, size_bytes: bytes.length };
  },
});

export const sandboxFsRead = tool({
  name: "sandbox_fs_read",
  description: "Read a file from the sandbox workspace. Text comes back as contents, other bytes as " +
    "contents_b64; truncated is true when the file is longer than max_bytes.",
  input: z.strictObject({
    sandbox_id: sandboxId,
    path,
    max_bytes: z.int().min(1).optional().describe("return at most this many bytes (default 256 KiB)"),
  }),
  handler: async (input, ctx) => {
    const max = input.max_bytes ?? 256 * 1024;
    const file = await ctx.sandbox.readFile(input.sandbox_id, input.path);
    const chunks: Buffer[] = [];
    let kept = 0;
    for await (const chunk of file.stream) {
      const b = chunk as Buffer;
      chunks.push(b.subarray(0, Math.max(0, max - kept)));
      kept += Math.min(b.length, Math.max(0, max - kept));
      if (kept >= max) {
        file.stream.destroy();
        break;
      }
    }
    const bytes = Buffer.concat(chunks);
    const text = decodeUtf8(bytes);
    return {
      path: input.path,
      ...(text !== undefined ? { contents: text } : { contents_b64: bytes.toString("base64") }),
      size_bytes: file.size,
      returned_bytes: bytes.length,
      truncated: file.size > bytes.length,
    };
  },
});

export const sandboxFsList = tool({
  name: "sandbox_fs_list",
  description: "List a directory of the sandbox workspace (recursive on request).",
  input: z.strictObject({
    sandbox_id: sandboxId,
    path: path.optional().describe("directory to list (default: /workspace)"),
    recursive: z.boolean().optional(),
  }),
  handler: async (input, ctx) => ({
    entries: await ctx.sandbox.listFiles(input.sandbox_id, input.path ?? ".", input.recursive ?? false),
  }),
});

export const sandboxFsDelete = tool({
  name: "sandbox_fs_delete",
  description: "Delete a file, or a directory with recursive, from the sandbox workspace.",
  input: z.strictObject({ sandbox_id: sandboxId, path, recursive: z.boolean().optional() }),
  handler: async (input, ctx) => {
    await ctx.sandbox.deleteFile(input.sandbox_id, input.path, input.recursive ?? false);
    return { ok: true, deleted: input.path };
  },
});

export const sandboxStageFile = tool({
  name: "sandbox_stage_file",
  description: "Copy a file from the station's file store (a key like files/f_… from `stn files upload`) " +
    "into the sandbox workspace. Use this for inputs too large to pass as text.",
  input: z.strictObject({
    sandbox_id: sandboxId,
    file_key: z.string().min(1).describe("the file store key (or an upload id f_…)"),
    destination: path,
  }),
  handler: async (input, ctx) => ({
    ok: true,
    ...(await ctx.sandbox.stage(input.sandbox_id, input.file_key, input.destination)),
  }),
});

export const sandboxPublishFile = tool({
  name: "sandbox_publish_file",
  description:
    "Copy a file from the sandbox workspace into the station's file store, where users download it " +
    "(`stn files download KEY`). Returns its file_key. Any new key may be created; an existing key is " +
    "replaced only under this sandbox's own scope (sessions/<sandbox>/…, runs/<its run>/output/…) and " +
    "only with overwrite: true.",
  input: z.strictObject({
    sandbox_id: sandboxId,
    source: path,
    file_key: z.string().min(1).optional().describe(
      "key to store under (default runs/<run>/output/<name> in a run, else sessions/<sandbox>/<path>)",
    ),
    overwrite: z.boolean().optional().describe(
      "replace the key if it exists (only allowed under this sandbox's own scope)",
    ),
    ttl: publishTtl,
  }),
  handler: async (input, ctx) => {
    const ttlMs = input.ttl === undefined ? undefined : parseDuration(input.ttl) ?? undefined;
    const info = await ctx.sandbox.publish(input.sandbox_id, input.source, {
      key: input.file_key,
      overwrite: input.overwrite,
      ttlMs,
    });
    return { ok: true, file_key: info.key, size_bytes: info.size_bytes, file: info };
  },
});

export const sandboxClose = tool({
  name: "sandbox_close",
  description: "Close a sandbox: its container and workspace are removed.",
  input: z.strictObject({ sandbox_id: sandboxId }),
  handler: async (input, ctx) => {
    await ctx.sandbox.close(input.sandbox_id);
    return { ok: true };
  },
});

/** The tools that work in an open session (by its `sandbox_id`), short of closing it: an agent's code mode. */
export const SESSION_TOOLS: readonly SandboxTool<z.ZodObject>[] = [
  sandboxExec,
  sandboxFsWrite,
  sandboxFsRead,
  sandboxFsList,
  sandboxFsDelete,
  sandboxStageFile,
  sandboxPublishFile,
];

/** Every sandbox tool, in the order a model should read them. */
export const SANDBOX_TOOLS: readonly SandboxTool[] = [
  sandboxRun,
  sandboxOpen,
  ...SESSION_TOOLS,
  sandboxClose,
];

/** The tools as a model sees them: name, description and JSON Schema of the input. */
export function toolDefinitions(): { name: string; description: string; input_schema: unknown }[] {
  return SANDBOX_TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: z.toJSONSchema(t.input, { io: "input" }),
  }));
}

/** Validates a model's (or a client's) input and runs the tool; bad input is a 400 naming each problem. */
export async function callTool(t: SandboxTool, input: unknown, ctx: ToolContext): Promise<unknown> {
  return await t.handler(parseWith(t.input, input, t.name), ctx);
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
