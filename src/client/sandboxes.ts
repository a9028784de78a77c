import type { StationClient } from "./http.ts";
import type { ExecResult, FileEntry } from "../sandbox/backend.ts";
import type { RunResult, SessionView } from "../sandbox/service.ts";
import type { FileInfo } from "../files/store.ts";
import { StationError } from "../errors.ts";

const base = (id: string) => `/api/v1/sandboxes/${encodeURIComponent(id)}`;
// Each segment is encoded; an absolute path keeps its leading "/" as %2F so the server sees it (and
// rejects it unless it is under /workspace) instead of it being silently made relative.
const filesPath = (id: string, path: string) =>
  `${base(id)}/files/${path.startsWith("/") ? "%2F" : ""}${
    path.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/")
  }`;

/** What opening a sandbox returns. */
export interface OpenResult {
  sandbox_id: string;
  image: string;
  workdir: string;
  created: boolean;
  session: SessionView;
}

/** POST /api/v1/sandboxes */
export function openSandbox(client: StationClient, body: Record<string, unknown>): Promise<OpenResult> {
  return client.json("POST", "/api/v1/sandboxes", { body, signal: AbortSignal.timeout(10 * 60_000) });
}

/** GET /api/v1/sandboxes */
export async function listSandboxes(client: StationClient, all = false): Promise<SessionView[]> {
  return (await client.json<{ sandboxes: SessionView[] }>("GET", "/api/v1/sandboxes", { query: { all } }))
    .sandboxes;
}

/** DELETE /api/v1/sandboxes/:id */
export function closeSandbox(client: StationClient, id: string): Promise<SessionView> {
  return client.json("DELETE", base(id));
}

/** One event of a streamed exec: output as text and as its exact bytes. */
export type ExecEvent =
  | { type: "stdout" | "stderr"; data: string; bytes: Uint8Array }
  | { type: "result"; result: ExecResult };

/** POST …/exec?stream=1: calls onEvent for output as it comes; resolves with the result. */
export async function execStreaming(
  client: StationClient,
  id: string,
  body: Record<string, unknown>,
  onEvent: (e: ExecEvent) => void,
  signal?: AbortSignal,
): Promise<ExecResult> {
  const res = await client.fetch("POST", `${base(id)}/exec`, {
    query: { stream: 1 },
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (event === "stdout" || event === "stderr") {
        const chunk = JSON.parse(data) as { data: string; data_b64?: string };
        const bytes = chunk.data_b64 !== undefined
          ? Uint8Array.from(atob(chunk.data_b64), (ch) => ch.charCodeAt(0))
          : new TextEncoder().encode(chunk.data);
        onEvent({ type: event, data: chunk.data, bytes });
      } else if (event === "result") {
        const result = JSON.parse(data) as ExecResult;
        onEvent({ type: "result", result });
        return result;
      } else if (event === "error") {
        const e = JSON.parse(data).error;
        throw new StationError(e.code, e.message, { hint: e.hint, details: e.details });
      }
    }
  }
  throw new StationError("stream_ended", "the exec stream ended without a result", {
    hint: "the server may have stopped; check `stn status`",
  });
}

/** PUT …/files/<path> */
export async function writeSandboxFile(
  client: StationClient,
  id: string,
  path: string,
  bytes: Uint8Array,
): Promise<{ ok: true; path: string }> {
  const res = await client.fetch("PUT", filesPath(id, path), {
    body: bytes as BodyInit,
    headers: { "content-type": "application/octet-stream" },
  });
  return await res.json();
}

/** GET …/files/<path>: the response streams the bytes. */
export function readSandboxFile(client: StationClient, id: string, path: string): Promise<Response> {
  return client.fetch("GET", filesPath(id, path));
}

/** GET …/files?path=&recursive= */
export async function listSandboxFiles(
  client: StationClient,
  id: string,
  path: string | undefined,
  recursive: boolean,
): Promise<FileEntry[]> {
  return (await client.json<{ entries: FileEntry[] }>("GET", `${base(id)}/files`, {
    query: { path, recursive },
  }))
    .entries;
}

/** DELETE …/files/<path> */
export async function deleteSandboxFile(client: StationClient, id: string, path: string, recursive: boolean) {
  await client.json("DELETE", filesPath(id, path), { query: { recursive } });
}

/** POST …/stage */
export function stageFile(
  client: StationClient,
  id: string,
  fileKey: string,
  destination: string,
): Promise<{ ok: true; path: string; size_bytes: number }> {
  return client.json("POST", `${base(id)}/stage`, {
    body: { file_key: fileKey, destination },
    signal: AbortSignal.timeout(30 * 60_000),
  });
}

/** POST …/publish */
export function publishFile(
  client: StationClient,
  id: string,
  source: string,
  fileKey?: string,
  overwrite?: boolean,
): Promise<{ ok: true; file_key: string; size_bytes: number; file: FileInfo }> {
  return client.json("POST", `${base(id)}/publish`, {
    body: { source, file_key: fileKey, overwrite },
    signal: AbortSignal.timeout(30 * 60_000),
  });
}

/** POST /api/v1/sandbox/run */
export function runCode(client: StationClient, body: Record<string, unknown>): Promise<RunResult> {
  return client.json("POST", "/api/v1/sandbox/run", { body, signal: AbortSignal.timeout(24 * 3_600_000) });
}
