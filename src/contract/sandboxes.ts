/** The contract of /api/v1/sandboxes: sessions, exec, workspace files, compute-mode runs. */

import { z } from "zod";
import { FileInfo } from "./files.ts";

/** A sandbox session. */
export const Sandbox = z.looseObject({
  id: z.string(),
  container_id: z.string(),
  image: z.string(),
  runtime: z.string().nullable(),
  scope: z.enum(["workflow", "agent"]),
  run_id: z.string().nullable(),
  network: z.boolean(),
  status: z.enum(["open", "closed"]),
  created_at: z.string(),
  last_used_at: z.string(),
  closed_at: z.string().nullable(),
  close_reason: z.string().nullable(),
  workdir: z.string(),
}).meta({ id: "Sandbox" });
export type Sandbox = z.infer<typeof Sandbox>;

/** POST /api/v1/sandboxes: 201 when a container was created, 200 when an open one was reused. */
export const OpenResult = z.looseObject({
  sandbox_id: z.string(),
  image: z.string(),
  workdir: z.string(),
  created: z.boolean(),
  session: Sandbox,
}).meta({ id: "SandboxOpenResult" });
export type OpenResult = z.infer<typeof OpenResult>;

/** The outcome of a command. */
/** One `stdout`/`stderr` event of a streamed exec: the chunk as text, and its exact bytes when not UTF-8. */
export const OutputChunk = z.object({ data: z.string(), data_b64: z.string().optional() });

export const ExecResult = z.looseObject({
  exit_code: z.number(),
  stdout: z.string(),
  stderr: z.string(),
  stdout_b64: z.string().optional().describe("stdout's exact bytes, base64, when they are not UTF-8"),
  stderr_b64: z.string().optional().describe("stderr's exact bytes, base64, when they are not UTF-8"),
  truncated: z.boolean().describe("either stream went over the cap"),
  stdout_truncated: z.boolean(),
  stderr_truncated: z.boolean(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
}).meta({ id: "ExecResult" });
export type ExecResult = z.infer<typeof ExecResult>;

export const RunResult = ExecResult.extend({ runtime: z.string(), image: z.string() }).meta({
  id: "RunResult",
});
export type RunResult = z.infer<typeof RunResult>;

export const FileEntry = z.looseObject({
  path: z.string(),
  type: z.enum(["file", "dir", "symlink", "other"]),
  size: z.number(),
  mode: z.string().describe('permission bits in octal, e.g. "644"'),
  mtime: z.string(),
}).meta({ id: "SandboxFileEntry" });
export type FileEntry = z.infer<typeof FileEntry>;

export const SandboxList = z.looseObject({ sandboxes: z.array(Sandbox) }).meta({ id: "SandboxList" });
export const FileEntryList = z.looseObject({ entries: z.array(FileEntry) }).meta({ id: "SandboxFileList" });
export type FileEntryList = z.infer<typeof FileEntryList>;
export const WrittenFile = z.looseObject({ ok: z.literal(true), path: z.string() });
export const DeletedPath = z.looseObject({ ok: z.literal(true), deleted: z.string() });
export const StagedFile = z.looseObject({ ok: z.literal(true), path: z.string(), size_bytes: z.number() })
  .meta({ id: "StagedFile" });
export type StagedFile = z.infer<typeof StagedFile>;
export const PublishedFile = z.looseObject({
  ok: z.literal(true),
  file_key: z.string(),
  size_bytes: z.number(),
  file: FileInfo,
}).meta({ id: "PublishedFile" });
export type PublishedFile = z.infer<typeof PublishedFile>;
export const ToolList = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string(), description: z.string(), input_schema: z.unknown() })),
}).meta({ id: "SandboxToolList" });

const env = z.record(z.string(), z.string()).describe("environment variables for the command");
const timeoutSeconds = z.int().min(1).max(86_400).describe("kill the command after this many seconds");

const path = z.string().min(1).describe("a path inside /workspace (relative to it, or absolute under it)");

// The sandbox tools check these again, as they check a model's call.
export const RunBody = z.strictObject({
  code: z.string().min(1).describe("the program: python, javascript or a bash script"),
  runtime: z.string().optional(),
  image: z.string().optional(),
  files: z.record(z.string(), z.string()).optional().describe("extra files (path → text) written first"),
  args: z.array(z.string()).optional(),
  env: env.optional(),
  timeout_seconds: timeoutSeconds.optional(),
}).meta({ id: "SandboxRunBody" });
export const OpenBody = z.strictObject({
  runtime: z.string().optional(),
  image: z.string().optional(),
  network: z.boolean().optional(),
  scope: z.enum(["workflow", "agent"]).optional(),
  run_id: z.string().min(1).optional().describe("the workflow run a workflow-scoped sandbox belongs to"),
}).meta({ id: "SandboxOpenBody" });
export const ExecBody = z.strictObject({
  cmd: z.union([z.array(z.string()).min(1), z.string().min(1)]).describe(
    "argv list, or a shell string run with /bin/sh -c",
  ),
  cwd: path.optional(),
  env: env.optional(),
  timeout_seconds: timeoutSeconds.optional(),
}).meta({ id: "SandboxExecBody" });
export const StageBody = z.strictObject({ file_key: z.string().min(1), destination: path })
  .meta({ id: "SandboxStageBody" });
export const PublishBody = z.strictObject({
  source: path,
  file_key: z.string().min(1).optional(),
  overwrite: z.boolean().optional().describe(
    "replace the key if it exists: only under the sandbox's own scope (sessions/<id>/, runs/<run>/output/)",
  ),
  ttl: z.string().optional().describe(
    'how long the file lives, e.g. "24h"; "0" keeps it (default: with the sandbox under sessions/<id>/, ' +
      "storage.run_output_ttl under runs/<run>/output/, else storage.default_ttl)",
  ),
}).meta({ id: "SandboxPublishBody" });

/** A yes/no query flag: "1" or "true" is yes, anything else no. */
const flag = z.string().optional();
export const SandboxListQuery = z.object({ all: flag.describe("include closed sandboxes") });
export const ExecQuery = z.object({
  stream: flag.describe("answer as SSE: stdout/stderr events, then result"),
});
export const ListFilesQuery = z.object({ path: z.string().optional(), recursive: flag });
export const WriteFileQuery = z.object({
  mode: z.string().optional().describe("octal permissions like 644"),
});
export const DeleteFileQuery = z.object({ recursive: flag });
/** POST /api/v1/sandbox/tools/{name}: a tool's input, checked by the tool itself as a model's call is. */
export const ToolInput = z.record(z.string(), z.unknown()).meta({ id: "SandboxToolInput" });
export const ToolOutput = z.record(z.string(), z.unknown()).meta({ id: "SandboxToolOutput" });
export const ToolNameParam = z.object({ name: z.string().min(1) });
export const SandboxIdParam = z.object({ id: z.string().min(1) });
export const SandboxPathParam = z.object({ id: z.string().min(1), path: z.string() });
